package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// How the line loop asks what an extension asks (docs/cli.md, "Line
// mode"): one question at a time, in the order they came; the whole
// subject shown, escaped, with the parts the extension highlights marked
// by a caret line and the choice line last, so nothing in the subject can
// hide or rewrite it; answered only by a line typed after the question
// appeared. Lines typed before it — read ahead, or still in the
// terminal's input queue — are discarded (and the user told), and a line
// that ends within questionGrace of it appearing is ignored: it was typed
// before it could be read. A confirm takes the word "yes"; anything else
// is no.

// questionGrace is how long after a question appears a line that ends is
// taken as typed before it was read, and ignored.
const questionGrace = 300 * time.Millisecond

// longMessage is the number of lines past which a question says how long
// its message was (to scroll back to).
const longMessage = 20

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
	out, errw := a.c.e.stdout, a.c.e.stderr
	a.stopTimer()
	q := a.pending[0]
	dropped := a.c.in.discard()
	for _, l := range dropped {
		if isQuit(l.text) {
			// Typed ahead, but meant: leaving answers nothing.
			a.leave()
			return
		}
	}
	if n := len(dropped); n > 0 {
		fmt.Fprintf(errw, "panto: discarded %s typed before the question\n", plural(n, "line"))
		flush(errw)
	}
	fmt.Fprint(out, questionText(q))
	flush(out)
	a.shown = time.Now()
	if !q.Deadline.IsZero() {
		a.timer = time.NewTimer(time.Until(q.Deadline))
	}
}

// lines takes what was typed: the answer to the question on the screen,
// once a line typed after it appeared comes.
func (a *asking) lines() {
	out, errw := a.c.e.stdout, a.c.e.stderr
	for a.open() {
		l, ok := a.c.in.next()
		if !ok {
			if ended, _ := a.c.in.done(); ended {
				fmt.Fprintln(out)
				a.leave() // Ctrl-D
			}
			return
		}
		text := strings.TrimSpace(l.text)
		switch {
		case isQuit(text):
			a.leave()
			return
		case l.at.Before(a.shown):
			fmt.Fprintln(errw, "panto: discarded 1 line typed before the question")
		case l.at.Before(a.shown.Add(questionGrace)):
			fmt.Fprintf(errw, "panto: ignored a line typed as the question appeared (within %s): answer again\n", questionGrace)
		default:
			q := a.pending[0]
			a.pending = a.pending[1:]
			a.stopTimer()
			if note := answerQuestion(q, text); note != "" {
				fmt.Fprintln(out, "  "+note)
			}
			if a.open() {
				a.show()
			}
			continue
		}
		flush(errw)
		// The choice again, last on the screen.
		fmt.Fprint(out, choicePrompt(a.pending[0]))
		flush(out)
	}
}

// expire withdraws the question on the screen: its deadline passed.
func (a *asking) expire() {
	a.timer = nil
	if !a.open() {
		return
	}
	fmt.Fprintln(a.c.e.stdout, "\n  (no answer in time)")
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
		fmt.Fprintln(a.c.e.stdout, "\n  (the question was withdrawn)")
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
	}
}

// interrupted dismisses every question of the turn (Ctrl-C, or panto
// stopping): those open and those still to come.
func (a *asking) interrupted() {
	if a.open() {
		fmt.Fprintln(a.c.e.stdout, "\n  (dismissed)")
	}
	a.dismissAll()
}

// leave dismisses every question and ends the turn, to leave the line
// loop (Ctrl-D or /quit at a question). When the turn does not end within
// stopGrace, panto stops as on a Ctrl-C with nothing in the foreground.
func (a *asking) leave() {
	a.c.leaving = true
	a.dismissAll()
	a.cancel(errInterrupted)
	if a.hard == nil {
		sig := a.c.e.sig
		a.hard = time.AfterFunc(stopGrace, func() { sig.stop(os.Interrupt) })
	}
}

