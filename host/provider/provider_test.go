package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	require.Equal(t, 250*time.Millisecond, retryAfter(h("retry-after-ms", "250")))
	require.Equal(t, 2*time.Second, retryAfter(h("retry-after", "2")))
	require.Equal(t, 250*time.Millisecond, retryAfter(h("retry-after-ms", "250", "retry-after", "9")), "ms wins")
	d := retryAfter(h("retry-after", time.Now().Add(5*time.Second).UTC().Format(http.TimeFormat)))
	require.InDelta(t, 5*time.Second, d, float64(1500*time.Millisecond))
	require.Zero(t, retryAfter(h("retry-after", "600")), "longer than 60s falls back to the backoff")
	require.Zero(t, retryAfter(h("retry-after", "soon")))
	require.Zero(t, retryAfter(h()))
}

func TestShouldRetry(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]bool{400: false, 401: false, 404: false, 408: true, 409: true, 429: true, 500: true, 503: true, 529: true} {
		require.Equal(t, want, shouldRetry(&http.Response{StatusCode: status, Header: http.Header{}}), "status %d", status)
	}
	require.False(t, shouldRetry(&http.Response{StatusCode: 429, Header: http.Header{"X-Should-Retry": {"false"}}}))
	require.True(t, shouldRetry(&http.Response{StatusCode: 400, Header: http.Header{"X-Should-Retry": {"true"}}}))
}

func TestBackoffGrowsAndIsBounded(t *testing.T) {
	t.Parallel()
	for a := 0; a < 10; a++ {
		d := backoff(a)
		top := 500 * time.Millisecond << min(a, 4)
		require.LessOrEqual(t, d, top)
		require.GreaterOrEqual(t, d, top*3/4)
	}
}

// server answers status for the first n requests, then a valid reply.
func server(t *testing.T, n int32, status int, header map[string]string) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= n {
			for k, v := range header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(status)
			w.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`))
			return
		}
		w.Write([]byte(`{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func newTest(t *testing.T, url string, retries int, waits *[]time.Duration) Provider {
	t.Helper()
	p, err := New(Config{Name: Anthropic, BaseURL: url, APIKey: "sk-secret", Retries: retries,
		Sleep: func(ctx context.Context, d time.Duration) error { *waits = append(*waits, d); return ctx.Err() }})
	require.NoError(t, err)
	return p
}

var hello = serializers.Request{Model: "m", Messages: []conversation.Message{conversation.UserText("hi")}}

func TestRetriesHonourRetryAfterThenSucceed(t *testing.T) {
	t.Parallel()
	srv, hits := server(t, 2, 529, map[string]string{"retry-after-ms": "30"})
	var waits []time.Duration
	reply, err := newTest(t, srv.URL, 2, &waits).Send(context.Background(), hello, nil)
	require.NoError(t, err)
	require.Equal(t, "ok", reply.Message.Text())
	require.Equal(t, int32(3), hits.Load())
	require.Equal(t, []time.Duration{30 * time.Millisecond, 30 * time.Millisecond}, waits)
}

func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	srv, hits := server(t, 100, 503, nil)
	var waits []time.Duration
	_, err := newTest(t, srv.URL, 2, &waits).Send(context.Background(), hello, nil)
	require.ErrorContains(t, err, "HTTP 503")
	require.ErrorContains(t, err, "busy")
	require.ErrorContains(t, err, "after 2 retries")
	require.NotContains(t, err.Error(), "sk-secret")
	require.Equal(t, int32(3), hits.Load())
	require.Len(t, waits, 2)
}

func TestNoRetryOnClientError(t *testing.T) {
	t.Parallel()
	srv, hits := server(t, 100, 401, nil)
	var waits []time.Duration
	_, err := newTest(t, srv.URL, 2, &waits).Send(context.Background(), hello, nil)
	var apiErr *serializers.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 401, apiErr.Status)
	require.Equal(t, int32(1), hits.Load())
}

func TestConnectionErrorsAreRetried(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	var waits []time.Duration
	_, err := newTest(t, url, 1, &waits).Send(context.Background(), hello, nil)
	require.Error(t, err)
	require.Len(t, waits, 1)
	require.NotContains(t, err.Error(), "sk-secret")
}

func TestCancelledRequest(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.Write([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":1}}}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	p, err := New(Config{Name: Anthropic, BaseURL: srv.URL, APIKey: "k"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	req := hello
	req.Stream = true
	_, err = p.Send(ctx, req, nil)
	require.ErrorIs(t, err, context.Canceled)
}

func TestNewChecks(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Name: Anthropic})
	require.ErrorIs(t, err, ErrNoAPIKey)
	require.ErrorContains(t, err, "ANTHROPIC_API_KEY")
	_, err = New(Config{Name: "gemini"})
	require.ErrorContains(t, err, `unknown provider "gemini"`)
	_, err = New(Config{Name: OpenAI})
	require.ErrorIs(t, err, ErrNoAPIKey, "the public API needs a key")
	require.ErrorContains(t, err, "provider openai: no API key: set OPENAI_API_KEY")
	_, err = New(Config{Name: OpenAI, BaseURL: "https://openrouter.ai/api/v1"})
	require.ErrorIs(t, err, ErrNoAPIKey)
	p, err := New(Config{Name: OpenAI, BaseURL: "http://localhost:11434/v1"})
	require.NoError(t, err, "local OpenAI-compatible servers need no key")
	require.Equal(t, OpenAI, p.Name())
	_, err = New(Config{Name: OpenAI, APIKey: "k"})
	require.NoError(t, err)
}

func TestLocalURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"http://localhost:11434/v1", "http://LOCALHOST/v1", "http://127.0.0.1:8080/v1", "http://127.1.2.3/",
		"http://[::1]:8000/v1", "http://10.0.0.5/v1", "http://172.16.1.1/v1", "http://192.168.1.20:1234/v1",
		"http://[fd00::1]/v1", "http://169.254.1.1/", "http://100.101.102.103:11434/v1", "http://0.0.0.0:8000/v1",
		"http://ollama:11434/v1", "http://gpu-box.local/v1", "http://app.localhost/v1", "http://llm.internal/v1",
		"http://nas.lan/v1", "http://box.home.arpa/v1", "http://[::ffff:127.0.0.1]/v1", "http://localhost./v1",
	} {
		require.True(t, LocalURL(u), u)
	}
	for _, u := range []string{
		"https://api.openai.com/v1", "https://openrouter.ai/api/v1", "http://8.8.8.8/v1", "http://[2001:db8::1]/v1",
		"http://172.32.0.1/v1", "http://localhost.example.com/v1", "not a url", "", "/v1", "http://:8080/v1",
	} {
		require.False(t, LocalURL(u), u)
	}
}

func TestEchoDescribesTheRequest(t *testing.T) {
	t.Parallel()
	p, err := New(Config{Name: Echo})
	require.NoError(t, err)
	var c conversation.Conversation
	c.AddSystemMessage("First block\nsecond line")
	c.AddSystemMessage("Another")
	c.Append(conversation.UserText("old"), conversation.AssistantText("x"))
	c.ReplaceSystemMessage("Wiped " + strings.Repeat("é", 80))
	c.Append(conversation.UserText("hello there"))
	var streamed strings.Builder
	reply, err := p.Send(context.Background(), serializers.Request{Messages: c.Messages, Stream: true}, func(d serializers.Delta) {
		streamed.WriteString(d.Text)
	})
	require.NoError(t, err)
	want := "echo: you said \"hello there\"\nsystem prompt: 1 block(s)\n  1. Wiped " + strings.Repeat("é", 63) + "...\n"
	require.Equal(t, want, reply.Message.Text())
	require.Equal(t, want, streamed.String())
	require.Equal(t, serializers.StopEndTurn, reply.StopReason)
}

func TestEchoDrivesTheToolLoop(t *testing.T) {
	t.Parallel()
	p, err := New(Config{Name: Echo})
	require.NoError(t, err)
	tools := []serializers.Tool{{Name: "read"}}
	user := conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{
		conversation.Text("per-turn prompt"),
		conversation.Text("look:\ntool:read {\"path\": \"go.mod\"}\n  tool:ls\ntool:read not json\ntool:\nplain line"),
	}}
	msgs := []conversation.Message{conversation.SystemMessage("sys", conversation.ModeAppend), user}

	// Tool lines become calls, in order, only when tools are offered.
	reply, err := p.Send(context.Background(), serializers.Request{Messages: msgs, Tools: tools}, nil)
	require.NoError(t, err)
	require.Equal(t, serializers.StopToolUse, reply.StopReason)
	require.NoError(t, reply.Message.Validate())
	uses := reply.Message.ToolUses()
	require.Len(t, uses, 3)
	require.Equal(t, []string{"echo_1", "read", `{"path": "go.mod"}`}, []string{uses[0].ID, uses[0].Name, string(uses[0].Input)})
	require.Equal(t, []string{"echo_2", "ls", `{}`}, []string{uses[1].ID, uses[1].Name, string(uses[1].Input)})
	require.JSONEq(t, `{"input": "not json"}`, string(uses[2].Input))
	require.Equal(t, "echo: calling read, ls, read\n", reply.Message.Text())

	noTools, err := p.Send(context.Background(), serializers.Request{Messages: msgs}, nil)
	require.NoError(t, err)
	require.Empty(t, noTools.Message.ToolUses(), "a request without tools (compaction) gets no calls")
	require.Equal(t, serializers.StopEndTurn, noTools.StopReason)

	// The results are described, and the turn ends.
	results := conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{
		conversation.ToolResult("echo_1", "module x\n\ngo 1.26", false),
		conversation.ToolResult("echo_2", "a\nb\n", false),
		conversation.ToolResult("echo_3", "bad input", true),
	}}
	final, err := p.Send(context.Background(), serializers.Request{Messages: append(msgs, reply.Message, results), Tools: tools}, nil)
	require.NoError(t, err)
	require.Equal(t, serializers.StopEndTurn, final.StopReason)
	require.Equal(t, "echo: 3 tool result(s)\n"+
		"  read (ok, 3 line(s)): module x\n"+
		"  ls (ok, 2 line(s)): a\n"+
		"  read (error, 1 line(s)): bad input\n", final.Message.Text())
}

// A server that echoes the key in its error (invalid x-api-key: sk-…)
// does not get it into panto's error, which is printed.
func TestAnErrorNeverCarriesTheKey(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: `+r.Header.Get("x-api-key")+`"}}`)
	}))
	t.Cleanup(srv.Close)
	_, err := newTest(t, srv.URL, 0, nil).Send(context.Background(), hello, nil)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "sk-secret")
	require.Contains(t, err.Error(), "invalid x-api-key: [your API key]")
}
