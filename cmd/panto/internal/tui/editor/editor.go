// Package editor is the full-screen UI's text editor: multi-line, word
// wrapped, with the cursor keys and readline's keys (Ctrl-A/E/K/U/W/Y,
// Alt-B/F/D). It keeps the text exactly as given — tabs stay tabs, there
// is no length or line limit — because what it holds is sent to a model
// byte for byte.
//
// It is written here rather than taken from bubbles' textarea, which
// turns tabs into spaces, stops at 10,000 lines, and links lipgloss,
// whose package initialisation asks the terminal's colour support on
// every start of panto (under tmux it runs `tmux info`: 7 ms added to
// `panto -p`). Enter, Up and Down at the edges, and Tab are the owner's:
// Update leaves them alone.
package editor

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

// Model is the text being edited and the cursor.
type Model struct {
	// Prompt starts the first line, Continuation the others (the same
	// width).
	Prompt, Continuation string
	// Placeholder shows, dimmed, when there is no text.
	Placeholder string
	// MaxHeight bounds the rows shown; the view scrolls to the cursor.
	MaxHeight int
	// Single keeps the text on one line (a dialog's input): new lines
	// become spaces.
	Single bool

	lines    [][]rune
	row, col int
	// goal is the column Up and Down aim for, or -1.
	goal   int
	width  int
	scroll int
	kill   []rune
	// ph caches the placeholder's row.
	phKey phKey
	ph    string
	// wrap caches the rows of each line for the width.
	wrapW   int
	wrapVer int
	ver     int
	rows    [][]seg
}

type phKey struct {
	prompt, text string
	width        int
	th           *theme.Theme
}

// seg is one visual row of a line: runes [start, end).
type seg struct{ start, end int }

// New returns an empty editor.
func New() *Model {
	return &Model{lines: [][]rune{nil}, goal: -1, MaxHeight: 8, width: 80}
}

// SetWidth sets the width of the whole editor, prompt included.
func (m *Model) SetWidth(w int) {
	if w != m.width {
		m.width = max(w, 4)
		m.ver++
	}
}

// Width is the editor's width.
func (m *Model) Width() int { return m.width }

// textWidth is the room for text after the prompt.
func (m *Model) textWidth() int {
	return max(1, m.width-ansi.StringWidth(m.Prompt))
}

// Value returns the text.
func (m *Model) Value() string {
	var b strings.Builder
	for i, l := range m.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(string(l))
	}
	return b.String()
}

// Empty reports whether there is no text.
func (m *Model) Empty() bool { return len(m.lines) == 1 && len(m.lines[0]) == 0 }

// SetValue replaces the text; the cursor goes to its end.
func (m *Model) SetValue(s string) {
	m.Reset()
	m.InsertString(s)
}

// Reset empties the editor.
func (m *Model) Reset() {
	m.lines = [][]rune{nil}
	m.row, m.col, m.goal, m.scroll = 0, 0, -1, 0
	m.ver++
}

// InsertString types s at the cursor.
func (m *Model) InsertString(s string) {
	if s == "" {
		return
	}
	if m.Single {
		s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	}
	parts := strings.Split(s, "\n")
	line := m.lines[m.row]
	tail := append([]rune(nil), line[m.col:]...)
	head := append(line[:m.col:m.col], []rune(parts[0])...)
	if len(parts) == 1 {
		m.lines[m.row] = append(head, tail...)
		m.col = len(head)
	} else {
		newLines := make([][]rune, 0, len(parts))
		newLines = append(newLines, head)
		for _, p := range parts[1 : len(parts)-1] {
			newLines = append(newLines, []rune(p))
		}
		last := []rune(parts[len(parts)-1])
		col := len(last)
		newLines = append(newLines, append(last, tail...))
		rest := append([][]rune(nil), m.lines[m.row+1:]...)
		m.lines = append(append(m.lines[:m.row], newLines...), rest...)
		m.row += len(parts) - 1
		m.col = col
	}
	m.goal = -1
	m.ver++
}

// Line is the cursor's line (0-based); LineCount the number of lines.
func (m *Model) Line() int      { return m.row }
func (m *Model) LineCount() int { return len(m.lines) }

// Column is the cursor's column in runes.
func (m *Model) Column() int { return m.col }

// CurrentLine is the text of the cursor's line.
func (m *Model) CurrentLine() string { return string(m.lines[m.row]) }