func (a *asking) dismissAll() {
	for _, q := range a.pending {
		q.Dismiss()
	}
	a.pending = nil
	a.closed = true
	a.stopTimer()
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

// isQuit reports whether a line is /quit or /exit.
func isQuit(line string) bool {
	name, args, ok := slashCommand(strings.TrimSpace(line))
	return ok && args == "" && (name == "quit" || name == "exit")
}

// answerQuestion answers q with the line typed; it returns a note for
// the user, or "".
func answerQuestion(q host.Question, text string) string {
	switch q.Type {
	case extension.AskConfirm:
		yes := strings.EqualFold(text, "yes")
		q.Answer(extension.Answer{Yes: yes})
		if !yes && text != "" {
			return "(no: only the word yes confirms)"
		}
	case extension.AskSelect:
		var n int
		if _, err := fmt.Sscan(text, &n); err != nil || n < 1 || n > len(q.Options) {
			q.Dismiss()
			return "(dismissed)"
		}
		q.Answer(extension.Answer{Index: n - 1})
	default:
		if text == "" {
			q.Dismiss()
			return "(dismissed)"
		}
		q.Answer(extension.Answer{Text: text})
	}
	return ""
}

// questionText is a question as the line loop shows it, ending with its
// choice line. Every text in it is the extension's, escaped: nothing in
// it can move the cursor, erase a line or hide the choice.
func questionText(q host.Question) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n? %s asks: %s\n", termtext.Line(q.By), termtext.Line(q.Title))
	if msg := strings.TrimRight(q.Message, "\n"); msg != "" {
		lines := strings.Split(termtext.Sanitize(msg), "\n")
		marks := highlights(q.Highlight)
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
			if c := caretLine(l, marks); c != "" {
				b.WriteString("  " + c + "\n")
			}
		}
		if len(lines) > longMessage {
			fmt.Fprintf(&b, "  (%d lines: the whole message is above)\n", len(lines))
		}
	}
	switch q.Type {
	case extension.AskSelect:
		for i, o := range q.Options {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, termtext.Line(o))
		}
	case extension.AskConfirm:
	default:
		if q.Placeholder != "" {
			fmt.Fprintf(&b, "  (%s)\n", termtext.Line(q.Placeholder))
		}
	}
	b.WriteString(choicePrompt(q))
	return b.String()
}

// choicePrompt is the last line of a question: what to type.
func choicePrompt(q host.Question) string {
	switch q.Type {
	case extension.AskConfirm:
		return "  type yes to confirm, anything else is no: "
	case extension.AskSelect:
		return "  number (empty to dismiss): "
	}
	return "  > "
}

// highlights are the pieces of the highlighted parts to mark, as they
// read escaped and line by line.
func highlights(parts []string) []string {
	var out []string
	for _, p := range parts {
		for _, piece := range strings.Split(termtext.Sanitize(p), "\n") {
			if strings.TrimSpace(piece) != "" {
				out = append(out, piece)
			}
		}
	}
	return out
}

// caretLine marks with ^ where the pieces occur in line (an escaped
// line of the message), or is "" when none does. It is aligned under the
// line: a tab under a tab, the width of each rune in spaces.
func caretLine(line string, pieces []string) string {
	if len(pieces) == 0 {
		return ""
	}
	marked := make([]bool, len(line))
	found := false
	for _, p := range pieces {
		for from := 0; from < len(line); {
			i := strings.Index(line[from:], p)
			if i < 0 {
				break
			}
			for k := from + i; k < from+i+len(p); k++ {
				marked[k] = true
			}
			found = true
			from += i + len(p)
		}
	}
	if !found {
		return ""
	}
	var b strings.Builder
	for i, r := range line {
		w := ansi.StringWidth(string(r))
		switch {
		case marked[i]:
			b.WriteString(strings.Repeat("^", w))
		case r == '\t':
			b.WriteByte('\t')
		default:
			b.WriteString(strings.Repeat(" ", w))
		}
	}
	return strings.TrimRight(b.String(), " \t")
}

// plural is "1 line", "2 lines".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
