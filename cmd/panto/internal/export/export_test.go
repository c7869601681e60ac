package export

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/golden"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// The exports of the test logs, as reviewed: rewrite them with
// go test ./cmd/panto/internal/export -update and read the diff.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		golden, log string
		opt         Options
	}{
		{"session", "session", Options{}},
		{"branched", "branched", Options{}},
		{"branched-all", "branched", Options{All: true, Title: "Port change, both tries"}},
		{"forked", "forked", Options{}},
		{"reading-all", "reading", Options{All: true}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			t.Parallel()
			l := readLog(t, tc.log)
			h := exportHTML(t, l, tc.opt)
			golden.Check(t, filepath.Join("testdata", tc.golden+".html"), h)
			golden.Check(t, filepath.Join("testdata", tc.golden+".md"), exportMarkdown(t, l, tc.opt))
			d := parseHTML(t, h)
			checkSafe(t, d, false)
			checkLinks(t, d)
		})
	}
}

// The HTML of a realistic session: every message with its role, time and
// a link to the prompt as of it; every system change inline with its
// source; tool calls, results and thinking folded.
func TestHTMLSession(t *testing.T) {
	t.Parallel()
	l := readLog(t, "session")
	d := parseHTML(t, exportHTML(t, l, Options{}))
	checkSafe(t, d, false)
	checkLinks(t, d)

	// The header.
	head := oneLine(all(d.root, "header", "")[0])
	for _, s := range []string{"6f1c2a5e-3b7d-4c09-8e2f-1a2b3c4d5e6f", "2026-03-14 09:26:53 UTC", "/home/ann/lexer", "the active branch: 27 entries"} {
		require.Contains(t, head, s)
	}
	require.Equal(t, "panto session 6f1c2a5e-3b7d-4c09-8e2f-1a2b3c4d5e6f", text(all(d.root, "title", "")[0]))

	// One article per message that is not a system message, in order.
	var roles []string
	for _, a := range all(d.root, "article", "") {
		roles = append(roles, text(all(a, "b", "role")[0]))
		require.True(t, hasClass(a, text(all(a, "b", "role")[0])))
		require.Len(t, all(a, "time", ""), 1)
	}
	require.Equal(t, strings.Fields("user assistant tool assistant tool assistant user assistant user assistant"), roles)

	// Every message links to the prompt as of it; each distinct prompt is
	// one section.
	distinct := checkPrompts(t, l, d, l.Leaf().ID)
	require.Equal(t, distinct, promptSections(d))
	require.Equal(t, 9, distinct)

	// Every system change, with its source and what it did.
	// Every system change, with its source, what it did and the lines
	// it added and removed; one that changed lines that were there has
	// the diff of the prompt folded after its text.
	for _, tc := range []struct {
		id, line, text string
		diff           bool
	}{
		{"e-1", "project /home/ann/lexer/.panto/SYSTEM.md appended a block · +2 −0 lines → prompt v1", "You are panto, a careful coding agent.\nWork in small, tested steps.", false},
		{"e-5", "extension tools set section tools:guidance · +8 −0 lines → prompt v3", "# Tools from the tools extension\n\n## read\n\nRead a file.", false},
		{"e-6", "extension env set section env:environment · +5 −0 lines → prompt v4", "cwd: /home/ann/lexer\ndate: 2026-03-14", false},
		{"e-10", "extension tools updated section tools:guidance in place · +4 −0 lines → prompt v5", "# Tools from the tools extension\n\n## read\n\nRead a file.\n\n## bash\n\nRun a shell command.", true},
		{"e-16", "panto: removed because extension env is not loaded removed section env:environment · +0 −5 lines → prompt v6", "", true},
		{"e-20", "panto re-seed: project /home/ann/lexer/.panto/SYSTEM.md replaced the system prompt · +1 −17 lines → prompt v7", "You are panto, a careful coding agent.\nWork in small, tested steps. Run go test before you answer.", true},
		{"e-23", "extension tools set section tools:guidance · +12 −0 lines → prompt v9", "# Tools from the tools extension\n\n## read\n\nRead a file.\n\n## bash\n\nRun a shell command.", false},
	} {
		n := d.ids[tc.id]
		require.NotNil(t, n, tc.id)
		require.True(t, hasClass(n, "sys"), tc.id)
		require.Contains(t, oneLine(n), tc.line, tc.id)
		det := all(n, "details", "")
		if tc.diff {
			last := det[len(det)-1]
			require.Contains(t, oneLine(last), "what changed in the prompt", tc.id)
			require.Len(t, all(last, "pre", "diff"), 1, tc.id)
			require.False(t, hasAttr(last, "open"), tc.id)
			det = det[:len(det)-1]
		}
		if tc.text == "" {
			require.Empty(t, det, tc.id)
			continue
		}
		require.Len(t, det, 1, tc.id)
		require.False(t, hasAttr(det[0], "open"), tc.id)
		require.Equal(t, tc.text, text(all(det[0], "pre", "")[0]), tc.id)
	}
	// Every system message of the log is an event line.
	for i, e := range l.Entries {
		if e.Message != nil && e.Message.Role == conversation.RoleSystem {
			require.True(t, hasClass(d.ids[anchor(i)], "sys"), "entry %d", i+1)
			require.Contains(t, text(d.ids[anchor(i)]), e.Message.Content[0].Source)
		}
	}

	// Thinking, tool calls and results fold; the failed result says so.
	a8 := d.ids["e-8"]
	think := all(a8, "details", "think")
	require.Len(t, think, 1)
	require.Equal(t, "thinking", text(all(think[0], "summary", "")[0]))
	require.Contains(t, text(think[0]), "stops at the first '<'")
	call := all(a8, "details", "call")
	require.Len(t, call, 1)
	require.Contains(t, oneLine(all(call[0], "summary", "")[0]), "tool call read toolu_01")
	require.Equal(t, "{\n  \"path\": \"lexer/lexer_test.go\"\n}", text(all(call[0], "pre", "")[0]))
	ok := all(d.ids["e-9"], "details", "result")[0]
	require.False(t, hasClass(ok, "error"))
	require.Contains(t, oneLine(ok), "result of read toolu_01")
	bad := all(d.ids["e-12"], "details", "result")[0]
	require.True(t, hasClass(bad, "error"))
	require.Contains(t, oneLine(all(bad, "summary", "")[0]), "✗ error · result of bash toolu_02")
	require.Contains(t, text(bad), "exit status 1")
	for _, det := range all(d.root, "details", "") {
		require.False(t, hasAttr(det, "open"), "everything starts folded")
	}

	// Labels, from the log's label entries, next to their entries; each
	// label entry is an event line that links to the entry it labels.
	require.Equal(t, "bug report", text(all(d.ids["e-7"], "mark", "")[0]))
	require.Equal(t, "the fix", text(all(d.ids["e-13"], "mark", "")[0]))
	require.Len(t, all(d.root, "mark", ""), 2)
	require.Contains(t, oneLine(d.ids["e-26"]), "16:06:00 · label “bug report” on entry 7 (user · 2026-03-14 10:02: “The lexer test fails on `<<EOF` heredocs. Can you fix it?”)")
	require.Equal(t, "#e-7", attr(all(d.ids["e-26"], "a", "")[0], "href"))
	require.Contains(t, oneLine(d.ids["e-27"]), "label “the fix” on entry 13")

	// The other entries: small event lines; the compaction folds its
	// summary and links to the first message it kept.
	require.Contains(t, oneLine(d.ids["e-3"]), "session started · extensions: env, tools")
	require.Contains(t, oneLine(d.ids["e-4"]), "model: anthropic claude-sonnet-4-5")
	require.Contains(t, oneLine(d.ids["e-22"]), "session resumed, system prompt re-seeded · extensions: tools")
	comp := d.ids["e-19"]
	require.Contains(t, oneLine(comp), "compaction: the messages before entry 17 were summarised (about 48,210 tokens)")
	require.Equal(t, "#e-17", attr(all(all(comp, "summary", "")[0], "a", "")[0], "href"))
	require.Contains(t, text(all(comp, "details", "")[0]), "lexer.go now calls l.heredoc()")
	ext := d.ids["e-14"]
	require.Contains(t, oneLine(all(ext, "summary", "")[0]), "extension data of todo")
	require.Contains(t, text(all(ext, "pre", "")[0]), `"text": "fix heredoc"`)
}

