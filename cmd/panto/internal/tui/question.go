package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/editor"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/picker"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// Questions: an extension's confirm, select or input, as a box over the
// screen. A question is answered only by the person who read it:
//
//   - Keys pressed before it was drawn, or within answerGrace after,
//     never answer it: they go where they were meant — the editor, or
//     the page under the box — as if it were not there. Nor do keys while
//     the user is typing: it takes keys only once no key has gone to the
//     screen for typingPause, so someone typing their next message as it
//     comes up goes on typing into the editor (the box says so) until
//     they stop to read it. (Esc and Ctrl-C dismiss it at any time: a
//     dismissal is never a yes.)
//   - Its whole subject shows, escaped: the box keeps the choice line on
//     screen, scrolls a subject taller than itself ("lines 1–20 of
//     400"), and highlights the parts the extension marked
//     (host.Question.Highlight).
//   - A confirm whose subject does not fit is answered yes only once its
//     last line and every highlighted line have been on screen; no
//     (n, Enter) and Esc work as soon as the grace is over. A select or
//     an input is answered only then too (PgUp and PgDn scroll them).
//   - An answer takes a key meant for the question: a confirm's yes is y
//     then Enter (not together, as in a paste); a select chooses with
//     Enter only after ↑ or ↓ moved its choice; an input's field takes
//     keys only after Tab; and while the editor holds a message being
//     written, a confirm or a select takes keys only after Tab too. An
//     Enter or the rest of a sentence typed for the message, after a
//     pause, never answers.
//
// Questions cannot trap the user: Ctrl-C dismisses the question on top
// and arms the quit, so Ctrl-C twice leaves however many questions are
// up or come; Ctrl-D on an empty editor leaves; once quitting, every
// question is dismissed and no new one is shown.

// answerGrace is how long a question is on screen before a key answers
// it.
const answerGrace = 300 * time.Millisecond

// typingPause is how long no key may have gone to the screen (the
// editor, the page) before a question takes keys: a person typing at a
// steady pace leaves less than this between keys, one who stops to read
// the question more. The adversary pass's typist, at 11 keys a second,
// answered the guard's question with the y of "tidy" once answerGrace
// alone had passed.
const typingPause = time.Second

// question is an extension's question on screen.
type question struct {
	q     asked
	pk    *picker.Model
	input *editor.Model
	// shown is when it was first drawn on top (zero until then).
	shown time.Time
	// yes is set once y was pressed on a confirm: Enter then answers
	// yes, any other key takes it back (the y was typing). yesAt is when.
	yes    bool
	yesKey tea.KeyPressMsg
	yesAt  time.Time
	// moved is set once ↑ or ↓ moved a select's choice: only then does
	// Enter choose (an Enter alone was meant to send a message). focused
	// is set once Tab took an input's field: only then do keys go to it.
	moved, focused bool
	// The subject at bodyW cells: its lines, which of them hold a
	// highlighted part, which have been on screen; off is the first on
	// screen, rows how many showed at the last draw.
	bodyW     int
	bodyTh    *theme.Theme
	body      []string
	hl, seen  []bool
	off, rows int
}

// asked is a question to put to the user: a host.Question, kept as its
// fields and its two answers.
type asked struct {
	ID                       int64
	By, Title, Message, Hint string
	Type                     extension.QuestionKind
	Options                  []string
	// Highlight are the parts of Message to show highlighted.
	Highlight []string
	Deadline  time.Time
	Answer    func(extension.Answer)
	// Dismiss closes it for the UI (quitting); DismissByUser because the
	// user said so (Esc): several of one extension's in a row mute its
	// questions (host.Question.DismissByUser). nil: Dismiss.
	Dismiss       func()
	DismissByUser func()
}

// dismissByUser closes the question because the user said so.
func (a asked) dismissByUser() {
	if a.DismissByUser != nil {
		a.DismissByUser()
		return
	}
	a.Dismiss()
}

// askedOf takes a question from the host: its texts are the
// extension's, kept made safe for the terminal (an answer is an index or
// the user's own text, so nothing is handed back).
func askedOf(q host.Question) asked {
	return asked{ID: q.ID, By: q.By, Title: q.Title, Message: q.Message, Hint: q.Placeholder, Type: q.Type,
		Options: q.Options, Highlight: q.Highlight, Deadline: q.Deadline, Answer: q.Answer, Dismiss: q.Dismiss, DismissByUser: q.DismissByUser}.safe()
}

