package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/editor"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/picker"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// overlay is what takes the screen (a page) or a box over it (a picker)
// until closed.
type overlay interface {
	key(m *Model, k tea.KeyPressMsg) tea.Cmd
	// view draws it: a page gets the whole screen, a box its inside.
	view(m *Model, width, height int) []string
	page() bool
	title() string
}

// closeOverlay takes the overlay down; what was queued behind the
// command that opened it goes now.
func (m *Model) closeOverlay() tea.Cmd {
	m.ov = nil
	m.list.Changed()
	return m.next()
}

// pager is a scrollable page of text: /prompt, /help.
type pager struct {
	name  string
	lines []string
	// render, when set, renders the page at a width (wrapping).
	render func(th *theme.Theme, width int) []string
	w      int
	th     *theme.Theme
	off    int
	hint   string
	height int
	// back is what closing the page goes back to (nil: the transcript).
	back overlay
}

// newPromptPager shows the effective prompt, each block under a line that
// says where it came from.
func newPromptPager(blocks []conversation.SystemText, short func(string) string) *pager {
	p := &pager{name: "/prompt", hint: fmt.Sprintf("%d block(s) · what the next request carries", len(blocks))}
	p.render = func(th *theme.Theme, width int) []string { return promptLines(th, blocks, width, short) }
	return p
}

func (p *pager) page() bool    { return true }
func (p *pager) title() string { return p.name }

func (p *pager) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	h := max(1, p.height)
	switch k.String() {
	case "q", "esc", "ctrl+c", "enter":
		if p.back == nil {
			return m.closeOverlay()
		}
		m.ov = p.back
		m.list.Changed()
	case "up", "k":
		p.off--
	case "down", "j":
		p.off++
	case "pgup", "b":
		p.off -= h - 1
	case "pgdown", " ", "f":
		p.off += h - 1
	case "home", "g":
		p.off = 0
	case "end", "G":
		p.off = len(p.lines)
	}
	return nil
}

func (p *pager) view(m *Model, width, height int) []string {
	if p.render != nil && (p.w != width || p.th != m.th) {
		p.w, p.th = width, m.th
		p.lines = p.render(m.th, width)
	}
	th := m.th
	head := th.AccentBold.Render(p.name)
	if p.hint != "" {
		head += th.Dim.Render(" · " + p.hint)
	}
	body := height - 2
	p.height = body
	p.off = min(max(0, p.off), max(0, len(p.lines)-body))
	out := []string{ansi.Truncate(head, width, "…")}
	for i := p.off; i < len(p.lines) && len(out) < body+1; i++ {
		out = append(out, ansi.Truncate(p.lines[i], width, "…"))
	}
	for len(out) < body+1 {
		out = append(out, "")
	}
	pos := "all"
	if len(p.lines) > body {
		pos = fmt.Sprintf("%d–%d of %d", p.off+1, min(len(p.lines), p.off+body), len(p.lines))
	}
	out = append(out, th.Dim.Render(ansi.Truncate(fmt.Sprintf("%s · ↑↓ PgUp PgDn Home End scroll · q or Esc closes", pos), width, "…")))
	return out
}

// modelPicker is /model: the models to choose from, the one in use
// marked.
type modelPicker struct {
	pk *picker.Model
}

func newModelPicker(models []string, current string) *modelPicker {
	var items []picker.Item
	for _, x := range models {
		it := picker.Item{Title: x}
		if x == current {
			it.Mark, it.Desc = "*", "in use"
		}
		items = append(items, it)
	}
	pk := picker.New("Model", items)
	pk.Hint = "Enter switches (recorded) · type a name · Esc closes"
	pk.Select(current)
	return &modelPicker{pk: pk}
}

func (p *modelPicker) page() bool    { return false }
func (p *modelPicker) title() string { return "/model" }

func (p *modelPicker) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	switch p.pk.Update(k) {
	case picker.Cancel:
		return m.closeOverlay()
	case picker.Choose:
		it, _ := p.pk.Selected()
		m.ov = nil
		if it.Title == m.status.model {
			return nil
		}
		return m.setModel(it.Title)
	}
	if k.String() == "enter" && p.pk.Len() == 0 && strings.TrimSpace(p.pk.Filter()) != "" {
		// A name not in the list: any model the provider knows.
		m.ov = nil
		return m.setModel(strings.TrimSpace(p.pk.Filter()))
	}
	return nil
}

func (p *modelPicker) view(m *Model, width, height int) []string {
	w := 44
	for _, it := range p.pk.Items() {
		w = max(w, ansi.StringWidth(it.Title)+12)
	}
	return p.pk.View(m.th, min(width, w), min(height, 14))
}

// question is an extension's question on screen.
type question struct {
	q     asked
	pk    *picker.Model
	input *editor.Model
}

// asked is a question to put to the user: a host.Question, kept as its
// fields and its two answers.
type asked struct {
	ID                       int64
	By, Title, Message, Hint string
	Type                     extension.QuestionKind
	Options                  []string
	Deadline                 time.Time
	Answer                   func(extension.Answer)
	Dismiss                  func()
}

func askedOf(q host.Question) asked {
	return asked{ID: q.ID, By: q.By, Title: q.Title, Message: q.Message, Hint: q.Placeholder, Type: q.Type,
		Options: q.Options, Deadline: q.Deadline, Answer: q.Answer, Dismiss: q.Dismiss}
}

// asker is an event that asks something (a test's, besides host.Question).
type asker interface{ asked() asked }

type questionTickMsg struct{}

