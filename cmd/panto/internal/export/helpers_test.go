package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// anchor is the HTML id of the entry at position i.
func anchor(i int) string { return "e-" + strconv.Itoa(entryNumber(i)) }

// readLog reads testdata/NAME.jsonl.
func readLog(t testing.TB, name string) *sessionlog.Log {
	t.Helper()
	l, err := sessionlog.Read(filepath.Join("testdata", name+".jsonl"))
	require.NoError(t, err)
	return l
}

// exportHTML and exportMarkdown return the export of l as bytes.
func exportHTML(t testing.TB, l *sessionlog.Log, opt Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, HTML(&buf, l, opt))
	return buf.Bytes()
}

func exportMarkdown(t testing.TB, l *sessionlog.Log, opt Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Markdown(&buf, l, opt))
	return buf.Bytes()
}

// doc is an exported page parsed as a browser would.
type doc struct {
	root *html.Node
	ids  map[string]*html.Node
}

func parseHTML(t testing.TB, b []byte) *doc {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(b))
	require.NoError(t, err)
	d := &doc{root: root, ids: map[string]*html.Node{}}
	walk(root, func(n *html.Node) {
		if id := attr(n, "id"); n.Type == html.ElementNode && id != "" {
			_, dup := d.ids[id]
			require.False(t, dup, "id %q is used twice", id)
			d.ids[id] = n
		}
	})
	return d
}

// walk calls fn for n and every node below it, in document order.
func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

// all returns the elements below n with the tag and, if class is not
// empty, that class.
func all(n *html.Node, tag, class string) []*html.Node {
	var out []*html.Node
	walk(n, func(c *html.Node) {
		if c.Type == html.ElementNode && c.Data == tag && (class == "" || hasClass(c, class)) {
			out = append(out, c)
		}
	})
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// text returns the text below n, as a browser shows it (no markup).
func text(n *html.Node) string {
	var sb strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			sb.WriteString(c.Data)
		}
	})
	return sb.String()
}

// oneLine is text(n) with its runs of space made one space.
func oneLine(n *html.Node) string { return strings.Join(strings.Fields(text(n)), " ") }

