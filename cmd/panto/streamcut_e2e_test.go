package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A stream cut mid-reply: the half reply is printed, and the error says
// in words that the provider's stream ended before the reply did and
// that the half reply was not recorded; the log has no reply.
func TestStreamCutSaysWhatHappened(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cut := reply{headers: map[string]string{"content-type": "text/event-stream"}, body: sse(
		"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the first half"}}`,
	)}
	fake := newFake(t, cut)
	h.env["ANTHROPIC_API_KEY"] = "k"
	r := h.run("", "-p", "hi", "--provider", "anthropic", "--base-url", fake.srv.URL)
	require.NotZero(t, r.code)
	require.Contains(t, r.stdout, "the first half")
	require.Contains(t, r.stderr, "the provider's stream ended before the reply did: the half reply was not recorded")
	for _, e := range entriesOfType(t, h.sessionFiles()[0], "message") {
		require.NotEqual(t, "assistant", e["message"].(map[string]any)["role"], "nothing of the half reply was recorded")
	}
}
