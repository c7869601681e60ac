package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

// counted is an item of n lines that counts its renders.
type counted struct {
	name    string
	n       int
	renders *int
}

func (c counted) Render(Ctx) Lines {
	*c.renders++
	out := make(Strings, c.n)
	for i := range out {
		out[i] = fmt.Sprintf("%s.%d", c.name, i)
	}
	return out
}

func ctx() Ctx { return Ctx{Width: 40, Theme: theme.New(true, true), Now: time.Unix(0, 0)} }

func listOf(n, lines int, renders *int) *List {
	l := New()
	for i := range n {
		l.Append(counted{fmt.Sprint(i), lines, renders})
	}
	return l
}

// The screen shows the last lines, items a blank line apart, and only the
// items on screen are rendered.
func TestViewFollows(t *testing.T) {
	t.Parallel()
	renders := 0
	l := listOf(1000, 3, &renders)
	got := l.View(ctx(), 6)
	require.Equal(t, []string{"998.1", "998.2", "", "999.0", "999.1", "999.2"}, got)
	require.Less(t, renders, 10, "O(screen), not O(items)")
	first, last := l.Shown()
	require.Equal(t, 998, first)
	require.Equal(t, 999, last)
}

// A short transcript starts at the top.
func TestViewShort(t *testing.T) {
	t.Parallel()
	renders := 0
	l := listOf(2, 1, &renders)
	require.Equal(t, []string{"0.0", "", "1.0", "", ""}, l.View(ctx(), 5))
}

// Scrolling up and down by lines; reaching the end follows again; Top
// shows the first line.
func TestScroll(t *testing.T) {
	t.Parallel()
	renders := 0
	l := listOf(10, 2, &renders)
	c := ctx()
	l.View(c, 4)
	l.ScrollUp(c, 4, 3)
	require.False(t, l.Following())
	require.Equal(t, []string{"7.1", "", "8.0", "8.1"}, l.View(c, 4))
	l.ScrollDown(c, 4, 1)
	require.Equal(t, []string{"", "8.0", "8.1", ""}, l.View(c, 4))
	l.ScrollDown(c, 4, 10)
	require.True(t, l.Following())
	require.Equal(t, []string{"9.0", "9.1"}, l.View(c, 4)[2:])
	l.Top()
	require.Equal(t, []string{"0.0", "0.1", "", "1.0"}, l.View(c, 4))
	l.ScrollUp(c, 4, 5)
	require.Equal(t, []string{"0.0", "0.1", "", "1.0"}, l.View(c, 4), "the top stops scrolling")
}

// Items put in front (older history) keep the screen where it was.
func TestInsertFront(t *testing.T) {
	t.Parallel()
	renders := 0
	l := listOf(5, 1, &renders)
	c := ctx()
	l.ScrollUp(c, 3, 2)
	before := l.View(c, 3)
	l.InsertFront(counted{"old", 1, &renders}, counted{"older", 1, &renders})
	require.Equal(t, before, l.View(c, 3))
}