// ask puts an extension's question up (after those already up).
func (m *Model) ask(q asked) tea.Cmd {
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
	if first && !q.Deadline.IsZero() {
		return tea.Tick(time.Second, func(time.Time) tea.Msg { return questionTickMsg{} })
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
func (m *Model) questionClosed(ev host.QuestionClosed) {
	for i, d := range m.asks {
		if d.q.ID == ev.ID {
			m.asks = append(m.asks[:i], m.asks[i+1:]...)
			m.say(transcript.Warning, fmt.Sprintf("%s's question was withdrawn: %s", d.q.By, errText(ev.Err)))
			return
		}
	}
}

// questionKey answers the question on top.
func (m *Model) questionKey(k tea.KeyPressMsg) tea.Cmd {
	d := m.asks[0]
	done := func(answer string) {
		m.asks = m.asks[1:]
		m.list.Changed()
		if answer != "" {
			m.say(transcript.Quiet, fmt.Sprintf("%s asked %q: %s", d.q.By, d.q.Title, answer))
		}
	}
	ks := k.String()
	if ks == "esc" || (ks == "ctrl+c" && d.input == nil) {
		d.q.Dismiss()
		done("dismissed")
		return nil
	}
	switch d.q.Type {
	case extension.AskConfirm:
		switch strings.ToLower(ks) {
		case "y":
			d.q.Answer(extension.Answer{Yes: true})
			done("yes")
		case "n", "enter":
			d.q.Answer(extension.Answer{Yes: false})
			done("no")
		}
	case extension.AskSelect:
		if d.pk.Update(k) == picker.Choose {
			it, _ := d.pk.Selected()
			var i int
			fmt.Sscan(it.Value, &i)
			d.q.Answer(extension.Answer{Index: i})
			done(it.Title)
		}
	default:
		if ks == "enter" {
			v := d.input.Value()
			if strings.TrimSpace(v) == "" {
				d.q.Dismiss()
				done("dismissed")
				return nil
			}
			d.q.Answer(extension.Answer{Text: v})
			done("answered")
			return nil
		}
		d.input.Update(k)
		return nil
	}
	return nil
}

// questionBox draws the question on top.
func (m *Model) questionBox(width int) []string {
	d := m.asks[0]
	th := m.th
	w := width
	var out []string
	title := d.q.By + " asks"
	if d.q.Title != "" {
		title += ": " + d.q.Title
	}
	for _, l := range strings.Split(ansi.Wrap(title, w, ""), "\n") {
		out = append(out, th.AccentBold.Render(l))
	}
	if d.q.Message != "" {
		for _, l := range strings.Split(strings.TrimRight(d.q.Message, "\n"), "\n") {
			out = append(out, strings.Split(ansi.Wrap(strings.ReplaceAll(l, "\t", "    "), w, ""), "\n")...)
		}
	}
	out = append(out, "")
	switch d.q.Type {
	case extension.AskConfirm:
		out = append(out, th.Bold.Render("[y]")+" yes   "+th.Bold.Render("[n]")+" no   "+th.Dim.Render("Esc dismisses"))
	case extension.AskSelect:
		out = append(out, d.pk.View(th, w, min(10, len(d.q.Options)+2))...)
		out = append(out, th.Dim.Render("↑↓ Enter chooses · Esc dismisses"))
	default:
		d.input.SetWidth(max(10, w))
		rows, _, _ := d.input.View(th)
		out = append(out, rows...)
		out = append(out, th.Dim.Render("Enter answers · Esc dismisses"))
	}
	if !d.q.Deadline.IsZero() {
		left := d.q.Deadline.Sub(m.now()).Round(time.Second)
		if left < 0 {
			left = 0
		}
		out = append(out, th.Dim.Render(fmt.Sprintf("no answer in %s counts as none", left)))
	}
	if len(m.asks) > 1 {
		out = append(out, th.Dim.Render(fmt.Sprintf("%d more question(s) waiting", len(m.asks)-1)))
	}
	return out
}

// box frames lines (the box at most width wide) with a rounded border
// and a space of padding.
func box(th *theme.Theme, lines []string, width int) []string {
	inner := 0
	for _, l := range lines {
		inner = max(inner, ansi.StringWidth(l))
	}
	inner = min(inner, width-4)
	bar := strings.Repeat("─", inner+2)
	out := []string{th.Border.Render("╭" + bar + "╮")}
	side := th.Border.Render("│")
	for _, l := range lines {
		out = append(out, side+" "+theme.Pad(ansi.Truncate(l, inner, "…"), inner)+" "+side)
	}
	return append(out, th.Border.Render("╰"+bar+"╯"))
}

// promptLines draws prompt blocks, each under a line that says where it
// came from.
func promptLines(th *theme.Theme, blocks []conversation.SystemText, width int, short func(string) string) []string {
	var out []string
	for i, b := range blocks {
		from := short(b.Source)
		if b.Source == "" {
			from = fmt.Sprintf("message %d", b.Index+1)
		}
		if b.Key != "" {
			from += " · section " + b.Key
		}
		if i > 0 {
			out = append(out, "")
		}
		head := fmt.Sprintf("── block %d · %s ", i+1, from)
		if n := width - ansi.StringWidth(head); n > 0 {
			head += strings.Repeat("─", n)
		}
		out = append(out, th.AccentBold.Render(ansi.Truncate(head, width, "…")))
		for _, l := range strings.Split(strings.TrimRight(b.Text, "\n"), "\n") {
			l = strings.ReplaceAll(l, "\t", "    ")
			if ansi.StringWidth(l) <= width {
				out = append(out, l)
				continue
			}
			out = append(out, strings.Split(ansi.Wrap(l, width, ""), "\n")...)
		}
	}
	return out
}