// With All, every branch is readable: the active one first and whole,
// the other from where it forks, each entry once, linked both ways; the
// move that made the branch, the summary of the branch left and the
// labels are events that link to the entries they name.
func TestHTMLAll(t *testing.T) {
	t.Parallel()
	l := readLog(t, "branched")
	d := parseHTML(t, exportHTML(t, l, Options{All: true}))
	checkSafe(t, d, false)
	checkLinks(t, d)

	b1, b2 := d.ids["branch-1"], d.ids["branch-2"]
	require.NotNil(t, b1)
	require.NotNil(t, b2)
	require.Len(t, all(d.root, "section", "branch"), 2)
	require.Contains(t, text(all(b1, "h2", "")[0]), "Branch 1 (active")
	require.Contains(t, oneLine(all(d.root, "header", "")[0]), "the whole tree: 2 branches, 15 entries")
	require.Equal(t, []string{"e-1", "e-2", "e-3", "e-4", "e-8", "e-9", "e-10", "e-11", "e-12", "e-13", "e-14", "e-15"}, idsIn(b1))
	require.Equal(t, []string{"e-5", "e-6", "e-7"}, idsIn(b2))

	// Branch 2 says where it forks, and the fork point says who forks.
	fork := all(b2, "p", "fork")[0]
	require.Contains(t, oneLine(fork), "forks after entry 4 of branch 1")
	require.Equal(t, "#e-4", attr(all(fork, "a", "")[0], "href"))
	back := all(b1, "p", "fork")[0]
	require.Equal(t, d.ids["e-4"], back.PrevSibling.PrevSibling) // the fork note follows its entry
	require.Equal(t, "#branch-2", attr(all(back, "a", "")[0], "href"))

	// The move: one line, linking to where it went and what it left; the
	// entry it left says so.
	mv := d.ids["e-8"]
	require.Empty(t, all(mv, "details", ""))
	require.Contains(t, oneLine(mv), "10:01:00 · moved back to entry 4 of branch 1 (assistant · 2026-02-01 10:00: “8080, from config.toml.”), leaving entry 7 of branch 2")
	require.Equal(t, []string{"#e-4", "#e-7", "#e-8"}, hrefs(mv))
	left := all(b2, "p", "fork")[1]
	require.Equal(t, d.ids["e-7"], left.PrevSibling.PrevSibling)
	require.Equal(t, "↩ left by the move at entry 8 of branch 1", oneLine(left))
	require.Equal(t, []string{"#e-8"}, hrefs(left))

	// The branch summary folds, on the path where the model gets it.
	bs := d.ids["e-9"]
	det := all(bs, "details", "")
	require.Len(t, det, 1)
	require.False(t, hasAttr(det[0], "open"))
	require.Contains(t, oneLine(all(det[0], "summary", "")[0]), "summary of the branch left at entry 7 of branch 2 · sent to the model as a user message here")
	require.Equal(t, "Tried changing the port in config.toml; abandoned: the deploy sets it with PORT.", text(all(det[0], "div", "t")[0]))

	// The labels in effect are marked on their entries; the one removed
	// is not, and each label entry says what it did.
	require.Equal(t, "port change", text(all(d.ids["e-6"], "mark", "")[0]))
	require.Equal(t, "env override", text(all(d.ids["e-12"], "mark", "")[0]))
	require.Empty(t, all(d.ids["e-3"], "mark", ""))
	require.Len(t, all(d.root, "mark", ""), 2)
	require.Contains(t, oneLine(d.ids["e-7"]), "label “port change” on entry 6 of branch 2 (assistant · 2026-02-01 10:00: “Changed config.toml: port = 9090.”)")
	require.Contains(t, oneLine(d.ids["e-13"]), "label “the question” on entry 3 of branch 1 (user · 2026-02-01 10:00: “Which port does the app listen on?”) (replaced by a later label entry)")
	require.Contains(t, oneLine(d.ids["e-15"]), "removed the label of entry 3 of branch 1")
	require.NotContains(t, oneLine(d.ids["e-15"]), "replaced")
	require.Equal(t, "#e-3", attr(all(d.ids["e-15"], "a", "")[0], "href"))

	// Each branch's messages link to their own prompt.
	distinct := checkPrompts(t, l, d, l.Leaf().ID)
	require.Equal(t, 2, distinct)
	checkPrompts(t, l, d, "b000000000000007")
	require.Equal(t, 2, promptSections(d))

	// Without All: the active branch only, and the header says what is
	// left out; what the move left is named, not linked.
	d = parseHTML(t, exportHTML(t, l, Options{}))
	require.Contains(t, oneLine(all(d.root, "header", "")[0]), "the active branch: 12 of 15 entries (1 other branch not shown)")
	require.Nil(t, d.ids["e-5"])
	require.Nil(t, d.ids["branch-2"])
	require.Empty(t, all(d.root, "p", "fork"))
	checkLinks(t, d)
	require.Equal(t, 2, checkPrompts(t, l, d, l.Leaf().ID))
	require.Contains(t, oneLine(d.ids["e-8"]), "moved back to entry 4 (assistant · 2026-02-01 10:00: “8080, from config.toml.”), leaving entry 7 (on a branch not exported)")
	require.Equal(t, []string{"#e-4", "#e-8"}, hrefs(d.ids["e-8"]))
	require.Contains(t, oneLine(d.ids["e-9"]), "summary of the branch left at entry 7 (on a branch not exported)")
	require.Len(t, all(d.root, "mark", ""), 1) // the label of entry 6 is not exported
}

