package transcript

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

// loopResult is what the edit tool answers for an edit of "i <= n" in
// the loop of a ten-line file: its words, then the diff of the file.
const loopResult = "Edited f.go: applied 1 edit (at line 5).\n\n" +
	"@@ -2,7 +2,7 @@\n \n func f(n int) {\n \tx := 0\n-\tfor i := 0; i <= n; i++ {\n+\tfor i := 0; i < n; i++ {\n \t\tx += i\n \t}\n \tprintln(x)"

// An edit whose result carries the diff shows the file's whole lines,
// with their numbers and three lines of context: the line the edit
// changed, not only its old and new text.
func TestEditShowsFileLines(t *testing.T) {
	t.Parallel()
	c := ctx()
	c.Width = 60
	e := NewTool("1", "edit", json.RawMessage(`{"path":"f.go","edits":[{"old_text":"i <= n","new_text":"i < n"}]}`), time.Unix(0, 0))
	e.End(loopResult, false, time.Millisecond)
	require.Equal(t, strings.Join([]string{
		"✓ edit f.go · +1 -1 · 0.0s",
		"  │ 2",
		"  │ 3   func f(n int) {",
		"  │ 4       x := 0",
		"  │ 5 -     for i := 0; i <= n; i++ {",
		"  │ 5 +     for i := 0; i < n; i++ {",
		"  │ 6           x += i",
		"  │ 7       }",
		"  │ 8       println(x)",
	}, "\n"), render(e, c))
}

// The changed words of a changed line are highlighted, not the line.
func TestDiffWordHighlight(t *testing.T) {
	t.Parallel()
	c := ctx()
	c.Width = 60
	c.Theme = theme.New(true, false)
	e := NewTool("1", "edit", json.RawMessage(`{"path":"f.go","edits":[{"old_text":"i <= n","new_text":"i < n"}]}`), time.Unix(0, 0))
	e.End(loopResult, false, time.Millisecond)
	l := e.Render(c)
	del, add := l.Line(4), l.Line(5)
	require.Contains(t, del, c.Theme.DiffDelWord.Render("<="))
	require.Contains(t, del, c.Theme.DiffDel.Render("    for i := 0; i "))
	require.Contains(t, add, c.Theme.DiffAddWord.Render("<"))
	require.Contains(t, add, c.Theme.DiffAdd.Render(" n; i++ {"))
	require.NotContains(t, l.Line(3), "\x1b[7", "a context line has no highlight")
}

// Hunks far apart are numbered each at its place, with "⋮" between; a
// result's diff cut short says so.
func TestDiffHunksAndCut(t *testing.T) {
	t.Parallel()
	c := ctx()
	res := "Overwrote a.txt: wrote 9 bytes.\n\n@@ -8,3 +8,3 @@\n a\n-b\n+B\n c\n@@ -120 +120,2 @@\n z\n+zz\n[diff cut: 5 more lines not shown]"
	w := NewTool("1", "write", json.RawMessage(`{"path":"a.txt","content":"…"}`), time.Unix(0, 0))
	w.End(res, false, time.Millisecond)
	require.Equal(t, strings.Join([]string{
		"✓ write a.txt (1 lines) · 0.0s",
		"  │ Overwrote a.txt: wrote 9 bytes.",
		"  │   8   a",
		"  │   9 - b",
		"  │   9 + B",
		"  │  10   c",
		"  │     ⋮",
		"  │ 120   z",
		"  │ 121 + zz",
		"  │     … the rest of the diff was cut",
	}, "\n"), render(w, c))
}

// A write over a file from a log written before results carried a diff
// shows its content as it did.
func TestWriteOldLog(t *testing.T) {
	t.Parallel()
	c := ctx()
	w := NewTool("1", "write", json.RawMessage(`{"path":"a.txt","content":"one\n"}`), time.Unix(0, 0))
	w.End("Overwrote a.txt: wrote 4 bytes.", false, time.Millisecond)
	require.Equal(t, "✓ write a.txt (1 lines) · 0.0s\n  │ Overwrote a.txt: wrote 4 bytes.\n  │ + one", render(w, c))
}

// Hostile text in a file's lines reaches the terminal made safe.
func TestDiffSanitized(t *testing.T) {
	t.Parallel()
	c := ctx()
	e := NewTool("1", "edit", json.RawMessage(`{"path":"f","edits":[{"old_text":"a","new_text":"b"}]}`), time.Unix(0, 0))
	e.End("Edited f: applied 1 edit (at line 1).\n\n@@ -1 +1 @@\n-a\x1b]0;pwned\x07\n+b\x1b[2J", false, time.Millisecond)
	l := e.Render(c)
	for i := range l.Len() {
		require.NotContains(t, ansi.Strip(l.Line(i)), "\x1b")
	}
}
