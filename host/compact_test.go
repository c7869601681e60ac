package host

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// summariser answers a summarising request with "summary N" and keeps
// the requests it was sent.
type summariser struct {
	mu       sync.Mutex
	requests []serializers.Request
}

func (f *summariser) Send(_ context.Context, req serializers.Request, _ serializers.DeltaFunc) (serializers.Reply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	return serializers.Reply{Message: conversation.AssistantText(fmt.Sprintf("summary %d", len(f.requests))),
		StopReason: serializers.StopEndTurn}, nil
}

// A conversation far larger than the model's window is summarised in
// requests that each fit it, each after the summary so far, and the
// result is one compaction, as a single request's would be.
func TestCompactFitsItsRequestsIntoTheWindow(t *testing.T) {
	t.Parallel()
	const window = 1000
	var msgs []conversation.Message
	msgs = append(msgs, conversation.SystemMessage("seed", conversation.ModeAppend))
	for i := range 30 {
		msgs = append(msgs, conversation.UserText(fmt.Sprintf("question %d: %s", i, strings.Repeat("why ", 100))),
			conversation.AssistantText(fmt.Sprintf("answer %d: %s", i, strings.Repeat("because ", 60))))
	}
	path := writeLog(t, msgs...)
	prov := &summariser{}
	cfg := config(path, "seed")
	cfg.Provider = prov
	cfg.Compaction = Compaction{Window: window, Threshold: 0.8, KeepTokens: 50}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	require.Greater(t, approxTokens(s.requestMessages()), 5*window, "the test's conversation is far over the window")

	_, err = s.Compact(t.Context())
	require.NoError(t, err)

	prov.mu.Lock()
	reqs := prov.requests
	prov.mu.Unlock()
	require.Greater(t, len(reqs), 3, "the conversation was summarised in pieces")
	for i, r := range reqs {
		require.LessOrEqual(t, approxTokens(r.Messages)+window/4, window, "summary request %d is over the window", i+1)
		if i > 0 {
			require.Contains(t, r.Messages[1].Text(), fmt.Sprintf("Summary of what came before:\nsummary %d", i),
				"request %d goes on from the summary before it", i+1)
		}
	}
	// Every question reached the summariser, in order.
	var all strings.Builder
	for _, r := range reqs {
		all.WriteString(r.Messages[1].Text())
	}
	at := 0
	for i := range 29 {
		j := strings.Index(all.String()[at:], fmt.Sprintf("question %d:", i))
		require.GreaterOrEqual(t, j, 0, "question %d was not summarised (in order)", i)
		at += j
	}

	require.NoError(t, s.Close(context.Background()))
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	var compactions []string
	for _, e := range log.Entries {
		if e.Compaction != nil {
			compactions = append(compactions, e.Compaction.Summary)
		}
	}
	require.Equal(t, []string{fmt.Sprintf("summary %d", len(reqs))}, compactions, "one compaction, with the last summary")
}

// A window too small to hold any summarising request fails with a
// message that says so, and records nothing.
func TestCompactRefusesAWindowTooSmall(t *testing.T) {
	t.Parallel()
	path := writeLog(t, conversation.SystemMessage("seed", conversation.ModeAppend),
		conversation.UserText(strings.Repeat("a ", 400)), conversation.AssistantText("b"),
		conversation.UserText("c"), conversation.AssistantText("d"))
	cfg := config(path, "seed")
	prov := &summariser{}
	cfg.Provider = prov
	cfg.Compaction = Compaction{Window: 200, Threshold: 0.8, KeepTokens: 1}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	_, err = s.Compact(t.Context())
	require.ErrorContains(t, err, "leaves no room")
	require.Empty(t, prov.requests)
}

// A max_tokens larger than the window (config's, for the turns) does not
// leave the summarising requests without room: their max_tokens is cut
// to a quarter of the window, and input and reply fit it together.
func TestCompactCutsMaxTokensToTheWindow(t *testing.T) {
	t.Parallel()
	const window = 900
	msgs := []conversation.Message{conversation.SystemMessage("seed", conversation.ModeAppend)}
	for i := range 8 {
		msgs = append(msgs, conversation.UserText(fmt.Sprintf("question %d: %s", i, strings.Repeat("why ", 60))),
			conversation.AssistantText("answer"))
	}
	path := writeLog(t, msgs...)
	prov := &summariser{}
	cfg := config(path, "seed")
	cfg.Provider = prov
	cfg.Model.MaxTokens = 8192
	cfg.Compaction = Compaction{Window: window, Threshold: 0.5, KeepTokens: 1}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	_, err = s.Compact(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, prov.requests)
	for i, r := range prov.requests {
		require.LessOrEqual(t, r.MaxTokens, window/4, "request %d", i+1)
		require.LessOrEqual(t, approxTokens(r.Messages)+r.MaxTokens, window, "request %d", i+1)
	}
}