// idsIn returns the entry ids of n's children, in order.
func idsIn(n *html.Node) []string {
	var out []string
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if id := attr(c, "id"); strings.HasPrefix(id, "e-") {
			out = append(out, id)
		}
	}
	return out
}

// hrefs returns the targets of the links below n, in order.
func hrefs(n *html.Node) []string {
	var out []string
	for _, a := range all(n, "a", "") {
		out = append(out, attr(a, "href"))
	}
	return out
}

// A forked session's header says which session and entry it was forked
// from, and links to that entry, which the fork keeps.
func TestForked(t *testing.T) {
	t.Parallel()
	l := readLog(t, "forked")
	d := parseHTML(t, exportHTML(t, l, Options{}))
	checkSafe(t, d, false)
	checkLinks(t, d)
	head := oneLine(all(d.root, "header", "")[0])
	require.Contains(t, head, "forked fromsession 9d8c7b6a-5f4e-4d3c-8b2a-190817161514 at its entry b000000000000004, here entry 4") // <dt> then <dd>
	var link string
	for _, dd := range all(d.root, "dd", "") {
		if strings.HasPrefix(text(dd), "session 9d8c") {
			link = attr(all(dd, "a", "")[0], "href")
		}
	}
	require.Equal(t, "#e-4", link)
	require.Equal(t, "forked here", text(all(d.ids["e-4"], "mark", "")[0]))
	md := string(exportMarkdown(t, l, Options{}))
	require.Contains(t, md, "- forked from: session `9d8c7b6a-5f4e-4d3c-8b2a-190817161514` at its entry `b000000000000004`, here entry 4\n")

	// An entry the log does not hold is named, not linked; an unforked
	// log says nothing.
	b := newForkBuilder(t, "/p", "", "gone")
	b.msg("", conversation.UserText("hi"))
	d = parseHTML(t, exportHTML(t, b.mustLog(), Options{}))
	checkLinks(t, d)
	require.Contains(t, oneLine(all(d.root, "header", "")[0]), "forked fromsession (not recorded) at its entry gone")
	require.NotContains(t, oneLine(all(d.root, "header", "")[0]), "here")
	b = newForkBuilder(t, "/p", "s-1", "")
	b.msg("", conversation.UserText("hi"))
	require.Contains(t, string(exportMarkdown(t, b.mustLog(), Options{})), "- forked from: session `s-1`\n")
	require.NotContains(t, string(exportMarkdown(t, readLog(t, "branched"), Options{})), "forked from")
}