// OnFirstRow reports whether the cursor is on the first visual row: Up
// there is the owner's (history).
func (m *Model) OnFirstRow() bool {
	return m.row == 0 && m.rowOf(m.row, m.col) == 0
}

// OnLastRow reports whether the cursor is on the last visual row.
func (m *Model) OnLastRow() bool {
	last := len(m.lines) - 1
	return m.row == last && m.rowOf(m.row, m.col) == len(m.wrapped(last))-1
}

// WordBeforeCursor is the run of non-blank characters the cursor ends.
func (m *Model) WordBeforeCursor() string {
	l := m.lines[m.row]
	start := m.col
	for start > 0 && !unicode.IsSpace(l[start-1]) {
		start--
	}
	return string(l[start:m.col])
}

// ReplaceWordBeforeCursor deletes the word before the cursor and types s.
func (m *Model) ReplaceWordBeforeCursor(s string) {
	n := len([]rune(m.WordBeforeCursor()))
	l := m.lines[m.row]
	m.lines[m.row] = append(l[:m.col-n:m.col-n], l[m.col:]...)
	m.col -= n
	m.ver++
	m.InsertString(s)
}

// Update takes a key; it reports whether the key was the editor's.
func (m *Model) Update(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "shift+enter", "alt+enter", "ctrl+j":
		if m.Single {
			return false
		}
		m.InsertString("\n")
	case "backspace", "ctrl+h":
		m.deleteBack()
	case "delete", "ctrl+d":
		m.deleteForward()
	case "left", "ctrl+b":
		m.left()
	case "right", "ctrl+f":
		m.right()
	case "alt+left", "ctrl+left", "alt+b":
		m.wordLeft()
	case "alt+right", "ctrl+right", "alt+f":
		m.wordRight()
	case "home", "ctrl+a":
		m.col, m.goal = 0, -1
	case "end", "ctrl+e":
		m.col, m.goal = len(m.lines[m.row]), -1
	case "up", "ctrl+p":
		m.vertical(-1)
	case "down", "ctrl+n":
		m.vertical(1)
	case "ctrl+home", "alt+<":
		m.row, m.col, m.goal = 0, 0, -1
	case "ctrl+end", "alt+>":
		m.row = len(m.lines) - 1
		m.col, m.goal = len(m.lines[m.row]), -1
	case "ctrl+k":
		m.killToEnd()
	case "ctrl+u":
		m.killToStart()
	case "ctrl+w", "alt+backspace", "ctrl+backspace":
		m.killWordBack()
	case "alt+d", "alt+delete", "ctrl+delete":
		m.killWordForward()
	case "ctrl+y":
		m.InsertString(string(m.kill))
	case "ctrl+t":
		m.transpose()
	case "space":
		m.InsertString(" ")
	default:
		if k.Text == "" || k.Mod&(tea.ModCtrl|tea.ModAlt|tea.ModSuper|tea.ModMeta|tea.ModHyper) != 0 {
			return false
		}
		m.InsertString(k.Text)
	}
	m.ver++
	return true
}

func (m *Model) deleteBack() {
	if m.col > 0 {
		l := m.lines[m.row]
		m.lines[m.row] = append(l[:m.col-1:m.col-1], l[m.col:]...)
		m.col--
		return
	}
	if m.row > 0 {
		prev := m.lines[m.row-1]
		m.col = len(prev)
		m.lines[m.row-1] = append(prev[:len(prev):len(prev)], m.lines[m.row]...)
		m.lines = append(m.lines[:m.row], m.lines[m.row+1:]...)
		m.row--
	}
}

func (m *Model) deleteForward() {
	l := m.lines[m.row]
	if m.col < len(l) {
		m.lines[m.row] = append(l[:m.col:m.col], l[m.col+1:]...)
		return
	}
	if m.row < len(m.lines)-1 {
		m.lines[m.row] = append(l[:len(l):len(l)], m.lines[m.row+1]...)
		m.lines = append(m.lines[:m.row+1], m.lines[m.row+2:]...)
	}
}

func (m *Model) left() {
	m.goal = -1
	switch {
	case m.col > 0:
		m.col--
	case m.row > 0:
		m.row--
		m.col = len(m.lines[m.row])
	}
}

