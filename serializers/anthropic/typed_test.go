package anthropic_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
)

// markAdded returns msgs with every text block of every user message
// marked as added by panto (conversation.Block.Added), as a USER_PROMPT.md
// block is recorded.
func markAdded(msgs []conversation.Message) []conversation.Message {
	out := make([]conversation.Message, len(msgs))
	for i, m := range msgs {
		m = m.Clone()
		if m.Role == conversation.RoleUser {
			for j := range m.Content {
				if m.Content[j].Type == conversation.TypeText {
					m.Content[j].Added = "project /p/.panto/USER_PROMPT.md"
				}
			}
		}
		out[i] = m
	}
	return out
}

// TestAddedMarkerNeverReachesTheWire: with every user text block marked
// added, each golden request is byte for byte what it was: the marker is
// for the log and the front ends, the model gets the same request.
func TestAddedMarkerNeverReachesTheWire(t *testing.T) {
	t.Parallel()
	marked := 0
	for _, tc := range requestCases() {
		req := tc.req
		req.Messages = markAdded(req.Messages)
		out, err := anthropic.EncodeRequest(req, tc.opts)
		require.NoError(t, err, tc.name)
		want, err := os.ReadFile(filepath.Join(requestsDir, tc.name+".json"))
		require.NoError(t, err)
		require.Equal(t, string(want), string(indent(t, out)), tc.name)
		for _, m := range req.Messages {
			for _, b := range m.Content {
				if b.Added != "" {
					marked++
				}
			}
		}
	}
	require.Greater(t, marked, 10)

	// A message as panto records it with a USER_PROMPT.md is sent as the
	// same message without the marks.
	typed := conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{
		conversation.AddedText("Answer in one paragraph.\n", "project /p/.panto/USER_PROMPT.md"), conversation.Text("fix the bug")}}
	plain := conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{
		conversation.Text("Answer in one paragraph.\n"), conversation.Text("fix the bug")}}
	a, err := anthropic.EncodeRequest(serializers.Request{Model: model, MaxTokens: 10, Messages: []conversation.Message{typed}}, anthropic.Options{})
	require.NoError(t, err)
	b, err := anthropic.EncodeRequest(serializers.Request{Model: model, MaxTokens: 10, Messages: []conversation.Message{plain}}, anthropic.Options{})
	require.NoError(t, err)
	require.Equal(t, string(b), string(a))
	require.NotContains(t, string(a), "added")
}
