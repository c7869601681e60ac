// Package mdhtml renders Markdown as HTML for panto's session export: the
// tree mdparse parses — the one the UI's terminal renderer walks — as
// paragraphs, headings, emphasis, code, lists, quotes, tables and rules.
//
// The source is outside text (a model's reply), so the output is made
// safe by construction rather than by sanitising what a library wrote:
//
//   - every text is escaped (after Markdown's entities are resolved, so
//     "&lt;" shows as "<" and "<" can never open a tag);
//   - raw HTML in the Markdown is shown as the text it is, never passed
//     through;
//   - nothing links or loads outside the page: a link is its text with
//     its target beside it, as text ("docs (https://…)"), and an image is
//     its alt text and its target, so an export opened offline is whole
//     and a javascript: or data: target is only ever words;
//   - no attribute takes a value from the source but a list's start
//     number and a code block's language, the latter escaped.
//
// Headings start at <h4>: a reply sits inside the page's own <h1>–<h3>.
//
// What does not belong here: parsing (mdparse), the page around a reply
// (export).
package mdhtml

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"

	"github.com/panto-dev/panto/cmd/panto/internal/mdparse"
)

// Writer is where Render writes: a *bufio.Writer, a *strings.Builder.
type Writer interface {
	io.Writer
	io.StringWriter
}

// Render writes src, Markdown, as HTML to w. It does not report w's
// errors: a *bufio.Writer keeps the first, for its caller's Flush.
func Render(w Writer, src string) {
	source := []byte(strings.ToValidUTF8(src, "\uFFFD"))
	r := &renderer{w: w, src: source}
	r.blocks(mdparse.Parse(source))
}

// String returns src rendered as HTML.
func String(src string) string {
	var b strings.Builder
	Render(&b, src)
	return b.String()
}

type renderer struct {
	w   Writer
	src []byte
}

// escaper escapes text and double-quoted attribute values alike; NUL is
// U+FFFD, as an HTML parser would make it.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "\x00", "\uFFFD")

// m writes markup of this package's own.
func (r *renderer) m(s string) { r.w.WriteString(s) }

// text writes s escaped.
func (r *renderer) text(s string) { escaper.WriteString(r.w, s) }

func (r *renderer) blocks(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.block(c)
	}
}

func (r *renderer) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Paragraph:
		r.m("<p>")
		r.inlines(n)
		r.m("</p>\n")
	case *ast.TextBlock: // a tight list item's text
		r.inlines(n)
		if n.NextSibling() != nil {
			r.m("\n")
		}
	case *ast.Heading:
		tag := "h" + strconv.Itoa(min(n.Level+3, 6))
		r.m("<" + tag + ">")
		r.inlines(n)
		r.m("</" + tag + ">\n")
	case *ast.ThematicBreak:
		r.m("<hr>\n")
	case *ast.FencedCodeBlock:
		r.code(n, string(n.Language(r.src)))
	case *ast.CodeBlock:
		r.code(n, "")
	case *ast.Blockquote:
		r.m("<blockquote>\n")
		r.blocks(n)
		r.m("</blockquote>\n")
	case *ast.List:
		r.list(n)
	case *ast.HTMLBlock:
		r.m(`<pre class="raw">` + "\n")
		r.text(strings.TrimRight(mdparse.Raw(n, r.src), "\n"))
		r.m("</pre>\n")
	case *east.Table:
		r.table(n)
	default:
		// Anything else with children (a definition list, say): its
		// blocks, or its text.
		if c := n.FirstChild(); c != nil {
			if c.Type() == ast.TypeInline {
				r.m("<p>")
				r.inlines(n)
				r.m("</p>\n")
				return
			}
			r.blocks(n)
		}
	}
}

// code writes a code block as a <pre> of its text only; the language, if
// any, as its title.
func (r *renderer) code(n ast.Node, lang string) {
	r.m(`<pre class="code"`)
	if lang != "" {
		r.m(` title="`)
		r.text(lang)
		r.m(`"`)
	}
	// The newline after <pre> is the one an HTML parser drops, so code
	// that starts with a blank line keeps it.
	r.m(">\n")
	r.text(strings.TrimRight(mdparse.Raw(n, r.src), "\n"))
	r.m("</pre>\n")
}