// checkSafe asserts what every export must be: no script, no element that
// loads or embeds anything, no event-handler or style attribute, no URL
// but a fragment or an image's data: URL.
func checkSafe(t testing.TB, d *doc, imagesAllowed bool) {
	t.Helper()
	walk(d.root, func(n *html.Node) {
		switch n.Type {
		case html.CommentNode:
			t.Errorf("a comment: <!--%s-->", n.Data)
		case html.ElementNode:
		default:
			return
		}
		switch n.Data {
		case "script", "iframe", "object", "embed", "link", "base", "form", "input", "svg", "math", "video", "audio", "source", "frame", "frameset", "applet":
			t.Errorf("element <%s> in the export", n.Data)
		case "img":
			if !imagesAllowed {
				t.Errorf("element <img> in the export: %v", n.Attr)
			}
		case "meta":
			if hasAttr(n, "http-equiv") {
				t.Errorf("<meta http-equiv> in the export")
			}
		case "style":
			if n.Parent == nil || n.Parent.Data != "head" {
				t.Errorf("a <style> outside <head>")
			}
		}
		for _, a := range n.Attr {
			k := strings.ToLower(a.Key)
			switch {
			case strings.HasPrefix(k, "on"):
				t.Errorf("event attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
			case k == "style", k == "srcset", k == "formaction", k == "action", k == "background", k == "poster", k == "xlink:href":
				t.Errorf("attribute %s on <%s>", a.Key, n.Data)
			case k == "href":
				if !strings.HasPrefix(a.Val, "#") {
					t.Errorf("href %q is not a fragment", a.Val)
				}
			case k == "src":
				if n.Data != "img" || !strings.HasPrefix(a.Val, "data:image/") {
					t.Errorf("src %q on <%s>", a.Val, n.Data)
				}
			}
		}
	})
	// The one stylesheet is ours, and loads nothing.
	for _, s := range all(d.root, "style", "") {
		css := text(s)
		require.NotContains(t, css, "url(")
		require.NotContains(t, css, "@import")
	}
}

// checkLinks asserts that every fragment link names an element of the page.
func checkLinks(t testing.TB, d *doc) {
	t.Helper()
	for _, a := range all(d.root, "a", "") {
		href := attr(a, "href")
		if _, ok := d.ids[strings.TrimPrefix(href, "#")]; !ok {
			t.Errorf("link %q names no element", href)
		}
	}
}

// block is a block of a prompt as the page lists it, or as EffectiveSystem
// derives it.
type block struct{ Text, Key, Source string }

func blocksOf(ss []conversation.SystemText) []block {
	out := []block{}
	for _, s := range ss {
		src := s.Source
		if src == "" {
			src = "(source not recorded)"
		}
		out = append(out, block{browserText(s.Text), s.Key, browserText(src)})
	}
	return out
}

// browserText is s as a page that holds it reads back: an HTML parser
// makes each line ending \n, and the page has NUL as U+FFFD.
func browserText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// promptSection returns the blocks that the section prompt-N lists.
func promptSection(t testing.TB, d *doc, id string) []block {
	t.Helper()
	sec, ok := d.ids[id]
	require.True(t, ok, "no section %s", id)
	out := []block{}
	for _, li := range all(sec, "li", "") {
		var b block
		b.Source = text(all(li, "span", "src")[0])
		if c := all(li, "code", ""); len(c) > 0 {
			b.Key = text(c[0])
		}
		b.Text = text(all(li, "pre", "")[0])
		out = append(out, b)
	}
	return out
}

// promptLink returns the id of the prompt state that the element n links
// to, or "" when it has no such link.
func promptLink(n *html.Node) string {
	for _, a := range all(n, "a", "p") {
		if h := attr(a, "href"); strings.HasPrefix(h, "#prompt-") {
			return h[1:]
		}
	}
	return ""
}

// checkPrompts asserts that each entry of the branch ending at leafID
// that links to a prompt state links to the right one: the blocks of
// EffectiveSystem of the messages up to and including it. Messages must
// have the link. It returns how many distinct prompts the branch went
// through.
func checkPrompts(t testing.TB, l *sessionlog.Log, d *doc, leafID string) int {
	t.Helper()
	branch, err := l.Branch(leafID)
	require.NoError(t, err)
	pos := map[string]int{}
	for i := range l.Entries {
		pos[l.Entries[i].ID] = i
	}
	var msgs []conversation.Message
	distinct := map[string]bool{}
	for _, e := range branch {
		if e.Message != nil {
			msgs = append(msgs, *e.Message)
		}
		want := blocksOf(conversation.EffectiveSystem(msgs))
		key, _ := json.Marshal(want)
		distinct[string(key)] = true
		n, ok := d.ids[anchor(pos[e.ID])]
		require.True(t, ok, "entry %s is not in the page", e.ID)
		link := promptLink(n)
		if e.Message != nil {
			require.NotEmpty(t, link, "message %s links to no prompt state", e.ID)
		}
		if link != "" {
			require.Equal(t, want, promptSection(t, d, link), "entry %s links to %s", e.ID, link)
		}
	}
	return len(distinct)
}

// promptSections counts the prompt-state sections of the page.
func promptSections(d *doc) int {
	n := 0
	for id := range d.ids {
		if strings.HasPrefix(id, "prompt-") {
			n++
		}
	}
	return n
}

// fenceState follows the code fences of an exported Markdown document,
// top-level and in blockquotes (the only places the export puts them).
type fenceState struct {
	open string // the open fence, "" when none
}

// line feeds one line; it reports whether the line is outside any code
// block (and not a fence line itself).
func (f *fenceState) line(l string) bool {
	in := l
	if strings.HasPrefix(in, ">") {
		in = strings.TrimPrefix(strings.TrimPrefix(in, ">"), " ")
	}
	if f.open != "" {
		if closesFence(in, f.open) {
			f.open = ""
		}
		return false
	}
	if o := opensFence(in); o != "" {
		f.open = o
		return false
	}
	return true
}

// mdOutside returns the lines of a Markdown document that are outside
// code blocks, and fails if a code block is left open at the end.
func mdOutside(t testing.TB, md string) []string {
	t.Helper()
	var f fenceState
	var out []string
	for _, l := range strings.Split(md, "\n") {
		if f.line(l) {
			out = append(out, l)
		}
	}
	require.Empty(t, f.open, "a code block is left open at the end")
	return out
}

// builder writes a log line by line, with ids e1, e2, … (or given ones) and
// a second between entries, and decodes it as Read would.
type builder struct {
	t     testing.TB
	buf   bytes.Buffer
	n     int
	last  string
	clock time.Time
	// ids are the ids of the messages written, in order.
	ids []string
}

func newBuilder(t testing.TB, cwd string) *builder {
	return newForkBuilder(t, cwd, "", "")
}

// newForkBuilder is newBuilder for a forked session: its header names the
// parent session and entry (each left out when "").
func newForkBuilder(t testing.TB, cwd, parentSession, parentEntry string) *builder {
	b := &builder{t: t, clock: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)}
	head := map[string]any{"type": "session", "version": 1, "id": "test-session", "created": b.clock.Format(time.RFC3339Nano), "cwd": cwd}
	if parentSession != "" {
		head["parent_session"] = parentSession
	}
	if parentEntry != "" {
		head["parent_entry"] = parentEntry
	}
	enc := json.NewEncoder(&b.buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(head))
	return b
}

