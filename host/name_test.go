package host

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// SetName records the session's name in its log (a session_info entry),
// one line, and the conversation goes on after it as before.
func TestSetName(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("a1"), conversation.AssistantText("a2")}}
	s, path := newSession(t, model)
	ctx := context.Background()
	turn(ctx, s, "u1")
	name, err := s.SetName("  the   fix\nfor count ")
	require.NoError(t, err)
	require.Equal(t, "the fix for count", name)
	got, err := s.Name()
	require.NoError(t, err)
	require.Equal(t, "the fix for count", got)
	_, err = s.SetName(strings.Repeat("x", 201))
	require.Error(t, err)
	turn(ctx, s, "u2")
	require.Len(t, s.Messages(), 5, "seed, u1, a1, u2, a2: the name is no message")

	sum, err := sessionlog.Summarize(path)
	require.NoError(t, err)
	require.Equal(t, "the fix for count", sum.Name)
}
