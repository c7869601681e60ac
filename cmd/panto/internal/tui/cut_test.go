package tui

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/host"
)

// A stream cut mid-reply marks the half reply as cut, and the error line
// says in words that the stream ended before the reply did and what was
// not recorded, the decoder's error under it.
func TestStreamCutMarksTheHalfReply(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.TurnStart{Text: text}
		ch <- host.TextDelta{Text: "the first half of an answer"}
		err := fmt.Errorf("anthropic: decode stream: %w: unexpected EOF", host.ErrTruncated)
		ch <- host.Error{Err: err}
		ch <- host.TurnEnd{Err: err}
	}
	h := newHarness(t, f)
	h.typ("go")
	h.enter()
	h.idle()
	s := h.screen()
	require.Contains(t, s, "the first half of an answer")
	require.Contains(t, s, "cut: the stream ended here; this half reply was not recorded")
	require.Contains(t, s, "✗ the provider's stream ended before the reply did: the half reply above")
	require.Contains(t, s, "send a message to try again")
	require.Contains(t, s, "unexpected EOF", "the decoder's error is kept under it")
}