// A tool call: the header while it runs, then its end and output; an
// edit's diff (from a result without one: the input's texts); a new
// file's content as added lines, numbered.
func TestTool(t *testing.T) {
	t.Parallel()
	c := ctx()
	c.Width = 60
	start := time.Unix(100, 0)
	c.Now = start.Add(1500 * time.Millisecond)
	tl := NewTool("1", "bash", json.RawMessage(`{"command":"go test ./..."}`), start)
	require.Equal(t, "⠋ bash go test ./... · 1.5s", ansi.Strip(tl.Render(c).Line(0)))
	require.True(t, tl.Live())
	tl.End("ok\n[exit code 0]", false, 2*time.Second)
	require.Equal(t, "✓ bash go test ./... · exit 0 · 2.0s\n  │ ok", render(tl, c))

	w := NewTool("2", "write", json.RawMessage(`{"path":"a.txt","content":"one\ntwo\n"}`), start)
	w.End("Created a.txt (8 bytes).", false, time.Millisecond)
	require.Equal(t, "✓ write a.txt (2 lines) · 0.0s\n  │ Created a.txt (8 bytes).\n  │ 1 + one\n  │ 2 + two", render(w, c))

	e := NewTool("3", "edit", json.RawMessage(`{"path":"x.go","edits":[{"old_text":"a\nb\nc","new_text":"a\nB\nc"},{"old_text":"z","new_text":"y"}]}`), start)
	e.End("Edited x.go: applied 2 edits (at line 10, 20).", false, time.Millisecond)
	require.Equal(t, strings.Join([]string{
		"✓ edit x.go (2 edits) · 0.0s",
		"  │ @@ -10 +10 @@ (-1 +1)",
		"  │   a",
		"  │ - b",
		"  │ + B",
		"  │   c",
		"  │ @@ -20 +20 @@ (-1 +1)",
		"  │ - z",
		"  │ + y",
	}, "\n"), render(e, c))

	f := NewTool("4", "read", json.RawMessage(`{"path":"nope"}`), start)
	f.End("read nope: no such file or directory", true, time.Millisecond)
	require.Equal(t, "✗ read nope · error · 0.0s\n  │ read nope: no such file or directory", render(f, c))

	a := NewTool("5", "bash", json.RawMessage(`{"command":"sleep 9"}`), start)
	a.Abandon("interrupted")
	require.Equal(t, "◌ bash sleep 9 · interrupted", render(a, c))

	// An MCP server's tool: the server and the tool, its arguments, the
	// result's excerpt.
	m := NewTool("6", "mcp__everything__echo", json.RawMessage(`{"message":"hi"}`), start)
	m.End("Echo: hi", false, time.Millisecond)
	require.Equal(t, "✓ everything › echo {\"message\":\"hi\"} · 0.0s\n  │ Echo: hi", render(m, c))

	// The web extension's tools: the URL, the query.
	w = NewTool("7", "fetch", json.RawMessage(`{"url":"https://go.dev/doc/","max_length":1000}`), start)
	w.End("URL: https://go.dev/doc/", false, time.Millisecond)
	require.Equal(t, "✓ fetch https://go.dev/doc/ · 0.0s\n  │ URL: https://go.dev/doc/", render(w, c))
	w = NewTool("8", "search", json.RawMessage(`{"query":"go generics"}`), start)
	require.Equal(t, "⠋ search go generics · 1.5s", ansi.Strip(w.Render(c).Line(0)))
}

// A long output folds to its excerpt; Toggle shows it all.
func TestToolFolds(t *testing.T) {
	t.Parallel()
	c := ctx()
	var out strings.Builder
	for i := range 30 {
		fmt.Fprintf(&out, "line %d\n", i)
	}
	tl := NewTool("1", "grep", json.RawMessage(`{"pattern":"x"}`), time.Unix(0, 0))
	tl.End(out.String(), false, time.Millisecond)
	r := render(tl, c)
	require.Contains(t, r, "line 7\n  │ … 22 more lines · ctrl+o shows them")
	require.True(t, tl.Foldable())
	tl.Toggle()
	require.Contains(t, render(tl, c), "line 29")
}

// A reply streams: its reasoning first (the last lines while it comes),
// then folded once the text comes.
func TestReply(t *testing.T) {
	t.Parallel()
	c := ctx()
	r := NewReply()
	for i := range 6 {
		r.Thinking(fmt.Sprintf("step %d\n", i))
	}
	r.Flush()
	require.Equal(t, "∴ thinking…\n  step 2\n  step 3\n  step 4\n  step 5", render(r, c))
	r.Text("The **answer**.")
	r.Flush()
	require.Equal(t, "∴ thinking, 6 lines · ctrl+o shows it\n\nThe answer.", render(r, c))
	r.Toggle()
	require.Contains(t, render(r, c), "step 0")
	r.Finish()
	r.SetNote("interrupted")
	require.True(t, strings.HasSuffix(render(r, c), "The answer.\ninterrupted"))
}

// A long user message folds; short ones show whole.
func TestUserFolds(t *testing.T) {
	t.Parallel()
	c := ctx()
	u := &User{Text: strings.Repeat("line\n", 30) + "end"}
	r := render(u, c)
	require.Contains(t, r, "… 19 more lines · ctrl+o shows them")
	require.True(t, u.Foldable())
	u.Toggle()
	require.Contains(t, render(u, c), "▌ end")
	short := &User{Text: "\tindented\n  kept"}
	require.Equal(t, "▌     indented\n▌   kept", render(short, c))
}

func render(it Item, c Ctx) string {
	l := it.Render(c)
	var out []string
	for i := range l.Len() {
		out = append(out, strings.TrimRight(ansi.Strip(l.Line(i)), " "))
	}
	return strings.Join(out, "\n")
}

// The frame costs what the screen holds, not what the transcript holds.
func BenchmarkViewLongTranscript(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			renders := 0
			l := listOf(n, 4, &renders)
			c := ctx()
			l.View(c, 40)
			for b.Loop() {
				l.View(c, 40)
			}
		})
	}
}
