package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
)

// The screen, top to bottom: the transcript, the activity bar (what
// panto is doing, or a hint), the editor, the status line. A popup (the
// palette, @ completion) covers the bottom of the transcript; a page
// (/prompt, /help) replaces it all; a box (a question, /model) sits in
// the middle of it.

// viewCache keeps the transcript's lines between frames: a key press
// redraws the editor, not the transcript.
type viewCache struct {
	version, width, height int
	lines                  []string
	// The activity bar and the status line, by what they show (measuring
	// text is what costs).
	actKey, act string
	statKey     statusKey
	stat        string
}

// transcriptHeight is how many rows the transcript gets.
func (m *Model) transcriptHeight() int {
	return max(1, m.height-m.ed.ta.Height()-2)
}

// View draws the frame.
func (m *Model) View() tea.View {
	var v tea.View
	// A page takes the alternate screen on the normal one too: it is
	// drawn whole, and leaves the scrollback as it was.
	v.AltScreen = !m.normal() || m.onPage()
	v.WindowTitle = "panto"
	if !m.o.NoMouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	if m.quitting {
		return v
	}
	content, cursor := m.draw()
	v.Cursor = cursor
	v.SetContent(content)
	return v
}

// guard passes a piece of the frame through safeFrame, the last guard
// before the terminal: every piece draw puts in the frame goes through
// it once (a cached piece when it is made). Outside text is already safe
// where it came in; unguarded (tests only) shows what it is without.
func (m *Model) guard(s string) string {
	if m.unguarded {
		return s
	}
	return safeFrame(s)
}

// draw draws the screen's content and says where the cursor is (nil
// when a box or a page hides the editor).
func (m *Model) draw() (string, *tea.Cursor) {
	if m.ov != nil && m.ov.page() && len(m.asks) == 0 {
		return m.guard(strings.Join(m.ov.view(m, m.width, m.height), "\n")), nil
	}
	th := m.th
	tH := m.transcriptHeight()
	queue := append(m.queueLines(), m.imageLines()...)
	box := m.boxView()
	var lines []string
	if m.normal() {
		lines = m.liveLines(tH - len(queue))
		if box != nil {
			// A box needs room: the frame grows to hold it while it is
			// up (the scrollback above stays in view).
			lines = append(make([]string, max(0, min(tH, len(box)+1)-len(queue)-len(lines))), lines...)
		}
	} else {
		lines = m.transcriptLines(tH - len(queue))
	}
	if m.comp.open() && m.ov == nil {
		pop := m.popup(min(16, tH-1))
		if m.normal() {
			// Below what is live, the frame no taller than the screen.
			lines = append(lines[max(0, len(lines)+len(pop)+len(queue)-tH):], pop...)
		} else {
			lines = append(lines[:len(lines)-len(pop):len(lines)-len(pop)], pop...)
		}
	}
	lines = append(lines, queue...)
	var b strings.Builder
	b.Grow(m.width * (m.height + 2) * 2)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(m.activity())
	b.WriteByte('\n')
	rows, cx, cy := m.ed.ta.View(th)
	for _, r := range rows {
		b.WriteString(m.guard(r))
		b.WriteByte('\n')
	}
	b.WriteString(m.statusLine())
	content := b.String()
	if box != nil {
		height := m.height
		if m.normal() {
			height = len(lines) + 2 + len(rows)
		}
		return overlayBox(content, box, m.width, height, len(lines)), nil
	}
	return content, tea.NewCursor(cx, len(lines)+1+cy)
}

// transcriptLines are the transcript's rows, from the cache when nothing
// changed.
func (m *Model) transcriptLines(h int) []string {
	live := m.liveOnScreen()
	c := &m.view
	if !live && c.lines != nil && c.version == m.list.Version() && c.width == m.width && c.height == h {
		return append([]string(nil), c.lines...)
	}
	lines := m.list.View(m.ctxFor(), h)
	for i, l := range lines {
		lines[i] = m.guard(l)
	}
	c.version, c.width, c.height, c.lines = m.list.Version(), m.width, h, lines
	return append([]string(nil), lines...)
}

// liveOnScreen reports whether something on screen changes by itself (a
// running tool's spinner).
func (m *Model) liveOnScreen() bool {
	first, last := m.list.Shown()
	if first < 0 {
		return false
	}
	for i := first; i <= last && i < m.list.Len(); i++ {
		if l, ok := m.list.At(i).(transcript.Live); ok && l.Live() {
			return true
		}
	}
	return false
}

