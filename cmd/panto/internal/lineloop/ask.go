package lineloop

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/signals"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/host"
)

// How the line loop asks what an extension asks (docs/cli.md, "Line
// mode"): one question at a time, in the order they came; the whole
// subject shown, escaped, with the parts the extension highlights marked
// by a caret line and the choice line last, so nothing in the subject can
// hide or rewrite it; answered only by a line typed after the question
// appeared. Lines typed before it — read ahead, or still in the
// terminal's input queue — are discarded (and the user told), and a line
// that ends within Grace of it appearing is ignored: it was typed
// before it could be read. A confirm takes the word "yes"; anything else
// is no.

// asking holds the line loop's questions during one turn.
type asking struct {
	c *chat
	// cancel ends the turn (Ctrl-D or /quit at a question).
	cancel context.CancelCauseFunc
	// pending are the open questions; pending[0] is on the screen.
	pending []host.Question
	// shown is when pending[0] appeared.
	shown time.Time
	timer *time.Timer
	// closed: no more questions are asked in this turn, each is dismissed
	// as it comes (interrupted, or leaving).
	closed bool
	// hard ends panto when a turn left with Ctrl-D or /quit does not end
	// in time.
	hard *time.Timer
	// paste is set while the terminal marks pastes (bracketed paste, on
	// while a question is up); pasting while the lines read are a
	// paste's: a paste never answers (a pasted block whose first line was
	// yes confirmed rm -rf).
	paste, pasting bool
	// pasteAt is when the last line with a paste marker came.
	pasteAt time.Time
}

// ignoredPaste says a paste was not taken as an answer.
const ignoredPaste = "panto: ignored pasted text: a paste never answers a question; type the answer"

