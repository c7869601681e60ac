package lineloop

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/signals"
	"github.com/panto-dev/panto/host"
)

// overflowing is a session whose subscriptions end with Overflow as a
// session's do when its reader falls more than host.MaxPending events
// behind: each Subscribe gets the next of script's event lists. Only
// what the line loop's turn calls is there.
type overflowing struct {
	app.Session
	mu     sync.Mutex
	script [][]host.Event
	busy   []bool // what Busy says after each Subscribe
	subs   int
}

func (s *overflowing) Subscribe(ctx context.Context) <-chan host.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan host.Event, 16)
	if s.subs < len(s.script) {
		for _, ev := range s.script[s.subs] {
			ch <- ev
		}
	}
	s.subs++
	close(ch)
	return ch
}

func (s *overflowing) Turn(context.Context, string) error { return nil }

func (s *overflowing) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy[s.subs-1]
}

func overflowChat(s *overflowing) (*chat, *bytes.Buffer, *bytes.Buffer) {
	var out, errw bytes.Buffer
	o := Options{Stdout: &out, Stderr: &errw, Signals: signals.NewRouter(func(error) {}, nil)}
	c := &chat{ctx: context.Background(), o: o, view: newTextView(o, false)}
	c.attach(s)
	return c, &out, &errw
}

// A line loop that fell behind during a turn says so, reads the session
// afresh and waits for the turn's end on the new subscription.
func TestOverflowDuringATurnGoesOn(t *testing.T) {
	t.Parallel()
	s := &overflowing{
		script: [][]host.Event{
			{host.TurnStart{Text: "hi"}, host.TextDelta{Text: "before "}, host.Overflow{Pending: host.MaxPending}},
			{host.TextDelta{Text: "after"}, host.TurnEnd{}},
		},
		busy: []bool{true, true},
	}
	c, out, errw := overflowChat(s)
	require.NoError(t, c.turn(context.Background(), "hi"))
	require.Equal(t, "before \nafter\n", out.String(), "the notice ends the line; the reply goes on after it")
	require.Contains(t, errw.String(), "panto: warning: the display fell behind the session by 4096 events")
	require.Equal(t, 2, s.subs)
}

// One whose turn ended while its TurnEnd was among the events missed
// (the session is not busy any more) ends the turn instead of waiting for
// ever.
func TestOverflowAfterTheTurnEnded(t *testing.T) {
	t.Parallel()
	s := &overflowing{
		script: [][]host.Event{{host.TurnStart{Text: "hi"}, host.Overflow{Pending: host.MaxPending}}},
		busy:   []bool{true, false},
	}
	c, _, errw := overflowChat(s)
	require.NoError(t, c.turn(context.Background(), "hi"))
	require.Contains(t, errw.String(), "fell behind")
}
