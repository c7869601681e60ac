package export

import (
	"strings"
	"testing"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// The page a reader gets of a real session: replies as formatted text,
// the edit as its diff, every tool result folded with its whole text,
// thinking folded, and a sidebar that maps the tree and the prompt
// states, every link landing on the page.
func TestHTMLReadable(t *testing.T) {
	t.Parallel()
	l := readLog(t, "reading")
	out := exportHTML(t, l, Options{All: true})
	d := parseHTML(t, out)
	checkSafe(t, d, false)
	checkLinks(t, d)

	// Light and dark follow the reader's system; nothing loads.
	css := text(all(d.root, "style", "")[0])
	require.Contains(t, css, "@media (prefers-color-scheme:dark)")
	require.Empty(t, all(d.root, "script", ""))

	// The reply's Markdown is rendered, its text as written one click away.
	fix := d.ids["e-9"]
	md := all(fix, "div", "md")
	require.Len(t, md, 1)
	require.Equal(t, "Fixed", text(all(md[0], "h5", "")[0]))
	require.Equal(t, "one short", text(all(md[0], "strong", "")[0]))
	rows := all(md[0], "tr", "")
	require.Len(t, rows, 3)
	require.Equal(t, []string{"Sum(5)", "10", "15"}, cells(rows[1]))
	require.Equal(t, "for i := 1; i <= n; i++ {", text(all(md[0], "pre", "code")[0]))
	require.Equal(t, "the Go spec on for loops", text(all(md[0], "span", "link")[0]))
	require.Equal(t, "(https://go.dev/ref/spec#For_statements)", text(all(md[0], "span", "url")[0]))
	src := all(fix, "details", "src")
	require.Len(t, src, 1)
	require.Equal(t, l.Entries[8].Message.Text(), text(all(src[0], "div", "t")[0]))

	// Thinking folds.
	think := all(d.ids["e-5"], "details", "think")
	require.Len(t, think, 1)
	require.Contains(t, text(think[0]), "Probably the loop bound.")

	// A details per tool result, with its whole text.
	results := all(d.root, "details", "result")
	require.Len(t, results, 2)
	read := l.Entries[5].Message.Content[0].ResultText()
	require.Equal(t, read, text(all(results[0], "pre", "")[0]))
	require.Contains(t, text(results[0]), "func Sum(n int) int {")

	// The edit's result is its diff: numbered lines, - and +, the
	// changed words marked.
	diff := all(results[1], "pre", "diff")
	require.Len(t, diff, 1)
	lines := strings.Split(strings.TrimSpace(text(diff[0])), "\n")
	require.Equal(t, " 6 - \tfor i := 1; i < n; i++ {", lines[2])
	require.Equal(t, " 6 + \tfor i := 1; i <= n; i++ {", lines[3])
	require.Len(t, all(diff[0], "span", "del"), 1)
	require.Len(t, all(diff[0], "span", "add"), 1)
	require.Equal(t, "<=", text(all(diff[0], "ins", "")[0]))

	// The sidebar: branch 2 nested under branch 1, where it forks; each
	// branch lists its user messages and labels; the prompt states.
	side := all(d.root, "aside", "side")
	require.Len(t, side, 1)
	tree := all(side[0], "ul", "tree")[0]
	b1 := firstElement(tree, "li")
	require.Equal(t, "#branch-1", attr(firstElement(b1, "a"), "href"))
	var nested []string
	for _, a := range all(b1, "a", "") {
		nested = append(nested, attr(a, "href"))
	}
	require.Equal(t, []string{"#branch-1", "#e-4", "#e-12", "#e-13", "#branch-2", "#e-4", "#e-9"}, nested)
	require.Equal(t, []string{"one-liner", "the fix"}, texts(all(side[0], "span", "lbl")))
	require.Contains(t, oneLine(b1), "branch 2 · after entry 4")
	states := all(all(side[0], "ol", "states")[0], "li", "")
	require.Len(t, states, promptSections(d))
	for k, li := range states {
		href := attr(firstElement(li, "a"), "href")
		require.Equal(t, "#prompt-"+string(rune('1'+k)), href)
	}
	require.Contains(t, oneLine(states[1]), "prompt v2 · 2 blocks, 160 B · from entry 2")

	// Each message links to the prompt in force at it.
	require.Equal(t, 2, checkPrompts(t, l, d, l.Leaf().ID))
	checkPrompts(t, l, d, l.Entries[9].ID)
}

func firstElement(n *html.Node, tag string) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == tag {
			return c
		}
	}
	return nil
}

