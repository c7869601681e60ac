package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
)

// The normal screen, the default: what the conversation settled goes
// into the terminal's scrollback as it settles — printed above the
// program (tea.Println), where the terminal's own scrolling, selection,
// search and copy reach it, and where it stays after panto exits — and
// the frame panto redraws is only what still changes: the block
// streaming, the tool calls running, a run of notices or prompt changes
// still growing, the queue, the editor and the status line. Items
// settle in order: one still running keeps those after it in the frame
// until it ends.
//
// The alternate screen (screen = "alt") keeps the whole transcript in
// the frame, scrolled by panto, and prints it on exit. A page (/tree,
// /prompt, /help, the transcript pager) takes the alternate screen while
// it is up, on either screen.

// normal reports whether the UI draws on the normal screen.
func (m *Model) normal() bool { return !m.o.AltScreen }

// onPage reports whether a page is up: it has the alternate screen, and
// nothing can be printed into the normal one's scrollback meanwhile.
func (m *Model) onPage() bool { return m.ov != nil && m.ov.page() && len(m.asks) == 0 }

// settled reports whether a transcript item will not change any more,
// so that it can go into the scrollback.
func (m *Model) settled(i int) bool {
	switch it := m.list.At(i).(type) {
	case *transcript.Tool:
		return it.Done()
	case *transcript.Reply:
		return it != m.reply && !it.Streaming()
	case *transcript.Notice:
		return it != m.retryItem && it != m.compaction
	case *transcript.System:
		return it != m.system
	case *transcript.NoticeRun:
		// The run at the end is added to by the next notice.
		return i < m.list.Len()-1
	}
	return true
}

// commit prints the settled items at the head of the frame's part of
// the transcript into the scrollback, and takes them out of the frame.
func (m *Model) commit() tea.Cmd {
	if !m.normal() || m.quitting || m.onPage() {
		return nil // a page has the alternate screen: it waits
	}
	var b strings.Builder
	m.printItems(&b, func(i int) bool { return m.settled(i) })
	return m.print(b.String())
}

// printedMsg says the print before it in its sequence was written.
type printedMsg struct{}

// print puts text into the scrollback, after what was printed before:
// one print at a time, the next once the program wrote the one before
// (each print runs as a command of its own, and commands race).
func (m *Model) print(text string) tea.Cmd {
	if text = strings.TrimSuffix(text, "\n"); text != "" {
		m.printQ = append(m.printQ, text)
	}
	return m.printNext()
}

func (m *Model) printNext() tea.Cmd {
	if m.printing || m.printHeld || len(m.printQ) == 0 || m.onPage() {
		return nil
	}
	lines := strings.Split(m.downsample(strings.Join(m.printQ, "\n")), "\n")
	m.printQ, m.printing = nil, true
	// In pieces no taller than half the screen: the program inserts a
	// print above its frame, which a piece taller than the screen
	// pushes off it.
	n := max(1, m.height/2)
	var cmds []tea.Cmd
	for len(lines) > 0 {
		k := min(n, len(lines))
		cmds = append(cmds, tea.Println(strings.Join(lines[:k], "\n")))
		lines = lines[k:]
	}
	cmds = append(cmds, func() tea.Msg { return printedMsg{} })
	return tea.Sequence(cmds...)
}

// printItems writes the items not printed yet, from the first, while ok
// holds, each after a blank line (but the very first), and marks them
// printed.
func (m *Model) printItems(b *strings.Builder, ok func(i int) bool) {
	c := m.ctxFor()
	for m.printed < m.list.Len() && ok(m.printed) {
		if m.printedAny {
			b.WriteByte('\n')
		}
		ls := m.list.At(m.printed).Render(c)
		for j := range ls.Len() {
			b.WriteString(m.guard(ls.Line(j)))
			b.WriteByte('\n')
		}
		if ls.Len() == 0 {
			b.WriteByte('\n')
		}
		m.printed++
		m.printedAny = true
	}
}

// downsample writes s in the colours the terminal has (the program does
// it for the frame, not for what it prints above it): none for NO_COLOR.
func (m *Model) downsample(s string) string {
	p := m.profile
	if m.o.NoColor {
		p = colorprofile.ASCII
	}
	if p == colorprofile.TrueColor || p == colorprofile.Unknown {
		return s
	}
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	_, _ = w.WriteString(s)
	return b.String()
}