// A tree made by moves of every kind: back up the branch, over to
// another branch, a move left before anything was said, a label on an
// entry of another branch. With All every entry is in the page once, in
// the section of its branch, and every link resolves.
func TestAllMoves(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, "/p")
	b.msg("", conversation.SystemMessage("seed", conversation.ModeAppend).WithSource("built-in default"))
	u1 := b.msg("", conversation.UserText("one"))
	a1 := b.msg("", conversation.AssistantText("answer one"))
	b.msg("", conversation.UserText("two"))
	a2 := b.msg("", conversation.AssistantText("answer two"))
	m1 := b.move(a1) // back up: a new branch after a1
	b.summary("two was wrong", a2)
	b.msg("", conversation.UserText("two again"))
	a3 := b.msg("", conversation.AssistantText("answer two, better"))
	m2 := b.move(u1) // back up, and away again before anything was said
	dead := b.label(a2, "first try")
	m3 := b.move(a2) // over to the first branch
	b.msg("", conversation.UserText("three, on the first try"))
	leaf := b.msg("", conversation.AssistantText("answer three"))
	l := b.mustLog()
	pos := func(id string) int { return anchorIndex(l, id) }

	for _, all0 := range []bool{true, false} {
		d := parseHTML(t, exportHTML(t, l, Options{All: all0}))
		checkSafe(t, d, false)
		checkLinks(t, d)
		checkPrompts(t, l, d, leaf)
		if !all0 {
			continue
		}
		seen := map[string]int{}
		for _, sec := range all(d.root, "section", "branch") {
			for _, id := range idsIn(sec) {
				seen[id]++
			}
		}
		require.Len(t, seen, len(l.Entries))
		for i := range l.Entries {
			require.Equal(t, 1, seen[anchor(i)], "entry %d", i+1)
		}
		checkPrompts(t, l, d, a3)
		require.Len(t, all(d.root, "section", "branch"), 3)
		require.Contains(t, oneLine(all(d.ids["branch-3"], "h2", "")[0]), "Branch 3 (no messages)")
		require.Equal(t, []string{anchor(pos(m2)), anchor(pos(dead))}, idsIn(d.ids["branch-3"]))

		require.Contains(t, oneLine(d.ids[anchor(pos(m1))]), "moved back to entry 3 of branch 1")
		require.Contains(t, oneLine(d.ids[anchor(pos(m2))]), "moved back to entry 2 of branch 1")
		require.Contains(t, oneLine(d.ids[anchor(pos(m3))]), "moved to entry 5 of branch 1 (assistant")
		require.NotContains(t, oneLine(d.ids[anchor(pos(m3))]), "moved back")
		require.Contains(t, oneLine(d.ids[anchor(pos(m3))]), "leaving entry 11 of branch 3")
		// Each entry a move left says so: a2 (left by m1), the end of
		// branch 2 (by m2) and the label that ends branch 3 (by m3).
		require.Contains(t, oneLine(d.root), "↩ left by the move at entry 6 of branch 2")
		require.Contains(t, oneLine(d.root), "↩ left by the move at entry 10 of branch 3")
		require.Contains(t, oneLine(d.root), "↩ left by the move at entry 12 of branch 1")
		require.Len(t, all(d.root, "p", "fork"), 3+2+2) // three notes "left by", two "forks after this entry", two "forks after entry"
		require.Equal(t, "first try", text(all(d.ids[anchor(pos(a2))], "mark", "")[0]))
	}
	md := string(exportMarkdown(t, l, Options{All: true}))
	mdOutside(t, md)
	require.Contains(t, md, "## Branch 3 (no messages)\n")
	require.Contains(t, md, "**moved to** entry 5 of branch 1 (assistant · 2026-03-14 09:00: “answer two”), leaving entry 11 of branch 3\n")
	require.Contains(t, md, "**summary of the branch left** at entry 5 of branch 1 · sent to the model as a user message here\n>\n> ```text\n> two was wrong\n> ```\n")
	require.Contains(t, md, "> ↩ left by the move at entry 12 of branch 1\n")
}