func (m *Model) right() {
	m.goal = -1
	switch {
	case m.col < len(m.lines[m.row]):
		m.col++
	case m.row < len(m.lines)-1:
		m.row++
		m.col = 0
	}
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func (m *Model) wordLeft() {
	m.goal = -1
	if m.col == 0 {
		m.left()
		return
	}
	l := m.lines[m.row]
	for m.col > 0 && !isWord(l[m.col-1]) {
		m.col--
	}
	for m.col > 0 && isWord(l[m.col-1]) {
		m.col--
	}
}

func (m *Model) wordRight() {
	m.goal = -1
	l := m.lines[m.row]
	if m.col == len(l) {
		m.right()
		return
	}
	for m.col < len(l) && !isWord(l[m.col]) {
		m.col++
	}
	for m.col < len(l) && isWord(l[m.col]) {
		m.col++
	}
}

func (m *Model) killToEnd() {
	l := m.lines[m.row]
	if m.col == len(l) {
		m.kill = []rune{'\n'}
		m.deleteForward()
		return
	}
	m.kill = append([]rune(nil), l[m.col:]...)
	m.lines[m.row] = l[:m.col:m.col]
}

func (m *Model) killToStart() {
	l := m.lines[m.row]
	m.kill = append([]rune(nil), l[:m.col]...)
	m.lines[m.row] = append([]rune(nil), l[m.col:]...)
	m.col = 0
}

func (m *Model) killWordBack() {
	if m.col == 0 {
		m.deleteBack()
		return
	}
	end := m.col
	l := m.lines[m.row]
	for m.col > 0 && unicode.IsSpace(l[m.col-1]) {
		m.col--
	}
	for m.col > 0 && !unicode.IsSpace(l[m.col-1]) {
		m.col--
	}
	m.kill = append([]rune(nil), l[m.col:end]...)
	m.lines[m.row] = append(l[:m.col:m.col], l[end:]...)
}

func (m *Model) killWordForward() {
	l := m.lines[m.row]
	if m.col == len(l) {
		m.deleteForward()
		return
	}
	end := m.col
	for end < len(l) && !isWord(l[end]) {
		end++
	}
	for end < len(l) && isWord(l[end]) {
		end++
	}
	m.kill = append([]rune(nil), l[m.col:end]...)
	m.lines[m.row] = append(l[:m.col:m.col], l[end:]...)
}

func (m *Model) transpose() {
	l := m.lines[m.row]
	if len(l) < 2 || m.col == 0 {
		return
	}
	c := m.col
	if c == len(l) {
		c--
	}
	l[c-1], l[c] = l[c], l[c-1]
	m.col = min(c+1, len(l))
}

// vertical moves the cursor up (-1) or down (1) a visual row, keeping
// its column.
func (m *Model) vertical(dir int) {
	vr := m.rowOf(m.row, m.col)
	rows := m.wrapped(m.row)
	x := m.goal
	if x < 0 {
		x = m.cellsOf(m.row, rows[vr].start, m.col)
		m.goal = x
	}
	row, r := m.row, vr+dir
	switch {
	case r < 0:
		if row == 0 {
			m.col = 0
			return
		}
		row--
		r = len(m.wrapped(row)) - 1
	case r >= len(rows):
		if row == len(m.lines)-1 {
			m.col = len(m.lines[row])
			return
		}
		row++
		r = 0
	}
	s := m.wrapped(row)[r]
	m.row, m.col = row, m.colAt(row, s, x)
}

// wrapped returns the visual rows of line i.
func (m *Model) wrapped(i int) []seg {
	w := m.textWidth()
	if m.wrapW != w || m.wrapVer != m.ver || len(m.rows) != len(m.lines) {
		m.rows = make([][]seg, len(m.lines))
		m.wrapW, m.wrapVer = w, m.ver
	}
	if m.rows[i] == nil {
		m.rows[i] = wrapLine(m.lines[i], w)
	}
	return m.rows[i]
}

// wrapLine cuts a line into rows of at most w cells, at a space when
// one is there.
func wrapLine(l []rune, w int) []seg {
	var out []seg
	start := 0
	for {
		cells, i, lastSpace := 0, start, -1
		for i < len(l) {
			cw := runeWidth(l[i], cells)
			if cells+cw > w {
				break
			}
			cells += cw
			if l[i] == ' ' {
				lastSpace = i
			}
			i++
		}
		if i >= len(l) {
			return append(out, seg{start, len(l)})
		}
		end := i
		if lastSpace >= start && lastSpace+1 < i {
			end = lastSpace + 1
		}
		if end == start {
			end = start + 1
		}
		out = append(out, seg{start, end})
		start = end
	}
}

// runeWidth is r's width in cells at column col: a tab goes to the next
// multiple of 4.
func runeWidth(r rune, col int) int {
	switch {
	case r == '\t':
		return 4 - col%4
	case r < 32 || r == 0x7f:
		return 2 // shown as ^X
	}
	if esc, ok := escaped(r); ok {
		return len(esc)
	}
	return max(1, ansi.StringWidth(string(r)))
}

// escaped is how a rune above ASCII that a terminal would obey (a C1
// control, a bidi control) shows: termtext's escape, "\u009b". The
// text can hold them (a paste, a file name completed, a message put
// back from /tree): they are shown, never written raw.
func escaped(r rune) (string, bool) {
	if r < 0x80 || r == 0xfffd {
		return "", false
	}
	s := string(r)
	if termtext.Safe(s) {
		return "", false
	}
	return termtext.Sanitize(s), true
}

// rowOf is the visual row of line i that holds column col.
func (m *Model) rowOf(i, col int) int {
	rows := m.wrapped(i)
	for r, s := range rows {
		if col < s.end || r == len(rows)-1 {
			return r
		}
	}
	return 0
}

// cellsOf is the width of line i's runes [start, col).
func (m *Model) cellsOf(i, start, col int) int {
	cells := 0
	for _, r := range m.lines[i][start:col] {
		cells += runeWidth(r, cells)
	}
	return cells
}

// colAt is the column of row s of line i nearest x cells.
func (m *Model) colAt(i int, s seg, x int) int {
	cells := 0
	end := s.end
	if end > s.start && end < len(m.lines[i]) {
		end-- // the row's last column belongs to the next row
	}
	for c := s.start; c < end; c++ {
		cw := runeWidth(m.lines[i][c], cells)
		if cells+cw > x {
			return c
		}
		cells += cw
	}
	return end
}

// Height is how many rows View draws.
func (m *Model) Height() int {
	n := 0
	for i := range m.lines {
		n += len(m.wrapped(i))
		if n >= m.MaxHeight {
			return max(1, m.MaxHeight)
		}
	}
	return max(1, n)
}

// View draws the editor: its rows, and where the cursor is in them.
func (m *Model) View(th *theme.Theme) (rows []string, cx, cy int) {
	pw := ansi.StringWidth(m.Prompt)
	if m.Empty() {
		key := phKey{m.Prompt, m.Placeholder, m.width, th}
		if key != m.phKey {
			ph := ansi.Truncate(m.Placeholder, max(0, m.width-pw), "…")
			m.phKey, m.ph = key, m.Prompt+th.Faint.Render(ph)
		}
		return []string{m.ph}, pw, 0
	}
	type vrow struct {
		line int
		s    seg
	}
	var all []vrow
	cur := 0
	for i := range m.lines {
		for r, s := range m.wrapped(i) {
			if i == m.row && r == m.rowOf(i, m.col) {
				cur = len(all)
			}
			all = append(all, vrow{i, s})
		}
	}
	h := m.Height()
	if cur < m.scroll {
		m.scroll = cur
	}
	if cur >= m.scroll+h {
		m.scroll = cur - h + 1
	}
	m.scroll = min(m.scroll, max(0, len(all)-h))
	for y := m.scroll; y < len(all) && y < m.scroll+h; y++ {
		v := all[y]
		prefix := m.Continuation
		if v.line == 0 && v.s.start == 0 {
			prefix = m.Prompt
		}
		rows = append(rows, prefix+show(m.lines[v.line][v.s.start:v.s.end]))
		if y == cur {
			cx = pw + m.cellsOf(v.line, v.s.start, m.col)
			cy = y - m.scroll
		}
	}
	return rows, cx, cy
}

// show writes runes for the screen: tabs as spaces, control characters
// as ^X, C1 and bidi controls as their escapes.
func show(rs []rune) string {
	var b strings.Builder
	cells := 0
	for _, r := range rs {
		switch {
		case r == '\t':
			n := 4 - cells%4
			b.WriteString(strings.Repeat(" ", n))
			cells += n
		case r < 32 || r == 0x7f:
			b.WriteByte('^')
			b.WriteRune(r ^ 0x40)
			cells += 2
		case r >= 0x80:
			if esc, ok := escaped(r); ok {
				b.WriteString(esc)
				cells += len(esc)
				continue
			}
			b.WriteRune(r)
			cells += runeWidth(r, cells)
		default:
			b.WriteRune(r)
			cells += runeWidth(r, cells)
		}
	}
	return b.String()
}
