package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// Anthropic's list is read page by page (after_id), with the key and the
// version in the headers.
func TestAnthropicListModels(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/v1/models", r.URL.Path)
		require.Equal(t, "sk-test-key", r.Header.Get("x-api-key"))
		require.NotEmpty(t, r.Header.Get("anthropic-version"))
		if r.URL.Query().Get("after_id") == "" {
			fmt.Fprint(w, `{"data":[{"id":"claude-a","type":"model"},{"id":"claude-b","type":"model"}],"has_more":true,"first_id":"claude-a","last_id":"claude-b"}`)
			return
		}
		require.Equal(t, "claude-b", r.URL.Query().Get("after_id"))
		fmt.Fprint(w, `{"data":[{"id":"claude-c","type":"model"}],"has_more":false,"last_id":"claude-c"}`)
	}))
	t.Cleanup(srv.Close)
	p, err := New(Config{Name: Anthropic, BaseURL: srv.URL, APIKey: "sk-test-key"})
	require.NoError(t, err)
	got, err := p.(Lister).ListModels(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"claude-a", "claude-b", "claude-c"}, got)
}

// OpenAI's list is one GET of {base}/models; a server without it is an
// error that names the URL and not the key.
func TestOpenAIListModels(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		require.Equal(t, "Bearer sk-openai-key", r.Header.Get("authorization"))
		fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-y","object":"model","owned_by":"o"},{"id":"gpt-x","object":"model"}]}`)
	}))
	t.Cleanup(srv.Close)
	p, err := New(Config{Name: OpenAI, BaseURL: srv.URL + "/v1", APIKey: "sk-openai-key"})
	require.NoError(t, err)
	got, err := p.(Lister).ListModels(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"gpt-x", "gpt-y"}, got, "by name")

	p, err = New(Config{Name: OpenAI, BaseURL: srv.URL + "/nolist", APIKey: "sk-openai-key"})
	require.NoError(t, err)
	_, err = p.(Lister).ListModels(context.Background())
	require.ErrorContains(t, err, "list models")
	require.ErrorContains(t, err, "404")
	require.NotContains(t, err.Error(), "sk-openai-key")

	var echo any = echoProvider{}
	_, ok := echo.(Lister)
	require.False(t, ok, "echo has no list: any name is taken")
}