// anchorIndex returns the position of the entry id in l.
func anchorIndex(l *sessionlog.Log, id string) int {
	for i := range l.Entries {
		if l.Entries[i].ID == id {
			return i
		}
	}
	return -1
}

// Images are their own data: URLs when they are plain raster images, a
// placeholder otherwise; nothing is ever fetched.
func TestHTMLImages(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, "/p")
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	b.msg("", conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{
		conversation.Text("what is this?"),
		conversation.Image("image/png", png),
		conversation.Image("image/svg+xml", "PHN2ZyBvbmxvYWQ9ImFsZXJ0KDEpIi8+"),
		conversation.Image("image/png", "not base64!\" onerror=\"alert(1)"),
	}})
	b.msg("", toolCall("t1", "screenshot", map[string]any{}))
	b.msg("", conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{{
		Type: conversation.TypeToolResult, ToolUseID: "t1",
		Content: []conversation.Block{conversation.Text("here"), conversation.Image("image/jpeg", "/9j/4AAQ")},
	}}})
	d := parseHTML(t, exportHTML(t, b.mustLog(), Options{}))
	checkSafe(t, d, true)
	imgs := all(d.root, "img", "")
	require.Len(t, imgs, 2)
	require.Equal(t, "data:image/png;base64,"+png, attr(imgs[0], "src"))
	require.Equal(t, "data:image/jpeg;base64,/9j/4AAQ", attr(imgs[1], "src"))
	for _, img := range imgs {
		for _, a := range img.Attr {
			require.Contains(t, []string{"src", "alt"}, a.Key)
		}
	}
	require.Contains(t, oneLine(d.ids["e-1"]), "[image image/svg+xml, 24 B: not shown]")
	require.Contains(t, oneLine(d.ids["e-1"]), "[image image/png, 22 B: not shown]")
}

