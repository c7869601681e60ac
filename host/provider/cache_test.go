package provider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// capture serves one OpenAI reply per request and keeps the bodies.
func capture(t *testing.T) (*httptest.Server, *[][]byte) {
	t.Helper()
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, b)
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &bodies
}

// The session id goes out as prompt_cache_key only where the provider is
// told it is taken: by default to api.openai.com, never to a compatible
// server unless the config says so; and never without a key to send.
func TestOpenAIPromptCacheKey(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	req := serializers.Request{Model: "m", Messages: []conversation.Message{conversation.UserText("hi")},
		Cache: serializers.Cache{Mark: true, Key: "sid-1"}}
	for _, c := range []struct {
		name string
		sw   *bool
		req  serializers.Request
		want string
	}{
		{"compatible server, default", nil, req, ""},
		{"compatible server, switched on", &yes, req, "sid-1"},
		{"switched off", &no, req, ""},
		{"no caching asked", &yes, serializers.Request{Model: "m", Messages: req.Messages}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, bodies := capture(t)
			p, err := New(Config{Name: OpenAI, BaseURL: srv.URL + "/v1", PromptCacheKey: c.sw})
			require.NoError(t, err)
			_, err = p.Send(context.Background(), c.req, nil)
			require.NoError(t, err)
			var body map[string]any
			require.NoError(t, json.Unmarshal((*bodies)[0], &body))
			if c.want == "" {
				require.NotContains(t, body, "prompt_cache_key")
			} else {
				require.Equal(t, c.want, body["prompt_cache_key"])
			}
		})
	}
}

func TestOpenAIKeysCache(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"":                                   true,
		DefaultOpenAIURL:                     true,
		"https://API.openai.com/v1":          true,
		"http://api.openai.com/v1":           false,
		"https://openrouter.ai/api/v1":       false,
		"http://localhost:11434/v1":          false,
		"https://api.openai.com.evil/v1":     false,
		"https://example.com/api.openai.com": false,
	} {
		require.Equal(t, want, OpenAIKeysCache(url), url)
	}
	p, err := New(Config{Name: OpenAI, APIKey: "k"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"prompt_cache_key": "true"}, WireOptions(p), "OpenAI's own API gets the key by default")
	_, opts := WireOf(Config{Name: OpenAI, BaseURL: "http://localhost:11434/v1"})
	require.Nil(t, opts, "a compatible server gets none")
}

// Anthropic requests that ask for caching carry the marks.
func TestAnthropicSendsMarks(t *testing.T) {
	t.Parallel()
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Write([]byte(`{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	}))
	t.Cleanup(srv.Close)
	p, err := New(Config{Name: Anthropic, BaseURL: srv.URL, APIKey: "k"})
	require.NoError(t, err)
	req := hello
	req.Messages = append([]conversation.Message{conversation.SystemMessage("Seed.", conversation.ModeAppend)}, hello.Messages...)
	req.Cache = serializers.Cache{Mark: true, Key: "sid-1"}
	_, err = p.Send(context.Background(), req, nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"model":"m","max_tokens":8192,
		"system":[{"type":"text","text":"Seed.","cache_control":{"type":"ephemeral"}}],
		"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`, string(body))
}
