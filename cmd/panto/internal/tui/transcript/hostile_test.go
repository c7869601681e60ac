package transcript

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// raw is every line an item renders, styles kept.
func raw(it Item, c Ctx) string {
	l := it.Render(c)
	var b strings.Builder
	for i := range l.Len() {
		b.WriteString(l.Line(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func requireSafe(t *testing.T, what, out string) {
	t.Helper()
	require.Empty(t, termtext.Leaks([]byte(out)), "%s: %q", what, out)
	require.NoError(t, termtext.Check([]byte(sgr.ReplaceAllString(out, ""))), what)
}

// Every item shows outside text — a message, a notice and who sent it,
// a command's output, a prompt change, a tool's name, input, diff and
// output, a reply and its reasoning — with what a terminal would obey in
// it shown, never passed.
func TestItemsShowHostileTextSafely(t *testing.T) {
	t.Parallel()
	c := ctx()
	c.Width = 70
	start := time.Unix(100, 0)
	for _, h := range append(termtext.Hostile, termtext.Sample{Name: "all", Text: termtext.HostileText()}) {
		x := h.Text
		q, _ := json.Marshal(x) // C0 controls as \u001b: decoded, they are raw again
		items := map[string]Item{
			"user":   &User{Text: x},
			"notice": &Notice{Level: Warning, By: x, Text: x, Detail: x},
			"text":   &Text{Title: x, Body: x},
		}
		sys := &System{}
		sys.Add(SystemChange{Says: x, Text: x})
		sys.Toggle()
		items["system"] = sys
		for _, name := range []string{"bash", "read", "grep", "other", x} {
			tl := NewTool("1", name, json.RawMessage(`{"command":`+string(q)+`,"path":`+string(q)+`,"pattern":`+string(q)+`,`+string(q)+`:1}`), start)
			items["running "+name] = tl
			done := NewTool("1", name, json.RawMessage(`{"command":`+string(q)+`,"path":`+string(q)+`}`), start)
			done.End(x+"\n[exit code 1]", true, time.Second)
			done.Toggle()
			items["done "+name] = done
		}
		edit := NewTool("2", "edit", json.RawMessage(`{"path":`+string(q)+`,"edits":[{"old_text":`+string(q)+`,"new_text":"a"},{"old_text":"b","new_text":`+string(q)+`}]}`), start)
		edit.End("applied 2 edits (at line 3, 9)", false, time.Second)
		items["edit"] = edit
		write := NewTool("3", "write", json.RawMessage(`{"path":`+string(q)+`,"content":`+string(q)+`}`), start)
		write.End(x, false, time.Second)
		items["write"] = write
		// A result's diff holds the file's lines: hostile ones too, and
		// the word highlight cuts them into pieces.
		diffed := NewTool("5", "edit", json.RawMessage(`{"path":"f","edits":[{"old_text":"a","new_text":"b"}]}`), start)
		diffed.End("Edited f: applied 1 edit (at line 2).\n\n@@ -1,3 +1,3 @@\n "+oneLineOf(x)+"\n-a "+oneLineOf(x)+" b\n+a "+oneLineOf(x)+" c\n "+oneLineOf(x), false, time.Second)
		diffed.Toggle()
		items["edit diff"] = diffed
		overwrote := NewTool("6", "write", json.RawMessage(`{"path":"f","content":"x"}`), start)
		overwrote.End("Overwrote f: wrote 1 byte.\n\n@@ -1 +1 @@\n-"+oneLineOf(x)+"\n+x", false, time.Second)
		items["write diff"] = overwrote
		notJSON := NewTool("4", "x", json.RawMessage(x), start)
		items["not json"] = notJSON
		r := NewReply()
		for i := 0; i < len(x); i += 2 {
			r.Thinking(x[i:min(len(x), i+2)])
			r.Flush()
			items["thinking"] = r
			requireSafe(t, h.Name+" thinking", raw(r, c))
		}
		for i := 0; i < len(x); i += 2 {
			r.Text(x[i:min(len(x), i+2)])
			r.Flush()
			requireSafe(t, h.Name+" reply", raw(r, c))
		}
		r.Finish()
		r.Toggle()
		items["reply"] = r
		items["recorded reply"] = ReplyOf(x, x)
		for what, it := range items {
			requireSafe(t, h.Name+" "+what, raw(it, c))
		}
	}
}

// A lone CR in a command shows where it is, so "safe command\rrm -rf ~"
// cannot read as "rm -rf ~" alone; the tool's name is one line.
func TestToolShowsTheCR(t *testing.T) {
	t.Parallel()
	c := ctx()
	tl := NewTool("1", "bash", json.RawMessage(`{"command":"safe command\rrm -rf ~"}`), time.Time{})
	tl.End("done\r", false, 0)
	got := ansi.Strip(raw(tl, c))
	require.Contains(t, got, "bash safe command␍rm -rf ~")
	require.Contains(t, got, "│ done␍")
	named := NewTool("1", "ba\x1b[2J\nsh", json.RawMessage(`{}`), time.Time{})
	require.Contains(t, ansi.Strip(raw(named, c)), "ba␛[2J␤sh")
}

// oneLineOf is s on one line: a diff line cannot hold a line feed.
func oneLineOf(s string) string { return strings.ReplaceAll(s, "\n", " ") }
