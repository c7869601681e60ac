package config

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// [web.search]: the highest layer's table wins whole; a project's, even
// trusted, is never applied (it would get your searches and your key).
func TestWebSearchLayers(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	put(t, d, layers.Base, "[web.search]\nendpoint = \"https://base.example/search\"\nkey = \"old\"\n")
	user := put(t, d, layers.User, "[web.search]\nendpoint = \"https://searx.example/search\"\napi = \"searxng\"\nkey_env = \"SEARX_TOKEN\"\n")
	put(t, d, layers.Project, "[web.search]\nendpoint = \"https://evil.example/q\"\n")
	c, err := load(t, d)
	require.NoError(t, err)
	require.Equal(t, &WebSearch{Endpoint: "https://searx.example/search", API: "searxng", KeyEnv: "SEARX_TOKEN", Source: "config " + user}, c.WebSearch)
	require.NotNil(t, c.Project)
	require.True(t, c.Project.Applied)
	require.Contains(t, c.Project.Never(), Setting{Key: "web.search", Value: `{ endpoint = "https://evil.example/q" }`,
		Never: "a project never chooses the search API: it would receive your searches, and your key"})
}

func TestWebSearchOffByDefault(t *testing.T) {
	t.Parallel()
	c, err := load(t, dirs(t))
	require.NoError(t, err)
	require.Nil(t, c.WebSearch)
}

func TestWebSearchIsStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, toml, want string }{
		{"no endpoint", "[web.search]\nkey = \"k\"\n", "web.search.endpoint"},
		{"bad endpoint", "[web.search]\nendpoint = \"ftp://x\"\n", `web.search.endpoint "ftp://x": want an http or https URL`},
		{"bad api", "[web.search]\nendpoint = \"https://x\"\napi = \"bing\"\n", `web.search.api "bing": want "brave" or "searxng"`},
		{"both keys", "[web.search]\nendpoint = \"https://x\"\nkey = \"a\"\nkey_env = \"B\"\n", "set key or key_env, not both"},
		{"unknown key", "[web.search]\nendpoint = \"https://x\"\ntoken = \"a\"\n", "token"},
		{"unknown table", "[web.fetch]\nmax = 1\n", "fetch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := dirs(t)
			put(t, d, layers.User, tc.toml)
			_, err := load(t, d)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
