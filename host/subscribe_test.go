package host

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/rules"
)

// pumps counts the goroutines that feed subscriptions.
func pumps() int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return strings.Count(string(buf[:n]), "host.(*hub).subscribe.func")
}

// waitFor polls cond until it holds; the deadline only keeps a broken
// build from hanging (nothing here is a measure of speed).
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// inMemory opens a session with no log, seeded with "seed".
func inMemory(t *testing.T, model Sender) *Session {
	t.Helper()
	s, err := Open(context.Background(), Config{
		CWD: "/p", Provider: model, ProviderName: "script", Model: Model{Name: "m1"},
		Prompt: func(rules.Vars) (Prompt, error) { return Prompt{Blocks: []PromptBlock{{Text: "seed"}}}, nil },
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// A subscriber that stops reading neither blocks the session nor another
// subscriber, nor grows without bound: once more than MaxPending events
// wait for it, its subscription ends with Overflow (what waited first is
// still delivered, in order), while the other one gets every event.
// Cancelling its context frees its goroutine. (Not parallel: it counts
// goroutines.)
func TestStalledSubscriberNeitherBlocksNorLeaks(t *testing.T) {
	before := pumps()
	const turns = MaxPending/4 + 10 // each turn: turn_start, usage, reply, turn_end
	model := &script{}
	for i := range turns {
		model.replies = append(model.replies, conversation.AssistantText(fmt.Sprint("a", i)))
	}
	s := inMemory(t, model)
	stalled, stop := context.WithCancel(context.Background())
	stuck := s.Subscribe(stalled) // the first: it holds Open's events too
	reader := s.Subscribe(t.Context())
	ends := 0
	for i := range turns {
		require.NoError(t, s.Turn(context.Background(), fmt.Sprint("u", i)))
		for ev := range reader {
			if _, ok := ev.(TurnEnd); ok {
				ends++
				break
			}
		}
	}
	require.Equal(t, turns, ends, "the reader got every turn while the other read nothing")
	require.Equal(t, 2, pumps()-before)

	var got []Event
	for ev := range stuck {
		got = append(got, ev)
	}
	require.Len(t, got, MaxPending+1, "what waited, then Overflow, then the end")
	require.Equal(t, Overflow{Pending: MaxPending}, got[MaxPending])
	require.Equal(t, "system_changed", got[0].Kind(), "in order from the start")
	require.Equal(t, Opened{}, got[1])
	require.Equal(t, TurnStart{Text: "u0"}, got[2])
	stop()
	waitFor(t, func() bool { return pumps()-before == 1 }, "the stalled subscription's goroutine ends")

	// Cancelling a subscription nobody reads frees it at once.
	ctx, cancel := context.WithCancel(context.Background())
	s.Subscribe(ctx)
	require.NoError(t, s.Turn(context.Background(), "one more"))
	for ev := range reader {
		if _, ok := ev.(TurnEnd); ok {
			break
		}
	}
	cancel()
	waitFor(t, func() bool { return pumps()-before == 1 }, "a cancelled subscription's goroutine ends")
	require.NoError(t, s.Close(context.Background()))
	for range reader {
	}
	waitFor(t, func() bool { return pumps() == before }, "every subscription ends with the session")
}

// A reader that is slow gets the deltas that waited for it merged, one
// per run of its kind: no text is lost, nothing is reordered across the
// other events, and the queue does not grow with the stream.
func TestSlowReaderGetsDeltasMerged(t *testing.T) {
	t.Parallel()
	h := newHub()
	events := h.subscribe(t.Context())
	h.emit(TextDelta{Text: "first"})
	first := <-events // the reader takes one, then stalls
	var want strings.Builder
	for i := range 10000 {
		h.emit(TextDelta{Text: fmt.Sprint(i, " ")})
		fmt.Fprint(&want, i, " ")
	}
	h.emit(ThinkingDelta{Text: "hm"})
	h.emit(ThinkingDelta{Text: "m"})
	h.emit(Notice{Text: "between"})
	h.emit(TextDelta{Text: "after"})
	h.close()
	var got []Event
	for ev := range events {
		got = append(got, ev)
	}
	require.Equal(t, TextDelta{Text: "first"}, first)
	// The one the reader's goroutine held as the reader stalled comes
	// alone; every later piece waited, and was merged.
	var text strings.Builder
	var kinds []string
	for _, ev := range got {
		if k := ev.Kind(); len(kinds) == 0 || kinds[len(kinds)-1] != k {
			kinds = append(kinds, k)
		}
		if d, ok := ev.(TextDelta); ok && len(kinds) == 1 {
			text.WriteString(d.Text)
		}
	}
	require.Equal(t, want.String(), text.String(), "no text lost, none reordered")
	require.LessOrEqual(t, len(got), 5, "10,000 pieces came as at most two")
	require.Equal(t, []string{"text_delta", "thinking_delta", "notice", "text_delta"}, kinds)
	require.Equal(t, ThinkingDelta{Text: "hmm"}, got[len(got)-3])
	require.Equal(t, TextDelta{Text: "after"}, got[len(got)-1])
}

// Deltas do not count towards the bound; any other event does, and the
// one past MaxPending ends the subscription.
func TestOverflowCountsStructuralEventsOnly(t *testing.T) {
	t.Parallel()
	h := newHub()
	for i := range MaxPending {
		h.emit(ToolStart{ID: fmt.Sprint(i)})
		h.emit(TextDelta{Text: "x"}) // between two structural events: never merged, never counted
	}
	events := h.subscribe(t.Context())
	h.emit(ToolEnd{ID: "one too many"})
	h.emit(ToolEnd{ID: "after the end"})
	var starts, deltas int
	var last Event
	for ev := range events {
		switch ev.(type) {
		case ToolStart:
			starts++
		case TextDelta:
			deltas++
		}
		last = ev
	}
	require.Equal(t, MaxPending, starts)
	require.Equal(t, MaxPending, deltas)
	require.Equal(t, Overflow{Pending: MaxPending}, last)
	// A new subscription starts afresh.
	again := h.subscribe(t.Context())
	h.emit(Notice{Text: "fresh"})
	require.Equal(t, Notice{Text: "fresh"}, <-again)
}

// What Open recorded and said reaches a subscriber that subscribes after
// Open has returned, ending with Opened: the repaired log's notice, the
// extension that did not start, the start's SystemChanged. A later
// subscriber starts with what happens after it subscribed.
func TestOpenEventsReachTheFirstSubscriber(t *testing.T) {
	t.Parallel()
	path := writeLog(t, conversation.SystemMessage("seed", conversation.ModeAppend),
		conversation.UserText("u"), calls(use("c1", "ls", `{}`))) // killed while its call ran
	exts := &fakeExtensions{names: []string{"tools"}, recordGuidance: func(rec extension.Recorder) {
		require.NoError(t, rec.SetSection("tools", "guidance", "Use ls."))
	}}
	cfg := config(path, "seed")
	cfg.startExtensions = func(ctx context.Context, specs []extension.Spec, rec extension.Recorder, opts extension.Options) extensionSet {
		opts.Report(fmt.Errorf("extension broken (/x/broken): it exited before the go-plugin handshake"))
		return exts.start(ctx, specs, rec, opts)
	}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	first := s.Subscribe(t.Context())
	second := s.Subscribe(t.Context())
	var kinds []string
	for ev := range first {
		kinds = append(kinds, eventLine(ev))
		if _, ok := ev.(Opened); ok {
			break
		}
	}
	require.Equal(t, []string{
		"notice warning: session log " + path + ": the last reply's 1 tool call(s) had no result (panto was stopped while they ran); recorded them as interrupted",
		"notice error: extension broken (/x/broken): it exited before the go-plugin handshake",
		"system_changed tools tools:guidance Use ls.",
		"opened",
	}, kinds, "the resume with an unchanged prompt records nothing but the guidance")
	s.emit(Notice{Text: "after"})
	require.Equal(t, Notice{Text: "after"}, <-second, "a later subscriber starts at its Subscribe")
	require.Equal(t, 4, s.Info().Loaded, "the log's three messages and the repair's results, before the start recorded anything")
}

// eventLine is an event as the tests compare it.
func eventLine(ev Event) string {
	switch e := ev.(type) {
	case Notice:
		return fmt.Sprintf("notice %s: %s", e.Level, e.Text)
	case SystemChanged:
		return strings.TrimSpace(fmt.Sprintf("system_changed %s %s %s", e.By, e.Key, e.Text))
	}
	return ev.Kind()
}