// liveLines are the frame's part of the transcript on the normal screen:
// the items not in the scrollback yet, their last rows when they are
// more than rows (a line above says so). It reads only the rows it shows.
func (m *Model) liveLines(rows int) []string {
	n := m.list.Len()
	if m.printed >= n || rows <= 0 {
		return nil
	}
	c := m.ctxFor()
	rev := make([]string, 0, rows)
	more := false
walk:
	for i := n - 1; i >= m.printed; i-- {
		ls := m.list.At(i).Render(c)
		// An item's block: a blank line before it (but before the very
		// first), then its lines.
		sep := i > m.printed || m.printedAny
		for j := ls.Len() - 1; j >= -1; j-- {
			if j < 0 && !sep {
				break
			}
			if len(rev) == rows {
				more = j >= 0 || i > m.printed
				break walk
			}
			line := ""
			if j >= 0 {
				line = ls.Line(j)
			}
			rev = append(rev, line)
		}
	}
	if more {
		rev[len(rev)-1] = m.th.Dim.Render(ansi.Truncate("↑ more above: the whole block goes into the scrollback when it ends", m.width, "…"))
	}
	out := make([]string, len(rev))
	for i, l := range rev {
		out[len(rev)-1-i] = m.guard(l)
	}
	return out
}

// farewell is what panto leaves in the terminal when the UI has quit:
// on the normal screen the transcript's part still in the frame, on the
// alternate one the transcript (a resumed history from its tail), then
// the line that says how to come back to the session.
func (m *Model) farewell() string {
	if m.reply != nil {
		m.reply.SetNote("cut short by quitting: nothing of this half reply was recorded")
		m.reply.Finish()
		m.reply = nil
	}
	for id, t := range m.tools {
		t.Abandon("cut short by quitting (recorded with an error result)")
		delete(m.tools, id)
	}
	m.system, m.retryItem, m.compaction = nil, nil, nil
	var b strings.Builder
	for _, p := range m.printQ {
		// Printed, but not written before the program ended.
		b.WriteString(p)
		b.WriteByte('\n')
	}
	m.printQ = nil
	m.printItems(&b, func(int) bool { return true })
	if line := m.exitLine(); line != "" {
		if m.printedAny {
			b.WriteByte('\n')
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return m.downsample(b.String())
}

// exitLine names the session and how to resume it, or says none was
// recorded.
func (m *Model) exitLine() string {
	if m.info.ID == "" {
		return ""
	}
	th := m.th
	if m.info.Path == "" {
		return m.guard(th.Dim.Render("this session was not recorded (--no-session)"))
	}
	// One line at 80 columns, the id whole (to copy) in the command.
	return m.guard(th.Dim.Render("resume with panto -c or panto --resume ") + th.Bold.Render(m.info.ID))
}

// tailStart is where a history of items starts to be shown on the normal
// screen (and printed on exit from the alternate one): the last items
// that fill two screens, at most maxTailItems of them. The rest stay in
// the log (/tree, /transcript, panto session export show them): a
// resumed session of thousands of messages costs its first frame what
// its last screens cost.
func (m *Model) tailStart(items []transcript.Item) int {
	c := m.ctxFor()
	rows := 0
	for i := len(items) - 1; i >= 0; i-- {
		rows += max(1, items[i].Render(c).Len()) + 1
		if rows >= 2*m.height || len(items)-i >= maxTailItems {
			return i
		}
	}
	return 0
}

const maxTailItems = 40

// queueLines are the messages waiting behind the turn, shown above the
// activity bar: the ones steered into it first, then the follow-ups;
// each a line, at most four, then how many more.
func (m *Model) queueLines() []string {
	if len(m.queued) == 0 && len(m.steered) == 0 {
		return nil
	}
	th := m.th
	var out []string
	row := func(mark, text string) {
		text = strings.Join(strings.Fields(text), " ")
		out = append(out, m.guard(th.Dim.Render(mark)+ansi.Truncate(text, max(1, m.width-len([]rune(mark))-1), "…")))
	}
	all := len(m.steered) + len(m.queued)
	for _, s := range m.steered {
		if len(out) == 4 {
			break
		}
		row("  ↳ steering: ", s)
	}
	for _, q := range m.queued {
		if len(out) == 4 {
			break
		}
		row("  ⏵ queued: ", q.text)
	}
	hint := "Alt+↑ takes them back to edit · Esc stops the turn and takes them back"
	if m.sess == nil {
		hint = "sent once the extensions have started · Alt+↑ takes them back"
	}
	if more := all - len(out); more > 0 {
		hint = fmt.Sprintf("%d more · ", more) + hint
	}
	out = append(out, m.guard(th.Dim.Render(ansi.Truncate("    "+hint, m.width, "…"))))
	return out
}