// The Markdown of the realistic session: headings per message, tool I/O
// fenced, system changes as quoted event lines with their source, the
// prompt at the end of the branch at the bottom.
func TestMarkdownSession(t *testing.T) {
	t.Parallel()
	l := readLog(t, "session")
	md := string(exportMarkdown(t, l, Options{Prompt: true})) // the whole prompt, its tool guidance too
	outside := mdOutside(t, md)

	var heads []string
	for _, line := range outside {
		if strings.HasPrefix(line, "### ") {
			heads = append(heads, line)
		}
	}
	require.Equal(t, []string{
		"### user · 10:02 · label: bug report",
		"### assistant · 10:02",
		"### tool · 10:02",
		"### assistant · 10:02",
		"### tool · 10:02",
		"### assistant · 10:02 · label: the fix",
		"### user · 14:30",
		"### assistant · 14:30",
		"### user · 16:05",
		"### assistant · 16:05",
	}, heads)
	for _, s := range []string{
		"> **system** · 09:26 · **extension tools** set section `tools:guidance` · +8 −0 lines\n>\n> ```text\n> # Tools from the tools extension\n>\n> ## read\n>\n> Read a file.\n> ```\n",
		"> **system** · 10:02 · **extension tools** updated section `tools:guidance` in place · +4 −0 lines\n",
		"> **system** · 14:30 · **panto: removed because extension env is not loaded** removed section `env:environment` · +0 −5 lines\n\n" +
			"> what changed in the prompt:\n>\n> ```diff\n>   16  ## bash\n>   17  \n>   18  Run a shell command.\n> - 19  \n> - 20  ---\n> - 21  \n> - 22  cwd: /home/ann/lexer\n> - 23  date: 2026-03-14\n> ```\n",
		"> **system** · 16:05 · **panto re-seed: project /home/ann/lexer/.panto/SYSTEM.md** replaced the system prompt · +1 −17 lines\n",
		"**tool call** `read` · `toolu_01`\n\n```json\n{\n  \"path\": \"lexer/lexer_test.go\"\n}\n```\n",
		"**result** of `bash` · `toolu_02` · **error**\n\n```text\n--- FAIL",
		"**thinking**\n\n```text\nThe heredoc branch",
		"> 14:30 · session resumed · extensions: tools\n",
		"- not shown: 1 extension_data entry\n",
		// The text as written: its own fence stays a fence.
		"The fix in lexer.go:\n\n```go\nif r == '<' && l.peek() == '<' {\n\treturn l.heredoc()\n}\n```\n\nNow `go test ./lexer` passes.\n",
	} {
		require.Contains(t, md, s)
	}
	// The prompt at the end, block by block, with sources and keys.
	_, bottom, found := strings.Cut(md, "\n## System prompt at the end of the branch\n")
	require.True(t, found)
	want := conversation.EffectiveSystem(l.Messages())
	require.Len(t, want, 3)
	for i, b := range want {
		require.Contains(t, bottom, "**"+string(rune('1'+i))+".** "+mdInline(b.Source))
		require.Contains(t, bottom, "```text\n"+b.Text+"\n```")
	}
	require.Contains(t, bottom, "· section `tools:guidance`")
}

