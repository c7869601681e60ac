package editor

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

func key(s string) tea.KeyPressMsg {
	switch s {
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "delete":
		return tea.KeyPressMsg{Code: tea.KeyDelete}
	case "shift+enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModShift}
	case "alt+enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "ctrl+home":
		return tea.KeyPressMsg{Code: tea.KeyHome, Mod: tea.ModCtrl}
	case "ctrl+end":
		return tea.KeyPressMsg{Code: tea.KeyEnd, Mod: tea.ModCtrl}
	}
	if mod, r, ok := strings.Cut(s, "+"); ok {
		m := tea.ModCtrl
		if mod == "alt" {
			m = tea.ModAlt
		}
		if r == "backspace" {
			return tea.KeyPressMsg{Code: tea.KeyBackspace, Mod: m}
		}
		return tea.KeyPressMsg{Code: []rune(r)[0], Mod: m}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

func typ(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// The readline keys, table-driven: the text before, the keys, the text
// after and where the cursor ends ("|").
func TestReadlineKeys(t *testing.T) {
	t.Parallel()
	tests := []struct{ before, keys, after string }{
		{"hello brave world|", "ctrl+w", "hello brave |"},
		{"hello brave world|", "ctrl+w ctrl+w", "hello |"},
		{"hello brave world|", "ctrl+a", "|hello brave world"},
		{"hello |brave world", "ctrl+k", "hello |"},
		{"hello |brave world", "ctrl+u", "|brave world"},
		{"hello |brave world", "ctrl+k ctrl+a ctrl+y", "brave world|hello "},
		{"hello |brave world", "ctrl+e", "hello brave world|"},
		{"hello |brave world", "alt+d", "hello | world"},
		{"hello brave| world", "alt+b", "hello |brave world"},
		{"hello |brave world", "alt+f", "hello brave| world"},
		{"ab|", "ctrl+t", "ba|"},
		{"a|b", "ctrl+d", "a|"},
		{"a|b", "ctrl+h", "|b"},
		{"a|b", "ctrl+b", "|ab"},
		{"a|b", "ctrl+f", "ab|"},
		{"one|\ntwo", "ctrl+k", "one|two"},
		{"one\n|two", "backspace", "one|two"},
		{"one|\ntwo", "delete", "one|two"},
		{"one\ntw|o", "up", "on|e\ntwo"},
		{"on|e\ntwo", "down", "one\ntw|o"},
		{"one\n|two", "left", "one|\ntwo"},
		{"one|\ntwo", "right", "one\n|two"},
		{"one\ntwo|", "ctrl+home", "|one\ntwo"},
		{"|one\ntwo", "ctrl+end", "one\ntwo|"},
		{"a|b", "shift+enter", "a\n|b"},
		{"a|b", "alt+enter", "a\n|b"},
		{"a|b", "ctrl+j", "a\n|b"},
		{"\tx|", "ctrl+a", "|\tx"},
	}
	for _, tt := range tests {
		m := New()
		before, after, _ := strings.Cut(tt.before, "|")
		m.InsertString(before)
		m.InsertString(after)
		for range len([]rune(after)) {
			m.Update(key("left"))
		}
		for _, k := range strings.Fields(tt.keys) {
			require.True(t, m.Update(key(k)), "%s is the editor's", k)
		}
		require.Equal(t, tt.after, withCursor(m), "%q + %s", tt.before, tt.keys)
	}
}

// withCursor is the text with "|" where the cursor is.
func withCursor(m *Model) string {
	lines := strings.Split(m.Value(), "\n")
	r := []rune(lines[m.row])
	lines[m.row] = string(r[:m.col]) + "|" + string(r[m.col:])
	return strings.Join(lines, "\n")
}

// Enter, Tab and unknown chords are the owner's.
func TestKeysLeftToTheOwner(t *testing.T) {
	t.Parallel()
	m := New()
	for _, k := range []string{"enter", "tab", "ctrl+o", "ctrl+l"} {
		require.False(t, m.Update(key(k)), k)
	}
	require.True(t, m.Empty())
}

// Text is kept exactly: tabs stay tabs, no line or length limit.
func TestKeepsTextExactly(t *testing.T) {
	t.Parallel()
	m := New()
	s := "func f() {\n\treturn 1\n}\n" + strings.Repeat("line\n", 12000) + strings.Repeat("x", 100000)
	m.InsertString(s)
	require.Equal(t, s, m.Value())
	require.Equal(t, 12004, m.LineCount())
}

// Long lines wrap at spaces within the width; the cursor follows, and
// Up/Down move by visual row. The first and last rows are the owner's.
func TestWrapAndRows(t *testing.T) {
	t.Parallel()
	m := New()
	m.Prompt, m.Continuation = "> ", "  "
	m.SetWidth(22)
	typ(m, "the quick brown fox jumps over the lazy dog")
	th := theme.New(true, true)
	rows, cx, cy := m.View(th)
	require.Equal(t, []string{"> the quick brown fox ", "  jumps over the lazy ", "  dog"}, rows)
	require.Equal(t, 2, cy)
	require.Equal(t, 5, cx)
	for _, r := range rows {
		require.LessOrEqual(t, ansi.StringWidth(r), 22)
	}
	require.True(t, m.OnLastRow())
	require.False(t, m.OnFirstRow())
	m.Update(key("up"))
	_, cx, cy = m.View(th)
	require.Equal(t, 1, cy)
	require.Equal(t, 5, cx)
	m.Update(key("up"))
	require.True(t, m.OnFirstRow())
	require.Equal(t, "the", string(m.lines[0][:m.col]))
}

// The view scrolls to keep the cursor on screen; MaxHeight bounds it.
func TestScroll(t *testing.T) {
	t.Parallel()
	m := New()
	m.MaxHeight = 3
	m.InsertString("1\n2\n3\n4\n5")
	rows, _, cy := m.View(theme.New(true, true))
	require.Equal(t, []string{"3", "4", "5"}, rows)
	require.Equal(t, 2, cy)
	m.Update(key("ctrl+home"))
	rows, _, cy = m.View(theme.New(true, true))
	require.Equal(t, []string{"1", "2", "3"}, rows)
	require.Equal(t, 0, cy)
}

// A tab shows as spaces to the next stop; a control character as ^X.
func TestShow(t *testing.T) {
	t.Parallel()
	m := New()
	m.InsertString("a\tb\x01")
	rows, cx, _ := m.View(theme.New(true, true))
	require.Equal(t, []string{"a   b^A"}, rows)
	require.Equal(t, 7, cx)
}

// A single-line editor (a dialog's input) keeps one line.
func TestSingle(t *testing.T) {
	t.Parallel()
	m := New()
	m.Single = true
	m.InsertString("a\nb")
	require.False(t, m.Update(key("ctrl+j")))
	require.Equal(t, "a b", m.Value())
}

// The placeholder shows on an empty editor.
func TestPlaceholder(t *testing.T) {
	t.Parallel()
	m := New()
	m.Prompt, m.Placeholder = "> ", "type here"
	rows, cx, cy := m.View(theme.New(true, true))
	require.Equal(t, "> type here", ansi.Strip(rows[0]))
	require.Equal(t, 2, cx)
	require.Equal(t, 0, cy)
}

func TestWordBeforeCursor(t *testing.T) {
	t.Parallel()
	m := New()
	typ(m, "see @cmd/pa")
	require.Equal(t, "@cmd/pa", m.WordBeforeCursor())
	m.ReplaceWordBeforeCursor("@cmd/panto/ ")
	require.Equal(t, "see @cmd/panto/ ", m.Value())
}