// safe returns a with every text made safe for the terminal.
func (a asked) safe() asked {
	a.By, a.Title, a.Hint = termtext.Line(a.By), termtext.Line(a.Title), termtext.Line(a.Hint)
	a.Message = termtext.Sanitize(a.Message)
	a.Options = slices.Clone(a.Options)
	for i, o := range a.Options {
		a.Options[i] = termtext.Line(o)
	}
	a.Highlight = slices.Clone(a.Highlight)
	for i, h := range a.Highlight {
		a.Highlight[i] = termtext.Sanitize(h)
	}
	return a
}

// asker is an event that asks something (a test's, besides host.Question).
type asker interface{ asked() asked }

type questionTickMsg struct{}

// graceMsg comes when the question on top may have become answerable:
// the box is drawn again without its dimmed choice line.
type graceMsg struct{}

// ask puts an extension's question up (after those already up); while
// quitting it is dismissed unseen.
func (m *Model) ask(q asked) tea.Cmd {
	if m.quitting || m.closing.Load() {
		q.Dismiss()
		return nil
	}
	d := &question{q: q}
	switch q.Type {
	case extension.AskSelect:
		var items []picker.Item
		for i, o := range q.Options {
			items = append(items, picker.Item{Title: o, Value: fmt.Sprint(i)})
		}
		d.pk = picker.New("", items)
		d.pk.OwnFilter = len(items) > 8
	case extension.AskInput:
		ti := editor.New()
		ti.Single, ti.MaxHeight = true, 3
		ti.Prompt, ti.Continuation = "> ", "  "
		ti.Placeholder = q.Hint
		d.input = ti
	}
	first := len(m.asks) == 0
	m.asks = append(m.asks, d)
	m.list.Changed()
	if !first {
		return nil
	}
	cmds := []tea.Cmd{graceTick(answerGrace)}
	if !q.Deadline.IsZero() {
		cmds = append(cmds, tea.Tick(time.Second, func(time.Time) tea.Msg { return questionTickMsg{} }))
	}
	return tea.Batch(cmds...)
}

func graceTick(d time.Duration) tea.Cmd {
	return tea.Tick(d+10*time.Millisecond, func(time.Time) tea.Msg { return graceMsg{} })
}

// graceOver redraws the box once the question on top takes keys.
func (m *Model) graceOver() tea.Cmd {
	if len(m.asks) == 0 {
		return nil
	}
	m.list.Changed()
	d := m.asks[0]
	if d.shown.IsZero() {
		return graceTick(answerGrace)
	}
	if left := d.readyAt(m.typed).Sub(m.now()); left > 0 {
		return graceTick(left)
	}
	return nil
}

// questionTick keeps the deadline's countdown moving.
func (m *Model) questionTick() tea.Cmd {
	if len(m.asks) == 0 {
		return nil
	}
	m.list.Changed()
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return questionTickMsg{} })
}

// questionClosed takes a withdrawn question off the screen.
func (m *Model) questionClosed(ev host.QuestionClosed) tea.Cmd {
	for i, d := range m.asks {
		if d.q.ID == ev.ID {
			m.asks = append(m.asks[:i], m.asks[i+1:]...)
			m.say(transcript.Warning, fmt.Sprintf("%s's question was withdrawn: %s", d.q.By, errText(ev.Err)))
			if i == 0 {
				return m.nextQuestion()
			}
			return nil
		}
	}
	return nil
}

// nextQuestion is what the question now on top needs: a grace of its
// own before a key answers it.
func (m *Model) nextQuestion() tea.Cmd {
	m.list.Changed()
	if len(m.asks) == 0 {
		return nil
	}
	return graceTick(answerGrace)
}

// dismissAll dismisses every question up (quitting).
func (m *Model) dismissAll() {
	for _, d := range m.asks {
		d.q.Dismiss()
	}
	m.asks = nil
}