// Markdown with All: a section per branch, the fork named, the move,
// the branch summary and the labels as quoted events, the prompt at the
// end of each.
func TestMarkdownAll(t *testing.T) {
	t.Parallel()
	md := string(exportMarkdown(t, readLog(t, "branched"), Options{All: true}))
	mdOutside(t, md)
	for _, s := range []string{
		"## Branch 1 (active)\n",
		"> ↳ branch 2 forks after this entry\n",
		"> 10:01 · **moved back to** entry 4 of branch 1 (assistant · 2026-02-01 10:00: “8080, from config.toml.”), leaving entry 7 of branch 2\n",
		"> 10:01 · **summary of the branch left** at entry 7 of branch 2 · sent to the model as a user message here\n>\n> ```text\n> Tried changing the port in config.toml; abandoned: the deploy sets it with PORT.\n> ```\n",
		"### assistant · 10:01 · label: env override\n",
		"> 10:01 · **label** “the question” on entry 3 of branch 1 (user · 2026-02-01 10:00: “Which port does the app listen on?”) (replaced by a later label entry)\n",
		"> 10:01 · **removed the label** of entry 3 of branch 1 (user · 2026-02-01 10:00: “Which port does the app listen on?”)\n",
		"## Branch 2\n\n_forks after entry 4 of branch 1 (assistant · 2026-02-01 10:00: “8080, from config.toml.”)_\n",
		"### assistant · 10:00 · label: port change\n",
		"> 10:00 · **label** “port change” on entry 6 of branch 2 (assistant · 2026-02-01 10:00: “Changed config.toml: port = 9090.”)\n",
		"> ↩ left by the move at entry 8 of branch 1\n",
		"## System prompt at the end of branch 1\n",
		"## System prompt at the end of branch 2\n",
	} {
		require.Contains(t, md, s)
	}
	require.NotContains(t, md, "not known to this panto")
	require.NotContains(t, md, "### user · 10:00 · label:") // the removed label
	require.Less(t, strings.Index(md, "Which port"), strings.Index(md, "## Branch 2"))
	require.Equal(t, 1, strings.Count(md, "\nWhich port")) // the shared prefix once
}