// activity is the bar above the editor: what runs and for how long, a
// flash, or where the transcript is.
func (m *Model) activity() string {
	th := m.th
	var text string
	now := m.now()
	switch {
	case m.flash != "" && now.Before(m.flashUntil) && len(m.asks) > 0:
		text = th.Warn.Render(m.flash) // what a key on a question did
	case len(m.asks) > 0:
		text = th.Warn.Render("? " + m.asks[0].q.By + " is asking you something")
	case m.busy != idle:
		el := now.Sub(m.busySince).Round(100 * time.Millisecond)
		text = th.Accent.Render(transcript.Spinner(m.frame)) + " " + th.Bold.Render(termtext.Line(m.busyWhat)) +
			th.Dim.Render(fmt.Sprintf(" %.1fs · Esc interrupts", el.Seconds()))
		if n := len(m.queued) + len(m.steered); n > 0 {
			text += th.Dim.Render(fmt.Sprintf(" · %d queued", n))
		}
		if !m.normal() && !m.list.Following() {
			text += th.Dim.Render(" · ↓ more below: Esc goes to the end")
		}
	case m.flash != "" && now.Before(m.flashUntil):
		text = th.Warn.Render(m.flash)
	case m.opening:
		text = th.Accent.Render(transcript.Spinner(m.frame)) + th.Dim.Render(" starting extensions…")
	case !m.normal() && !m.list.Following():
		text = th.Dim.Render("↓ more below · PgDn scrolls · Esc goes to the end")
	}
	key := strconv.Itoa(m.width) + "\x00" + text
	if key == m.view.actKey {
		return m.view.act
	}
	avail := m.width - 3
	if text != "" {
		text = ansi.Truncate(text, avail-1, "…") + " "
	}
	fill := max(0, avail-ansi.StringWidth(text))
	m.view.actKey = key
	lead := "── "
	if text == "" {
		lead = "───" // idle: one line, no gap in it
	}
	m.view.act = m.guard(th.Border.Render(lead) + text + th.Border.Render(strings.Repeat("─", fill)))
	return m.view.act
}

// statusLine is the status line, from the cache when nothing in it
// changed.
func (m *Model) statusLine() string {
	key := m.status.key(m.width, m.th)
	if key != m.view.statKey || m.view.stat == "" {
		m.view.statKey, m.view.stat = key, m.guard(m.status.view(m.th, m.width))
	}
	return m.view.stat
}

// popup draws the completion popup in at most h rows.
func (m *Model) popup(h int) []string {
	th := m.th
	rows := m.comp.pk.View(th, m.width-2, max(1, h-1))
	title := "commands · Enter runs · Tab completes · Esc closes"
	if m.comp.mode == compFile {
		title = "files · Tab or Enter inserts · Esc closes"
		if m.files == nil {
			rows = []string{th.Dim.Render("listing files…")}
		}
	}
	out := []string{th.Border.Render("╭─ ") + th.Dim.Render(ansi.Truncate(title, m.width-4, "…"))}
	for _, r := range rows {
		out = append(out, m.guard(th.Border.Render("│ ")+r))
	}
	return out
}

// boxView is the box over the screen: a question, or the model picker.
func (m *Model) boxView() []string {
	w := min(m.width-2, 72)
	var lines []string
	switch {
	case len(m.asks) > 0:
		// The box covers the transcript only: the activity bar, the
		// editor and the status line stay in view.
		lines = box(m.th, m.questionBox(w-4, max(3, m.transcriptHeight()-2)), w)
	case m.ov != nil && !m.ov.page():
		lines = box(m.th, m.ov.view(m, w-4, m.height-4), w)
	}
	for i, l := range lines {
		lines[i] = m.guard(l)
	}
	return lines
}

// overlayBox draws box in the middle of the frame, above row within
// when it fits there (the editor and the status line stay in view).
func overlayBox(frame string, box []string, width, height, within int) string {
	lines := strings.Split(frame, "\n")
	bw := 0
	for _, l := range box {
		bw = max(bw, ansi.StringWidth(l))
	}
	x := max(0, (width-bw)/2)
	y := max(0, min((height-len(box))/2-1, within-len(box)))
	for i, b := range box {
		if y+i >= len(lines) {
			break
		}
		l := lines[y+i]
		left := ansi.Truncate(l, x, "")
		if pad := x - ansi.StringWidth(left); pad > 0 {
			left += strings.Repeat(" ", pad)
		}
		right := ansi.TruncateLeft(l, x+bw, "")
		lines[y+i] = left + "\x1b[m" + b + "\x1b[m" + right
	}
	return strings.Join(lines, "\n")
}

// Ticks: a frame tick while a reply streams (its open block is rendered
// again at most 30 times a second, never per token), and an animation
// tick while something runs (the spinner, the elapsed time). Nothing
// ticks when panto is idle.

type flushMsg struct{}

type tickMsg struct{}

const (
	flushEvery = 33 * time.Millisecond
	tickEvery  = 100 * time.Millisecond
)

// scheduleFlush asks for a frame tick, when none is pending.
func (m *Model) scheduleFlush() tea.Cmd {
	if m.flushing {
		return nil
	}
	m.flushing = true
	return tea.Tick(flushEvery, func(time.Time) tea.Msg { return flushMsg{} })
}

func (m *Model) flush() tea.Cmd {
	m.flushing = false
	if m.reply != nil {
		m.reply.Flush()
		m.list.Changed()
	}
	return nil
}

// ensureTick starts the animation tick, when it is not running.
func (m *Model) ensureTick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tea.Tick(tickEvery, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m *Model) tick() tea.Cmd {
	m.ticking = false
	running := m.busy != idle || m.opening || len(m.tools) > 0 || m.compaction != nil
	if !running && (m.flash == "" || !m.now().Before(m.flashUntil)) {
		m.flash = ""
		return nil
	}
	m.frame++
	return m.ensureTick()
}
