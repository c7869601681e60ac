package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/picker"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
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

// modelHint is the picker's hint line: the box is made wide enough for
// it.
const modelHint = "Enter switches · a typed name wins · Esc closes"

func newModelPicker(items []picker.Item, current string) *modelPicker {
	pk := picker.New("Model", items)
	pk.Hint = modelHint
	pk.Select(current)
	return &modelPicker{pk: pk}
}

// setItems takes a longer list (the provider's came), the cursor staying
// on its item when nothing is typed.
func (p *modelPicker) setItems(items []picker.Item) {
	at, ok := p.pk.Selected()
	p.pk.SetItems(items)
	if ok && p.pk.Filter() == "" {
		p.pk.Select(at.Title)
	}
}

func (p *modelPicker) page() bool    { return false }
func (p *modelPicker) title() string { return "/model" }

func (p *modelPicker) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "enter" {
		// A name typed whole wins over the row the filter put first
		// (fake-model typed, fake-model-2 listed first); a name that
		// matches no row is any model the provider may have (checked).
		typed := strings.TrimSpace(p.pk.Filter())
		exact := slices.ContainsFunc(p.pk.Items(), func(it picker.Item) bool { return it.Title == typed })
		if typed != "" && (exact || p.pk.Len() == 0) {
			m.ov = nil
			if typed == m.status.model {
				return nil
			}
			return m.setModel(typed)
		}
	}
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
	return nil
}

func (p *modelPicker) view(m *Model, width, height int) []string {
	w := max(44, ansi.StringWidth(modelHint))
	for _, it := range p.pk.Items() {
		w = max(w, ansi.StringWidth(it.Title)+ansi.StringWidth(it.Desc)+6)
	}
	return p.pk.View(m.th, min(width, w), min(height, 14))
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
// came from. A block's text is a prompt file's, an extension's, a log's:
// it is shown through termtext.
func promptLines(th *theme.Theme, blocks []conversation.SystemText, width int, short func(string) string) []string {
	var out []string
	for i, b := range blocks {
		from := termtext.Line(short(b.Source))
		if rest, ok := strings.CutPrefix(b.Source, host.ReseedSource); ok {
			from = termtext.Line(short(rest)) + " (re-seeded)"
		}
		if b.Source == "" {
			from = fmt.Sprintf("message %d", b.Index+1)
		}
		if b.Key != "" {
			from += " · section " + termtext.Line(b.Key)
		}
		if i > 0 {
			out = append(out, "")
		}
		head := fmt.Sprintf("── block %d · %s ", i+1, from)
		if n := width - ansi.StringWidth(head); n > 0 {
			head += strings.Repeat("─", n)
		}
		out = append(out, th.AccentBold.Render(ansi.Truncate(head, width, "…")))
		for _, l := range strings.Split(strings.TrimRight(termtext.Sanitize(b.Text), "\n"), "\n") {
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
