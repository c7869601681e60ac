package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/host"
)

// A running bash block shows the last lines of its output as they come,
// under its header with the elapsed time, made safe for the terminal;
// its result replaces them when it ends.
func TestRunningToolShowsItsProgress(t *testing.T) {
	t.Parallel()
	f := newFake()
	more, release := make(chan struct{}), make(chan struct{})
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.ToolStart{ID: "1", Name: "bash", Input: json.RawMessage(`{"command":"echo starting; sleep 60"}`)}
		ch <- host.ToolProgress{ID: "1", Name: "bash", Text: "starting\n", Tail: "starting\n", Elapsed: 20 * time.Millisecond}
		<-more
		var tail strings.Builder
		for _, l := range []string{"starting", "two", "three", "four", "five", "six \x1b]0;pwned\x07", "seven"} {
			tail.WriteString(l + "\n")
		}
		ch <- host.ToolProgress{ID: "1", Name: "bash", Text: "…", Tail: tail.String(), Elapsed: time.Second}
		<-release
		ch <- host.ToolEnd{ID: "1", Name: "bash", Result: "starting\n[interrupted by the user after 3.2s: the command and its process group were killed]", IsError: true, Duration: 3200 * time.Millisecond}
		ch <- host.TurnEnd{}
	}
	h := newHarness(t, f)
	h.typ("run it")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "│ starting") }, "the output so far shows while the call runs")
	h.now = h.now.Add(2500 * time.Millisecond)
	s := h.screen()
	require.Regexp(t, `[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash echo starting; sleep 60 · 2\.5s\n\s*│ starting\n`, s, "the elapsed time ticks above it")

	close(more)
	h.wait(func() bool { return strings.Contains(h.screen(), "│ seven") }, "newer lines come")
	s = h.screen()
	require.NotContains(t, s, "│ starting", "only the last 5 lines")
	require.NotContains(t, s, "│ two")
	for _, l := range []string{"three", "four", "five", "seven"} {
		require.Contains(t, s, "│ "+l)
	}
	require.NotContains(t, h.m.View().Content, "\x1b]0;", "the tool's escape is shown, not obeyed")
	require.Contains(t, s, "│ six "+termtext.Line("\x1b]0;pwned\x07"))

	close(release)
	h.idle()
	s = h.screen()
	require.Contains(t, s, "✗ bash echo starting; sleep 60 · error · 3.2s")
	require.Contains(t, s, "│ starting")
	require.Contains(t, s, "│ [interrupted by the user after 3.2s")
	require.NotContains(t, s, "│ seven", "the result replaced the live lines")
}
