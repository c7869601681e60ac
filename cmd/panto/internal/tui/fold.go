package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
)

// Folding: Ctrl-O expands or folds the block you read — on the
// alternate screen the one under the middle of the screen when it is
// scrolled, the last on screen when it follows new output, never one
// off screen; on the normal screen the newest still in the frame, or
// else the newest folded one already in the scrollback, which is printed
// again, whole, below. Ctrl-Shift-O expands or folds every block on the
// alternate screen, and opens the whole transcript, every block
// expanded, on the normal one (PgUp and /transcript open it too).

// foldable reports whether item i can be expanded or folded.
func (m *Model) foldable(i int) bool {
	c, ok := m.list.At(i).(transcript.Collapsible)
	return ok && c.Foldable()
}

// toggleFocused is Ctrl-O.
func (m *Model) toggleFocused() tea.Cmd {
	toggle := func(i int) {
		m.list.At(i).(transcript.Collapsible).Toggle()
		m.list.Changed()
	}
	if !m.normal() {
		if i := m.list.Focused(m.foldable); i >= 0 {
			toggle(i)
			return nil
		}
		return m.setFlash("nothing on screen to expand", 2*time.Second)
	}
	for i := m.list.Len() - 1; i >= m.printed; i-- {
		if m.foldable(i) {
			toggle(i)
			return nil
		}
	}
	for i := min(m.printed, m.list.Len()) - 1; i >= 0; i-- {
		c, ok := m.list.At(i).(transcript.Collapsible)
		if !ok || !c.Foldable() || c.Expanded() {
			continue
		}
		c.Toggle()
		m.list.Changed()
		var b strings.Builder
		b.WriteString(m.guard(m.th.Dim.Render("⤷ shown again, whole:")))
		b.WriteByte('\n')
		ls := c.Render(m.ctxFor())
		for j := range ls.Len() {
			b.WriteString(m.guard(ls.Line(j)))
			b.WriteByte('\n')
		}
		return m.print("\n" + b.String())
	}
	return m.setFlash("nothing folded · PgUp shows the whole transcript", 2*time.Second)
}

// toggleAll is Ctrl-Shift-O on the alternate screen: every block
// expanded, or, when all are, every one folded.
func (m *Model) toggleAll() {
	expand := false
	for i := range m.list.Len() {
		if c, ok := m.list.At(i).(transcript.Collapsible); ok && c.Foldable() && !c.Expanded() {
			expand = true
			break
		}
	}
	for i := range m.list.Len() {
		if c, ok := m.list.At(i).(transcript.Collapsible); ok && c.Foldable() && c.Expanded() != expand {
			c.Toggle()
		}
	}
	m.list.Changed()
}

// openTranscript opens the whole transcript as a page (the alternate
// screen, for a moment), at its end; all expands every block in it.
func (m *Model) openTranscript(all bool) tea.Cmd {
	if m.ov != nil {
		return nil
	}
	items := m.list.Items()
	p := &pager{name: "transcript", hint: fmt.Sprintf("%d block(s) this run", len(items))}
	if all {
		p.hint += ", every one expanded"
	}
	p.render = func(th *theme.Theme, width int) []string {
		c := transcript.Ctx{Width: width, Theme: th, Now: m.now(), Frame: m.frame}
		var out []string
		for i, it := range items {
			if i > 0 {
				out = append(out, "")
			}
			cl, ok := it.(transcript.Collapsible)
			flip := all && ok && !cl.Expanded()
			if flip {
				cl.Toggle()
			}
			ls := it.Render(c)
			for j := range ls.Len() {
				out = append(out, ls.Line(j))
			}
			if flip {
				cl.Toggle()
			}
		}
		return out
	}
	p.off = 1 << 30 // its end: what was read last
	m.ov = p
	return nil
}

// click is a click with the mouse taken (config mouse): on the
// alternate screen, a click on a block folds or expands it.
func (m *Model) click(c tea.MouseClickMsg) tea.Cmd {
	if c.Button != tea.MouseLeft || m.normal() || m.ov != nil || len(m.asks) > 0 {
		return nil
	}
	if i := m.list.ItemAt(c.Y); i >= 0 && m.foldable(i) {
		m.list.At(i).(transcript.Collapsible).Toggle()
		m.list.Changed()
	}
	return nil
}
