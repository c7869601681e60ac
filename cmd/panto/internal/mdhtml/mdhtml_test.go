package mdhtml

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// parse parses out as the body of a page, as a browser would.
func parse(t testing.TB, out string) []*html.Node {
	t.Helper()
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(out), body)
	require.NoError(t, err)
	return nodes
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

// allowed are the elements a reply may become, and the attributes each
// may carry.
var allowed = map[string][]string{
	"p": nil, "h4": nil, "h5": nil, "h6": nil, "hr": nil, "br": nil,
	"pre": {"class", "title"}, "code": {"class"}, "blockquote": nil,
	"ul": nil, "ol": {"start"}, "li": nil,
	"table": nil, "thead": nil, "tbody": nil, "tr": nil, "th": {"class"}, "td": {"class"},
	"em": nil, "strong": nil, "del": nil, "span": {"class"},
}

// checkSafe asserts that out holds only the elements and attributes the
// renderer writes: no script, no link, nothing that loads.
func checkSafe(t testing.TB, out string) {
	t.Helper()
	for _, n := range parse(t, out) {
		walk(n, func(n *html.Node) {
			switch n.Type {
			case html.CommentNode:
				t.Errorf("a comment in %q", out)
			case html.ElementNode:
				attrs, ok := allowed[n.Data]
				if !ok {
					t.Errorf("element <%s> in %q", n.Data, out)
				}
				for _, a := range n.Attr {
					if !contains(attrs, a.Key) {
						t.Errorf("attribute %s=%q on <%s> in %q", a.Key, a.Val, n.Data, out)
					}
				}
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// text is what a reader sees of out, without the newlines between blocks.
func text(t testing.TB, out string) string {
	return strings.TrimSpace(allText(t, out))
}

func allText(t testing.TB, out string) string {
	var b strings.Builder
	for _, n := range parse(t, out) {
		walk(n, func(n *html.Node) {
			if n.Type == html.TextNode {
				b.WriteString(n.Data)
			}
		})
	}
	return b.String()
}

// The Markdown a reply is written in reads as formatted text.
func TestRender(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want string }{
		{"paragraphs", "one\ntwo\n\nthree", "<p>one\ntwo</p>\n<p>three</p>\n"},
		{"emphasis", "*a* **b** ~~c~~ `d`", "<p><em>a</em> <strong>b</strong> <del>c</del> <code>d</code></p>\n"},
		{"heading", "# Title\n### Sub", "<h4>Title</h4>\n<h6>Sub</h6>\n"},
		{"tight list", "- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"ordered from 3", "3. x\n4. y", "<ol start=\"3\">\n<li>x</li>\n<li>y</li>\n</ol>\n"},
		{"quote", "> q", "<blockquote>\n<p>q</p>\n</blockquote>\n"},
		{"fenced code", "```go\nif a < b {}\n```", "<pre class=\"code\" title=\"go\">\nif a &lt; b {}</pre>\n"},
		{"table", "| a | b |\n|:-|-:|\n| 1 | 2 |", "<table>\n<thead><tr><th class=\"l\">a</th><th class=\"r\">b</th></tr></thead>\n<tbody><tr><td class=\"l\">1</td><td class=\"r\">2</td></tr>\n</tbody>\n</table>\n"},
		{"task", "- [x] done\n- [ ] not", "<ul>\n<li><span class=\"chk\">☑</span> done</li>\n<li><span class=\"chk\">☐</span> not</li>\n</ul>\n"},
		{"link shows its target", "[docs](https://example.com/d)", "<p><span class=\"link\">docs</span> <span class=\"url\">(https://example.com/d)</span></p>\n"},
		{"autolink", "see https://example.com", "<p>see <span class=\"link\">https://example.com</span></p>\n"},
		{"entities resolve, then escape", "&lt;b&gt; &amp; \\*", "<p>&lt;b&gt; &amp; *</p>\n"},
		{"hard break", "a  \nb", "<p>a<br>\nb</p>\n"},
		{"rule", "---", "<hr>\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := String(tc.src)
			require.Equal(t, tc.want, got)
			checkSafe(t, got)
		})
	}
}

// Hostile Markdown makes no element, attribute, link or comment: raw HTML
// shows as the text it is, a link's target is words beside it.
func TestRenderHostile(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`</details><script>alert(1)</script>`,
		"<script>\nalert(1)\n</script>",
		`<img src=x onerror=alert(1)>`,
		"<!-- a comment -->\n\nafter",
		`[click](javascript:alert(1))`,
		`[x](data:text/html;base64,PHNjcmlwdD4=)`,
		`![i](https://evil.example/track.png "t")`,
		`<https://evil.example/" onmouseover="alert(1)>`,
		"```\"onmouseover=\"alert(1)\n</pre><script>x</script>\n```",
		`[a](<"onclick=alert(1)>)`,
		"| <b>x</b> | &#60;script&#62; |\n|-|-|\n| ]]> | \x00 |",
		"&#0; &#x3C;script&#x3E; &lt;!--",
		"<style>*{background:url(https://evil.example/y)}</style>",
		"\xff\xfe broken UTF-8",
	} {
		out := String(src)
		checkSafe(t, out)
		require.NotContains(t, out, "<script")
		require.NotContains(t, out, "<img")
		require.NotContains(t, out, "<!--")
		require.NotContains(t, out, "<a ")
	}
	// What was written is what shows.
	require.Equal(t, "</details><script>alert(1)</script>", text(t, String(`</details><script>alert(1)</script>`)))
	require.Equal(t, "click (javascript:alert(1))", text(t, String(`[click](javascript:alert(1))`)))
	require.Equal(t, "[image: i] (https://evil.example/track.png)", text(t, String(`![i](https://evil.example/track.png "t")`)))
	require.Equal(t, "<script>\nalert(1)\n</script>", text(t, String("<script>\nalert(1)\n</script>")))
	out := String("```\"onmouseover=\"alert(1)\n</pre><script>x</script>\n```")
	require.Contains(t, out, `title="&#34;onmouseover=&#34;alert(1)"`)
	require.Equal(t, "</pre><script>x</script>", text(t, out))
}

// Every Markdown renders to HTML made only of the renderer's own elements
// and attributes.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"# h\n\n*a* **b** `c`\n\n- x\n  - y\n\n> q\n>> qq\n\n```js\nx\n```",
		"| a | b |\n|-|-|\n| 1 | 2 |",
		"<div onclick=x>\n\n[l](javascript:x) ![i](http://x) <b>r</b>",
		"1. a\n\n   b\n2. [ ] c\n\n---\n\ttabbed code",
		"&amp;&#0;&#x110000;\x00\r\n\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out := String(src)
		checkSafe(t, out)
		for _, bad := range []string{"<script", "<img", "<!--", "<a ", "<style", "<iframe"} {
			if strings.Contains(out, bad) {
				t.Fatalf("%q renders %q, with %s", src, out, bad)
			}
		}
	})
}
