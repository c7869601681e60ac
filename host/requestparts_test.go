package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// RequestMessages are the next request's messages, and Summary tells the
// compaction's summary apart from what was said.
func TestRequestMessagesShowTheSummaryApart(t *testing.T) {
	t.Parallel()
	msgs := []conversation.Message{conversation.SystemMessage("seed", conversation.ModeAppend)}
	for i := range 6 {
		msgs = append(msgs, conversation.UserText(fmt.Sprintf("question %d: %s", i, strings.Repeat("why ", 50))),
			conversation.AssistantText(fmt.Sprintf("answer %d", i)))
	}
	path := writeLog(t, msgs...)
	cfg := config(path, "seed")
	cfg.Provider = &summariser{}
	cfg.Compaction = Compaction{Window: 100000, Threshold: 0.8, KeepTokens: 10}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	before := s.RequestMessages()
	require.Len(t, before, len(msgs))
	for _, m := range before {
		require.Equal(t, NoSummary, Summary(m))
	}

	_, err = s.Compact(t.Context())
	require.NoError(t, err)
	after := s.RequestMessages()
	var kinds []SummaryKind
	for _, m := range after {
		kinds = append(kinds, Summary(m))
	}
	require.Equal(t, conversation.RoleSystem, after[0].Role, "the system messages before the cut stay")
	require.Equal(t, CompactionSummary, kinds[1])
	require.NotContains(t, kinds[2:], CompactionSummary)
	require.Less(t, len(after), len(before))
	require.Equal(t, NoSummary, Summary(conversation.UserText("a question")))
}