// ready reports whether the question takes keys: it was drawn, the
// grace has passed, and the user has stopped typing (typed is when a key
// last went to the screen).
func (d *question) ready(now, typed time.Time) bool {
	return !d.shown.IsZero() && !now.Before(d.readyAt(typed))
}

// readyAt is when a drawn question takes keys, if no more are typed.
func (d *question) readyAt(typed time.Time) time.Time {
	at := d.shown.Add(answerGrace)
	if p := typed.Add(typingPause); p.After(at) {
		at = p
	}
	return at
}

// typing reports whether keys typed lately keep the question from taking
// them (beyond its grace): the box then says where they go.
func (d *question) typing(now, typed time.Time) bool {
	return !d.shown.IsZero() && now.Before(typed.Add(typingPause))
}

// questionKey answers the question on top, or passes a key that came too
// soon to what is under it.
func (m *Model) questionKey(k tea.KeyPressMsg) tea.Cmd {
	d := m.asks[0]
	done := func(answer string) tea.Cmd {
		m.asks = m.asks[1:]
		m.flash = "" // what it said of this question
		if answer != "" {
			m.say(transcript.Quiet, fmt.Sprintf("%s asked %q: %s", d.q.By, d.q.Title, answer))
		}
		return m.nextQuestion()
	}
	ks := k.String()
	switch ks {
	case "ctrl+c":
		// Never an answer, and it stops the turn that asked, as Ctrl-C
		// does anywhere (Esc only dismisses); a second Ctrl-C quits,
		// whatever else is asked meanwhile.
		d.q.dismissByUser()
		m.quitArmed = m.now()
		say := "dismissed"
		if m.busy == turning {
			say = "dismissed; the turn stopped"
			m.interrupt()
		}
		return tea.Batch(done(say), m.setFlash("Ctrl-C again to quit (or Ctrl-D)", quitWindow))
	case "esc":
		d.q.dismissByUser()
		return done("dismissed")
	case "ctrl+d":
		if m.ed.empty() && (d.input == nil || d.input.Empty()) {
			return m.quit()
		}
	}
	if !d.ready(m.now(), m.typed) {
		// Typed before the question showed, as it came up, or by someone
		// still typing: the keys were meant for what was there. A choice
		// moved or a field taken before counts no more.
		m.typed = m.now()
		d.moved, d.focused = false, false
		return m.screenKey(k)
	}
	if d.q.Type != extension.AskInput && !d.focused && !m.ed.empty() {
		// The editor holds a message being written: its writer's keys
		// go on there (the end of a sentence, "…librar" then "y⏎",
		// said yes after a pause). Tab takes the question; the message
		// is kept.
		if ks == "tab" {
			d.focused = true
			m.list.Changed()
			return nil
		}
		m.typed = m.now()
		return m.screenKey(k)
	}
	switch d.q.Type {
	case extension.AskConfirm:
		if d.yes {
			// y, then Enter: yes. A y followed by anything else was the
			// start of a word: both keys go to the editor. So does a y
			// and an Enter that came together, faster than a person
			// presses two keys (a paste without brackets, a text
			// expander, keys a slow link bunched up).
			d.yes = false
			m.list.Changed()
			if ks == "enter" && m.now().Sub(d.yesAt) >= minYesGap {
				d.q.Answer(extension.Answer{Yes: true})
				return done("yes")
			}
			m.typed = m.now()
			return tea.Batch(m.screenKey(d.yesKey), m.screenKey(k))
		}
		switch strings.ToLower(ks) {
		case "y":
			if !d.fits() && !d.allSeen() {
				return m.setFlash("read it all first: ↓ PgDn scroll, Tab goes to what is highlighted", 3*time.Second)
			}
			d.yes, d.yesKey, d.yesAt = true, k, m.now()
			m.list.Changed()
			return nil
		case "n", "enter":
			d.q.Answer(extension.Answer{Yes: false})
			return done("no")
		}
		if k.Text != "" {
			// A letter, a digit, a space: someone typing their message
			// again after a pause. It goes there, and the question waits
			// for the next pause (it was eaten, and the y of "type" that
			// followed answered).
			m.typed = m.now()
			return m.screenKey(k)
		}
		d.scrollKey(ks)
	case extension.AskSelect:
		if k.Text != "" && !d.pk.OwnFilter {
			// Typing, as for a confirm: Enter chooses only after a pause
			// and a move of the choice.
			m.typed = m.now()
			d.moved = false
			return m.screenKey(k)
		}
		switch ks {
		case "pgup", "pgdown", "home", "end", "tab":
			// The subject scrolls; ↑↓ move the choice.
			if !d.fits() {
				d.scrollKey(ks)
				return nil
			}
		case "up", "down", "ctrl+p", "ctrl+n", "shift+tab":
			d.moved = true
		case "enter":
			// An Enter alone, however long after the question came up,
			// may have been meant to send the message being typed: a
			// choice is made with ↑↓ first. And a subject is read whole
			// first, as for a confirm's yes.
			if !d.moved {
				return m.setFlash("choose with ↑↓ first, then Enter", 3*time.Second)
			}
			if !d.fits() && !d.allSeen() {
				return m.setFlash("read it all first: PgDn scrolls, Tab goes to what is highlighted", 3*time.Second)
			}
		}
		if d.pk.Update(k) == picker.Choose {
			it, _ := d.pk.Selected()
			var i int
			fmt.Sscan(it.Value, &i)
			d.q.Answer(extension.Answer{Index: i})
			return done(it.Title)
		}
	default:
		switch ks {
		case "pgup", "pgdown":
			d.scrollKey(ks)
			return nil
		case "tab":
			if !d.focused {
				// The answer's field takes keys from now on.
				d.focused = true
				m.list.Changed()
				return nil
			}
		}
		if !d.focused {
			// Keys go to the message being typed until Tab takes the
			// field: the rest of a sentence typed after a pause never
			// answers.
			if ks == "enter" {
				return m.setFlash("Tab to answer in the field, then Enter", 3*time.Second)
			}
			m.typed = m.now()
			return m.screenKey(k)
		}
		if ks == "enter" {
			if !d.fits() && !d.allSeen() {
				return m.setFlash("read it all first: PgDn scrolls", 3*time.Second)
			}
			v := d.input.Value()
			if strings.TrimSpace(v) == "" {
				d.q.dismissByUser()
				return done("dismissed")
			}
			d.q.Answer(extension.Answer{Text: v})
			return done("answered")
		}
		d.input.Update(k)
	}
	return nil
}

