package openai

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	c "github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// TestAddedMarkerNeverReachesTheWire: with every user text block marked
// added by panto (c.Block.Added, as a USER_PROMPT.md block is recorded),
// each golden request is byte for byte what it was.
func TestAddedMarkerNeverReachesTheWire(t *testing.T) {
	t.Parallel()
	marked := 0
	for _, tt := range requestCases {
		req := tt.req
		req.Messages = make([]c.Message, len(tt.req.Messages))
		for i, m := range tt.req.Messages {
			m = m.Clone()
			if m.Role == c.RoleUser {
				for j := range m.Content {
					if m.Content[j].Type == c.TypeText {
						m.Content[j].Added = "project /p/.panto/USER_PROMPT.md"
						marked++
					}
				}
			}
			req.Messages[i] = m
		}
		got, err := EncodeRequest(req, tt.opts)
		require.NoError(t, err, tt.name)
		want, err := os.ReadFile(filepath.Join("testdata", "requests", tt.name+".json"))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), tt.name)
	}
	require.Greater(t, marked, 5)

	typed := c.Message{Role: c.RoleUser, Content: []c.Block{c.AddedText("Answer in one paragraph.\n", "project /p/.panto/USER_PROMPT.md"), c.Text("fix the bug")}}
	plain := c.Message{Role: c.RoleUser, Content: []c.Block{c.Text("Answer in one paragraph.\n"), c.Text("fix the bug")}}
	a, err := EncodeRequest(serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{typed}}, Options{})
	require.NoError(t, err)
	b, err := EncodeRequest(serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{plain}}, Options{})
	require.NoError(t, err)
	require.Equal(t, string(b), string(a))
	require.NotContains(t, string(a), "added")
}