func cells(tr *html.Node) []string {
	var out []string
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			out = append(out, text(c))
		}
	}
	return out
}

func texts(ns []*html.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = text(n)
	}
	return out
}

// Hostile text in each part the readable page added — a reply's
// Markdown, a tool result, thinking, a label in the sidebar, a branch's
// first message there, a prompt's text and its source in the states —
// makes no element, attribute or link, and shows as written.
func TestHTMLHostileReadable(t *testing.T) {
	t.Parallel()
	const evil = `</details></aside><script>alert(1)</script>" onmouseover="alert(2)' <a href="https://evil.example">x</a>`
	const evilMD = evil + "\n\n[click](javascript:alert(3)) ![i](https://evil.example/t.png) <https://evil.example/" + `"x>` +
		"\n\n```\"onclick=\"alert(4)\n</pre>" + evil + "\n```\n\n<div onclick=alert(5)>\n" + evil + "\n</div>"
	b := newBuilder(t, "/p")
	b.msg("", conversation.SystemMessage(evil, conversation.ModeAppend).WithSource(evil))
	b.msg("", conversation.KeyedSystemMessage("x:guidance", evil).WithSource("extension "+evil))
	u := b.msg("", conversation.UserText(evil))
	b.msg("", conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
		conversation.Thinking(evil, "sig"),
		conversation.Text(evilMD),
		conversation.ToolUse("t1", "edit", []byte(`{"path":"x"}`)),
	}})
	b.msg("", toolResult("t1", "Edited x: applied 1 edit.\n\n@@ -1,1 +1,1 @@\n-"+evil+"\n+"+evil+"!", false))
	b.msg("", toolCall("t2", "bash", map[string]any{"command": evil}))
	b.msg("", toolResult("t2", evil, true))
	b.label(u, evil)
	b.move(u)
	b.msg("", conversation.UserText(evil+" on a branch"))
	out := exportHTML(t, b.mustLog(), Options{All: true})
	s := string(out)
	for _, bad := range []string{"<script", "<img", "<a href=\"http", "<div onclick"} {
		require.False(t, strings.Contains(s, bad), "the page holds %s", bad)
	}
	d := parseHTML(t, out)
	checkSafe(t, d, false)
	checkLinks(t, d)

	reply := d.ids["e-4"]
	md := all(reply, "div", "md")[0]
	for _, want := range []string{evil, "click (javascript:alert(3))", "[image: i] (https://evil.example/t.png)", "</pre>" + evil, "<div onclick=alert(5)>"} {
		require.Contains(t, text(md), want)
	}
	require.Equal(t, `"onclick="alert(4)`, attr(all(md, "pre", "code")[0], "title"))
	require.Contains(t, text(all(reply, "details", "think")[0]), evil)
	require.Equal(t, evilMD, text(all(all(reply, "details", "src")[0], "div", "t")[0]))
	diff := all(d.ids["e-5"], "pre", "diff")[0]
	require.Contains(t, text(diff), "- "+evil)
	require.Contains(t, text(diff), evil+"!")
	require.Equal(t, evil, text(all(d.ids["e-7"], "pre", "")[0]))

	side := all(d.root, "aside", "side")[0]
	require.Equal(t, []string{evil}, texts(all(side, "span", "lbl")))
	pv := texts(all(side, "span", "pv"))
	require.Len(t, pv, 2)
	require.Contains(t, pv[0], "</details></aside><script>")
	require.Contains(t, pv[1], "</details></aside><script>")
	require.Len(t, all(side, "li", ""), 2+2+promptSections(d)) // two branches, two messages, the states
	for _, st := range all(d.root, "section", "prompt") {
		require.Contains(t, text(st), evil)
	}
}
