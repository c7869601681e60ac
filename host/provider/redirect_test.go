package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A redirect to another host never carries the key there: net/http
// forwards X-Api-Key to any host a 307 names. Before, the other host got
// the key.
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	t.Parallel()
	var stolen atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Store(r.Header.Get("X-Api-Key"))
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(other.Close)
	// The same server, named by another host: localhost instead of
	// 127.0.0.1.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(first.Close)
	var waits []time.Duration
	_, err := newTest(t, first.URL, 0, &waits).Send(context.Background(), hello, nil)
	require.ErrorContains(t, err, "refused a redirect from 127.0.0.1:")
	require.ErrorContains(t, err, "panto sends the API key only to the base URL configured")
	require.Nil(t, stolen.Load(), "the other host got nothing")
}

// A redirect on the same server is followed.
func TestRedirectOnTheSameServerIsFollowed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages" {
			http.Redirect(w, r, "/moved/v1/messages", http.StatusTemporaryRedirect)
			return
		}
		require.Equal(t, "sk-secret", r.Header.Get("X-Api-Key"))
		w.Write([]byte(`{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	}))
	t.Cleanup(srv.Close)
	var waits []time.Duration
	reply, err := newTest(t, srv.URL, 0, &waits).Send(context.Background(), hello, nil)
	require.NoError(t, err)
	require.Equal(t, "ok", reply.Message.Text())
}

// A stream that never ends stops at MaxReply with an error, instead of
// growing memory until the machine runs out. Before, it was read for as
// long as request_timeout allowed.
func TestEndlessStreamIsCut(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.Write([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"))
		delta := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + strings.Repeat("x", 1000) + "\"}}\n\n")
		for r.Context().Err() == nil {
			if _, err := w.Write(delta); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	p, err := New(Config{Name: Anthropic, BaseURL: srv.URL, APIKey: "k", MaxReply: 1 << 20})
	require.NoError(t, err)
	req := hello
	req.Stream = true
	_, err = p.Send(context.Background(), req, nil)
	require.ErrorIs(t, err, ErrReplyTooLarge)
	require.ErrorContains(t, err, "(1048576 bytes): it was cut there")
}