// move writes a move to the entry target from the current leaf, as the
// host records one: the move's parent is target. It returns the move's id.
func (b *builder) move(target string) string {
	from := b.last
	b.last = target
	return b.add("move", "", map[string]any{"from": from})
}

// label writes a label entry giving target the label text ("" removes
// it).
func (b *builder) label(target, text string) string {
	return b.add("label", "", map[string]any{"target": target, "label": text})
}

// summary writes a branch summary of the branch that ended at from.
func (b *builder) summary(text, from string) string {
	return b.add("branch_summary", "", map[string]any{"summary": text, "from": from})
}

// add writes an entry of typ with the fields of payload; id "" means the
// next generated one. It returns the id.
func (b *builder) add(typ, id string, payload map[string]any) string {
	b.n++
	if id == "" {
		id = "e" + strconv.Itoa(b.n)
	}
	b.clock = b.clock.Add(time.Second)
	line := map[string]any{"type": typ, "id": id, "time": b.clock.Format(time.RFC3339Nano)}
	if b.last != "" {
		line["parent_id"] = b.last
	}
	for k, v := range payload {
		line[k] = v
	}
	enc := json.NewEncoder(&b.buf)
	enc.SetEscapeHTML(false)
	require.NoError(b.t, enc.Encode(line))
	b.last = id
	return id
}

func (b *builder) msg(id string, m conversation.Message) string {
	id = b.add("message", id, map[string]any{"message": m})
	b.ids = append(b.ids, id)
	return id
}

func (b *builder) log() (*sessionlog.Log, error) {
	return sessionlog.Decode(bytes.NewReader(b.buf.Bytes()), "test.jsonl")
}

func (b *builder) mustLog() *sessionlog.Log {
	l, err := b.log()
	require.NoError(b.t, err, "%s", b.buf.String())
	return l
}

// toolCall is an assistant message with one tool call.
func toolCall(id, name string, input any) conversation.Message {
	in, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{conversation.ToolUse(id, name, in)}}
}

// toolResult is a tool message with one result.
func toolResult(id, text string, isError bool) conversation.Message {
	return conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{conversation.ToolResult(id, text, isError)}}
}