// The empty log, a log with a broken chain, and no log.
func TestEdges(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, "/p")
	l := b.mustLog()
	h := exportHTML(t, l, Options{})
	d := parseHTML(t, h)
	checkSafe(t, d, false)
	require.Contains(t, oneLine(d.root), "an empty session: no entries")
	require.Contains(t, string(exportMarkdown(t, l, Options{All: true})), "an empty session: no entries")

	broken := &sessionlog.Log{Path: "x.jsonl", Entries: []sessionlog.Entry{
		{Type: sessionlog.TypeMessage, ID: "a", Message: &conversation.Message{Role: conversation.RoleUser}},
		{Type: sessionlog.TypeMessage, ID: "b", ParentID: "nope", Message: &conversation.Message{Role: conversation.RoleUser}},
	}}
	err := HTML(&bytes.Buffer{}, broken, Options{})
	require.ErrorContains(t, err, `export session log x.jsonl: entry b: parent_id "nope" names no earlier entry`)
	require.Error(t, Markdown(&bytes.Buffer{}, broken, Options{}))
	require.ErrorIs(t, HTML(&bytes.Buffer{}, nil, Options{}), errNoLog)

	// A failing writer's error comes back.
	require.ErrorIs(t, HTML(failWriter{}, readLog(t, "session"), Options{}), errWrite)
	require.ErrorIs(t, Markdown(failWriter{}, readLog(t, "session"), Options{}), errWrite)

	// A log that starts with a message has an empty prompt first, and a
	// keyed removal of a section that is not there changes nothing.
	b = newBuilder(t, "/p")
	b.msg("", conversation.UserText("hi"))
	b.msg("", conversation.KeyedSystemMessage("k", "").WithSource("extension x"))
	b.msg("", conversation.SystemMessage("", conversation.ModeReplace))
	b.msg("", conversation.AssistantText("hello"))
	l = b.mustLog()
	d = parseHTML(t, exportHTML(t, l, Options{}))
	checkLinks(t, d)
	require.Equal(t, 2, checkPrompts(t, l, d, l.Leaf().ID))
	require.Contains(t, oneLine(d.ids["prompt-1"]), "(empty: no system prompt)")
	require.Contains(t, oneLine(d.ids["e-2"]), "extension x removed section k (it was not in the prompt: no change) · +0 −0 lines → prompt v1")
	require.Contains(t, oneLine(d.ids["e-3"]), "(source not recorded) replaced the system prompt · +0 −0 lines → prompt v2")
}

var errWrite = errors.New("disk full")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

// Each turn's tokens and cost follow its last message, priced by the
// model recorded for it: config's price over the built-in one.
func TestTurnUsage(t *testing.T) {
	t.Parallel()
	l := readLog(t, "session")
	md := string(exportMarkdown(t, l, Options{}))
	require.Contains(t, md, "> _turn · 3 requests · tokens 12 in, 525 out, 9100 cache read, 5420 cache write · $0.0310_")
	require.Contains(t, md, "- used: tokens 1212 in, 605 out, 14520 cache read, 5420 cache write · $0.0374 (4 requests)")
	// At $1000 a million input tokens and nothing else.
	md = string(exportMarkdown(t, l, Options{Prices: prices.New(map[string]prices.Price{"claude-sonnet-4-5": {Input: 1000}})}))
	require.Contains(t, md, "> _turn · 1 request · tokens 1200 in, 80 out, 5420 cache read, 0 cache write · $1.2000_")
	h := string(exportHTML(t, l, Options{}))
	require.Contains(t, h, `<p class="ev use">turn · 1 request · tokens 1200 in, 80 out, 5420 cache read, 0 cache write · $0.0064</p>`)
}
