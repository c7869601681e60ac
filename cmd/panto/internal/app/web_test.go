package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/host/extension"
)

// The web extension gets [web.search] in Init (the key read from
// key_env), nothing without it, and is no safeguard unless config says.
func TestWithWeb(t *testing.T) {
	t.Parallel()
	specs := func() []extension.Spec {
		return []extension.Spec{{Path: "/b/extensions/tools", Required: true}, {Path: "/b/extensions/web", Required: true}}
	}
	var notices []string
	a := &App{env: Env{Getenv: func(k string) string { return map[string]string{"K": "secret"}[k] }, Notify: func(n string) { notices = append(notices, n) }}}

	out, err := a.withWeb(specs())
	require.NoError(t, err)
	require.True(t, out[0].Required, "tools stays a safeguard")
	require.False(t, out[1].Required, "web watches nothing")
	require.Nil(t, out[1].Config, "search is off without [web.search]")

	a.cfg.WebSearch = &config.WebSearch{Endpoint: "https://s.example/q", API: "brave", KeyEnv: "K", Source: "config c.toml"}
	out, err = a.withWeb(specs())
	require.NoError(t, err)
	require.JSONEq(t, `{"search":{"endpoint":"https://s.example/q","api":"brave","key":"secret"}}`, string(out[1].Config))
	require.Nil(t, out[0].Config, "only the web extension gets it")

	a.cfg.WebSearch.KeyEnv = "UNSET"
	out, err = a.withWeb(specs())
	require.NoError(t, err)
	require.Nil(t, out[1].Config)
	require.Equal(t, []string{"web.search.key_env names UNSET, which is not set (config c.toml); the search tool is left out"}, notices)

	a.cfg.Required = map[string]bool{"web": true}
	out, _ = a.withWeb(specs())
	require.True(t, out[1].Required, "[extensions.web] required = true makes it one")
}