// The terminal's bracketed-paste controls and markers.
const (
	pasteOn    = "\x1b[?2004h"
	pasteOff   = "\x1b[?2004l"
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// markPastes asks the terminal to mark pastes, while a question is up.
func (a *asking) markPastes(on bool) {
	term := a.c.o.Terminal
	if term == nil || a.c.in == nil || !a.c.in.Terminal() || a.paste == on {
		return
	}
	a.paste = on
	termtext.Flush(a.c.o.Stdout) // what came before, first
	if on {
		fmt.Fprint(term, pasteOn)
	} else {
		fmt.Fprint(term, pasteOff)
		a.pasting = false
	}
}

// open reports whether a question is on the screen, waiting for a line.
func (a *asking) open() bool { return len(a.pending) > 0 }

// expiry fires when the question on the screen is past its deadline.
func (a *asking) expiry() <-chan time.Time {
	if a.timer == nil {
		return nil
	}
	return a.timer.C
}

// add takes a question: asked now when none is open, else after those
// before it.
func (a *asking) add(q host.Question) {
	if a.closed || a.c.in == nil {
		q.Dismiss() // nobody to ask: print mode, or the turn is ending
		return
	}
	a.pending = append(a.pending, q)
	if len(a.pending) == 1 {
		a.show()
	}
}

// show puts pending[0] on the screen, after discarding the type-ahead.
func (a *asking) show() {
	out, errw := a.c.o.Stdout, a.c.o.Stderr
	a.stopTimer()
	q := a.pending[0]
	dropped := a.c.in.Discard()
	for _, l := range dropped {
		if app.IsQuit(l.Text) {
			// Typed ahead, but meant: leaving answers nothing.
			a.leave()
			return
		}
	}
	if n := len(dropped); n > 0 {
		fmt.Fprintf(errw, "panto: discarded %s typed before the question\n", plural(n, "line"))
		termtext.Flush(errw)
	}
	a.markPastes(true)
	fmt.Fprint(out, Text(q))
	termtext.Flush(out)
	a.shown = time.Now()
	if !q.Deadline.IsZero() {
		a.timer = time.NewTimer(time.Until(q.Deadline))
	}
}

// lines takes what was typed: the answer to the question on the screen,
// once a line typed after it appeared comes.
func (a *asking) lines() {
	out, errw := a.c.o.Stdout, a.c.o.Stderr
	for a.open() {
		l, ok := a.c.in.Next()
		if !ok {
			if ended, _ := a.c.in.Done(); ended {
				fmt.Fprintln(out)
				a.leave() // Ctrl-D
			}
			return
		}
		// A paste never answers. A line that holds a paste marker is
		// skipped whole (pasted text may hold an end marker of its own:
		// ESC[201~yes), and so is every line that came with it: until
		// the paste's end, and within Grace of the last marker, since
		// a person types an answer later than that.
		raw := l.Text
		if strings.Contains(raw, pasteStart) || strings.Contains(raw, pasteEnd) {
			if !a.pasting && !l.At.Before(a.pasteAt.Add(Grace)) {
				fmt.Fprintln(errw, ignoredPaste)
				termtext.Flush(errw)
			}
			a.pasteAt = l.At
			a.pasting = strings.LastIndex(raw, pasteStart) > strings.LastIndex(raw, pasteEnd)
			if !a.pasting {
				fmt.Fprint(out, Choice(a.pending[0]))
				termtext.Flush(out)
			}
			continue
		}
		if a.pasting || l.At.Before(a.pasteAt.Add(Grace)) {
			continue
		}
		text := strings.TrimSpace(raw)
		switch {
		case app.IsQuit(text):
			a.leave()
			return
		case l.At.Before(a.shown):
			fmt.Fprintln(errw, "panto: discarded 1 line typed before the question")
		case l.At.Before(a.shown.Add(Grace)):
			fmt.Fprintf(errw, "panto: ignored a line typed as the question appeared (within %s): answer again\n", Grace)
		default:
			q := a.pending[0]
			a.pending = a.pending[1:]
			a.stopTimer()
			if note := answerQuestion(q, text); note != "" {
				fmt.Fprintln(out, "  "+note)
			}
			if a.open() {
				a.show()
			} else {
				a.markPastes(false)
			}
			continue
		}
		termtext.Flush(errw)
		// The choice again, last on the screen.
		fmt.Fprint(out, Choice(a.pending[0]))
		termtext.Flush(out)
	}
}

// expire withdraws the question on the screen: its deadline passed.
func (a *asking) expire() {
	a.timer = nil
	if !a.open() {
		return
	}
	fmt.Fprintln(a.c.o.Stdout, "\n  (no answer in time)")
	a.next()
}

// withdrawn takes a question the extension stopped waiting for off the
// screen (or out of the queue).
func (a *asking) withdrawn(ev host.QuestionClosed) {
	for i, q := range a.pending {
		if q.ID != ev.ID {
			continue
		}
		if i > 0 {
			a.pending = append(a.pending[:i:i], a.pending[i+1:]...)
			return
		}
		fmt.Fprintln(a.c.o.Stdout, "\n  (the question was withdrawn)")
		a.next()
		return
	}
}

// next drops the question on the screen and shows the one after it.
func (a *asking) next() {
	a.stopTimer()
	a.pending = a.pending[1:]
	if a.open() {
		a.show()
	} else {
		a.markPastes(false)
	}
}

// interrupted dismisses every question of the turn (Ctrl-C, or panto
// stopping): those open and those still to come.
func (a *asking) interrupted() {
	if a.open() {
		fmt.Fprintln(a.c.o.Stdout, "\n  (dismissed)")
	}
	a.dismissAll()
}

// leave dismisses every question and ends the turn, to leave the line
// loop (Ctrl-D or /quit at a question). When the turn does not end within
// signals.StopGrace, panto stops as on a Ctrl-C with nothing in the foreground.
func (a *asking) leave() {
	a.c.leaving = true
	a.dismissAll()
	a.cancel(signals.ErrInterrupted)
	if a.hard == nil {
		sig := a.c.o.Signals
		a.hard = time.AfterFunc(signals.StopGrace, func() { sig.Stop(os.Interrupt) })
	}
}

func (a *asking) dismissAll() {
	for _, q := range a.pending {
		q.Dismiss()
	}
	a.pending = nil
	a.closed = true
	a.stopTimer()
	a.markPastes(false)
}

// done ends the turn's asking: what is still open is dismissed.
func (a *asking) done() {
	a.dismissAll()
	if a.hard != nil {
		a.hard.Stop()
	}
}

func (a *asking) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

// answerQuestion answers q with the line typed; it returns a note for
// the user, or "".
func answerQuestion(q host.Question, text string) string {
	a, dismiss, note := Decide(q, text)
	if dismiss {
		q.DismissByUser() // the user's empty line (or no choice of the list)
	} else {
		q.Answer(a)
	}
	return note
}

// plural is "1 line", "2 lines".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