func (r *renderer) list(l *ast.List) {
	tag := "ul"
	if l.IsOrdered() {
		tag = "ol"
	}
	r.m("<" + tag)
	if l.IsOrdered() && l.Start != 1 {
		r.m(` start="` + strconv.Itoa(l.Start) + `"`)
	}
	r.m(">\n")
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		r.m("<li>")
		r.blocks(it)
		r.m("</li>\n")
	}
	r.m("</" + tag + ">\n")
}

func (r *renderer) table(t *east.Table) {
	r.m("<table>\n")
	body := false
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		cell := "td"
		if _, ok := row.(*east.TableHeader); ok {
			cell = "th"
			r.m("<thead>")
		} else if !body {
			body = true
			r.m("<tbody>")
		}
		r.m("<tr>")
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			r.m("<" + cell)
			if tc, ok := c.(*east.TableCell); ok {
				switch tc.Alignment {
				case east.AlignLeft:
					r.m(` class="l"`)
				case east.AlignCenter:
					r.m(` class="c"`)
				case east.AlignRight:
					r.m(` class="r"`)
				}
			}
			r.m(">")
			r.inlines(c)
			r.m("</" + cell + ">")
		}
		r.m("</tr>")
		if cell == "th" {
			r.m("</thead>")
		}
		r.m("\n")
	}
	if body {
		r.m("</tbody>\n")
	}
	r.m("</table>\n")
}

func (r *renderer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c)
	}
}

// plain returns the text of n's inlines, unstyled (a link's or an
// image's text, to compare with its target).
func (r *renderer) plain(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			v := t.Value(r.src)
			if !t.IsRaw() {
				v = mdparse.Unescape(v)
			}
			b.Write(v)
		case *ast.String:
			b.Write(t.Value)
		default:
			b.WriteString(r.plain(c))
		}
	}
	return b.String()
}

func (r *renderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(r.src)
		if !n.IsRaw() {
			v = mdparse.Unescape(v)
		}
		r.text(string(v))
		switch {
		case n.HardLineBreak():
			r.m("<br>\n")
		case n.SoftLineBreak():
			r.m("\n")
		}
	case *ast.String:
		v := n.Value
		if !n.IsRaw() && !n.IsCode() {
			v = mdparse.Unescape(v)
		}
		r.text(string(v))
	case *ast.CodeSpan:
		var code bytes.Buffer
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				code.Write(t.Value(r.src))
			case *ast.String:
				code.Write(t.Value)
			}
		}
		r.m("<code>")
		r.text(code.String())
		r.m("</code>")
	case *ast.Emphasis:
		tag := "em"
		if n.Level >= 2 {
			tag = "strong"
		}
		r.m("<" + tag + ">")
		r.inlines(n)
		r.m("</" + tag + ">")
	case *east.Strikethrough:
		r.m("<del>")
		r.inlines(n)
		r.m("</del>")
	case *ast.Link:
		r.m(`<span class="link">`)
		r.inlines(n)
		r.m("</span>")
		// The target is shown beside the text whenever they differ: a
		// link's text cannot pass for where it goes.
		if url := string(n.Destination); url != "" && r.plain(n) != url {
			r.url(url)
		}
	case *ast.AutoLink:
		r.m(`<span class="link">`)
		r.text(string(n.URL(r.src)))
		r.m("</span>")
	case *ast.Image:
		r.m(`<span class="img">[image: `)
		r.inlines(n)
		r.m("]</span>")
		r.url(string(n.Destination))
	case *ast.RawHTML:
		var raw bytes.Buffer
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			raw.Write(seg.Value(r.src))
		}
		r.m(`<code class="raw">`)
		r.text(raw.String())
		r.m("</code>")
	case *east.TaskCheckBox:
		if n.IsChecked {
			r.m(`<span class="chk">☑</span> `)
		} else {
			r.m(`<span class="chk">☐</span> `)
		}
	default:
		r.inlines(n)
	}
}

// url writes a link's or an image's target as text beside it.
func (r *renderer) url(u string) {
	r.m(` <span class="url">(`)
	r.text(u)
	r.m(")</span>")
}