// minYesGap is the least time between a confirm's y and its Enter for a
// yes: two keys a person presses, not two bytes of one paste.
const minYesGap = 40 * time.Millisecond

// scrollKey scrolls the subject; Tab goes to the next highlighted line
// not seen yet (or the next one).
func (d *question) scrollKey(ks string) {
	h := max(1, d.rows)
	switch ks {
	case "up", "k", "ctrl+p":
		d.off--
	case "down", "j", "ctrl+n":
		d.off++
	case "pgup", "b":
		d.off -= max(1, h-1)
	case "pgdown", "space", " ", "f":
		d.off += max(1, h-1)
	case "home", "g":
		d.off = 0
	case "end", "G":
		d.off = len(d.body)
	case "tab":
		next := -1
		for i, hl := range d.hl {
			if hl && !d.seen[i] {
				next = i
				break
			}
		}
		if next < 0 {
			for i := d.off + h; i < len(d.hl); i++ {
				if d.hl[i] {
					next = i
					break
				}
			}
		}
		if next >= 0 {
			d.off = next - h/3
		}
	}
	d.off = min(max(0, d.off), max(0, len(d.body)-h))
}

// fits reports whether the whole subject showed at once.
func (d *question) fits() bool { return d.rows >= len(d.body) }

// allSeen reports whether the subject's last line and every highlighted
// line have been on screen.
func (d *question) allSeen() bool {
	if len(d.seen) == 0 {
		return true
	}
	if !d.seen[len(d.seen)-1] {
		return false
	}
	for i, hl := range d.hl {
		if hl && !d.seen[i] {
			return false
		}
	}
	return true
}

// unseen counts the highlighted lines not on screen yet.
func (d *question) unseen() int {
	n := 0
	for i, hl := range d.hl {
		if hl && !d.seen[i] {
			n++
		}
	}
	return n
}
