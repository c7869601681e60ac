package main

import (
	"bytes"
	"io"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxDepth bounds how deep the converter follows nested elements; what
// lies deeper is kept as plain text. A page nested this deep is hostile
// or broken, and the bound keeps the work linear.
const maxDepth = 256

// dropped are the elements whose content is noise to a reader: scripts,
// styles, navigation, forms and embedded media.
var dropped = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Footer: true, atom.Svg: true, atom.Math: true, atom.Canvas: true,
	atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Video: true, atom.Audio: true,
	atom.Form: true, atom.Button: true, atom.Select: true, atom.Input: true, atom.Textarea: true,
	atom.Dialog: true,
}

// blocks are the elements that stand on lines of their own, apart from
// their neighbours by a blank line.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Aside: true, atom.Figure: true, atom.Figcaption: true,
	atom.Address: true, atom.Details: true, atom.Summary: true, atom.Dl: true, atom.Body: true,
	atom.Center: true, atom.Fieldset: true, atom.Caption: true,
}

// toMarkdown reads an HTML document and returns its title and its
// content as Markdown: headings, paragraphs, links (made absolute
// against base), lists, code, emphasis, block quotes and tables, with
// scripts, styles, navigation and forms left out. It never fails on
// bad HTML (the parser repairs it, as a browser does; a page the parser
// gives up on, nested past its 512 open elements, is read as plain
// text); the error is the reader's.
func toMarkdown(r io.Reader, base *url.URL) (title, markdown string, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", "", err
	}
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return plainHTML(data)
	}
	if t := find(doc, atom.Title, 0); t != nil {
		title = collapse(textOf(t))
	}
	c := &conv{base: base}
	c.children(doc, 0)
	return title, tidy(c.out.String()), nil
}

// plainHTML is the text of a page the parser refused: its text tokens
// (not those of scripts and styles), a paragraph per block of them.
func plainHTML(data []byte) (title, markdown string, err error) {
	z := html.NewTokenizer(bytes.NewReader(data))
	var b strings.Builder
	skip, inTitle := 0, false
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				return "", "", z.Err()
			}
			return collapse(title), tidy(b.String()), nil
		case html.StartTagToken:
			name, _ := z.TagName()
			switch a := atom.Lookup(name); {
			case a == atom.Script || a == atom.Style:
				skip++
			case a == atom.Title:
				inTitle = true
			case blocks[a] || a == atom.Li || a == atom.Br || a == atom.Tr:
				b.WriteString("\n\n")
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.Script, atom.Style:
				skip = max(0, skip-1)
			case atom.Title:
				inTitle = false
			}
		case html.TextToken:
			switch t := string(z.Text()); {
			case skip > 0:
			case inTitle:
				title += t
			default:
				if s := collapse(t); s != "" {
					b.WriteString(escape(s) + " ")
				}
			}
		}
	}
}

// find is the first element a below n, depth-first.
func find(n *html.Node, a atom.Atom, depth int) *html.Node {
	if depth > maxDepth {
		return nil
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type == html.ElementNode && ch.DataAtom == a {
			return ch
		}
		if f := find(ch, a, depth+1); f != nil {
			return f
		}
	}
	return nil
}

// prefix is what each line inside a block quote or a list item starts
// with: first on the block's first line, rest on the others.
type prefix struct {
	first, rest string
	used        bool
}

// conv writes Markdown as it walks the tree. Inline text is written as
// it comes, whitespace collapsed; blocks ask for a line break or a
// blank line before what follows, which is written only once text
// follows (so empty elements leave no blank lines).
type conv struct {
	out  strings.Builder
	base *url.URL
	// pending is the break owed before the next text: 0 none, 1 a line
	// break, 2 a blank line.
	pending int
	// lineStart says nothing was written on the current line yet;
	// space that a space was the last thing written.
	lineStart, space bool
	prefixes         []prefix
	// lists are the open lists: for each, the next number of an ordered
	// list, or -1 for a bulleted one.
	lists []int
}

// brk owes a line break (n = 1) or a blank line (n = 2) before the next
// text.
func (c *conv) brk(n int) {
	if c.out.Len() > 0 {
		c.pending = max(c.pending, n)
	}
}

// startLine writes the owed break and the line's prefix.
func (c *conv) startLine() {
	if c.pending > 0 && c.out.Len() > 0 {
		for i := 0; i < c.pending; i++ {
			if i > 0 {
				c.out.WriteString(strings.TrimRight(c.blankPrefix(), " "))
			}
			c.out.WriteByte('\n')
		}
		c.lineStart = true
	}
	if c.pending > 0 || c.out.Len() == 0 || c.lineStart {
		c.out.WriteString(c.linePrefix(true))
	}
	c.pending = 0
	c.lineStart = false
	c.space = false
}

// blankPrefix is the prefix of a blank line: the block quotes and list
// items it is inside, not a marker yet to be written.
func (c *conv) blankPrefix() string {
	var b strings.Builder
	for _, p := range c.prefixes {
		if p.used {
			b.WriteString(p.rest)
		}
	}
	return b.String()
}

// linePrefix is the prefix of a new line; use marks a list marker as
// written, so the item's later lines are indented instead.
func (c *conv) linePrefix(use bool) string {
	var b strings.Builder
	for i := range c.prefixes {
		p := &c.prefixes[i]
		if p.used {
			b.WriteString(p.rest)
			continue
		}
		b.WriteString(p.first)
		if use {
			p.used = true
		}
	}
	return b.String()
}

// text writes inline text, its whitespace collapsed.
func (c *conv) text(s string) {
	for i, word := range strings.Fields(s) {
		lead := i > 0 || startsSpace(s)
		c.word(word, lead)
	}
	if endsSpace(s) && strings.TrimSpace(s) != "" {
		c.space = true
	} else if strings.TrimSpace(s) == "" && s != "" && !c.lineStart && c.pending == 0 && c.out.Len() > 0 {
		c.space = true
	}
}

// word writes one word, a space before it when lead or one is owed.
func (c *conv) word(w string, lead bool) {
	if c.pending > 0 || c.lineStart || c.out.Len() == 0 {
		c.startLine()
	} else if lead || c.space {
		c.out.WriteByte(' ')
	}
	c.out.WriteString(w)
	c.space = false
}

// raw writes s as it is (already Markdown), on the current line.
func (c *conv) raw(s string) {
	if s == "" {
		return
	}
	lead := c.space
	if c.pending > 0 || c.lineStart || c.out.Len() == 0 {
		c.startLine()
	} else if lead {
		c.out.WriteByte(' ')
	}
	c.out.WriteString(s)
	c.space = false
}

// newline ends the current line (a <br>).
func (c *conv) newline() {
	if c.out.Len() == 0 {
		return
	}
	c.out.WriteByte('\n')
	c.lineStart = true
	c.space = false
}

func startsSpace(s string) bool { return s != "" && isSpace(s[0]) }
func endsSpace(s string) bool   { return s != "" && isSpace(s[len(s)-1]) }
func isSpace(b byte) bool       { return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' }

func (c *conv) children(n *html.Node, depth int) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.node(ch, depth+1)
	}
}

// node converts n and what it holds.
func (c *conv) node(n *html.Node, depth int) {
	switch n.Type {
	case html.TextNode:
		c.text(escape(n.Data))
		return
	case html.DocumentNode:
		c.children(n, depth)
		return
	case html.ElementNode:
	default:
		return
	}
	if depth > maxDepth {
		c.text(escape(textOf(n)))
		return
	}
	if dropped[n.DataAtom] || hidden(n) {
		return
	}
	switch a := n.DataAtom; {
	case a == atom.H1 || a == atom.H2 || a == atom.H3 || a == atom.H4 || a == atom.H5 || a == atom.H6:
		level := int(n.Data[1] - '0')
		if t := c.inline(n, depth); t != "" {
			c.brk(2)
			c.raw(strings.Repeat("#", level) + " " + t)
			c.brk(2)
		}
	case a == atom.Br:
		c.newline()
	case a == atom.Hr:
		c.brk(2)
		c.raw("---")
		c.brk(2)
	case a == atom.Pre:
		c.pre(n)
	case a == atom.Code || a == atom.Kbd || a == atom.Samp || a == atom.Tt:
		c.raw(codeSpan(textOf(n)))
	case a == atom.A:
		c.link(n, depth)
	case a == atom.Img:
		c.image(n)
	case a == atom.Strong || a == atom.B:
		c.wrap(n, depth, "**")
	case a == atom.Em || a == atom.I || a == atom.Cite || a == atom.Var:
		c.wrap(n, depth, "*")
	case a == atom.Del || a == atom.S || a == atom.Strike:
		c.wrap(n, depth, "~~")
	case a == atom.Ul || a == atom.Ol || a == atom.Menu:
		c.list(n, depth)
	case a == atom.Li:
		c.item(n, depth, "- ")
	case a == atom.Blockquote:
		c.brk(2)
		c.prefixes = append(c.prefixes, prefix{first: "> ", rest: "> "})
		c.children(n, depth)
		c.prefixes = c.prefixes[:len(c.prefixes)-1]
		c.brk(2)
	case a == atom.Table:
		c.table(n, depth)
	case a == atom.Dt:
		c.brk(1)
		c.wrap(n, depth, "**")
		c.brk(1)
	case a == atom.Dd:
		c.brk(1)
		c.prefixes = append(c.prefixes, prefix{first: ": ", rest: "  "})
		c.children(n, depth)
		c.prefixes = c.prefixes[:len(c.prefixes)-1]
		c.brk(1)
	case a == atom.Tr:
		c.brk(1)
		c.children(n, depth)
		c.brk(1)
	case a == atom.Td || a == atom.Th:
		c.children(n, depth)
		c.space = true
	case blocks[a]:
		c.brk(2)
		c.children(n, depth)
		c.brk(2)
	default:
		c.children(n, depth)
	}
}

// hasBlock reports whether n holds a block element (a paragraph, a
// list, a heading...): bad HTML's unclosed <b> may hold the rest of the
// page, which must not be joined onto one line.
func hasBlock(n *html.Node, depth int) bool {
	if depth > maxDepth {
		return false
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type != html.ElementNode {
			continue
		}
		switch a := ch.DataAtom; {
		case blocks[a], a == atom.Ul, a == atom.Ol, a == atom.Li, a == atom.Pre, a == atom.Table, a == atom.Blockquote,
			a == atom.H1, a == atom.H2, a == atom.H3, a == atom.H4, a == atom.H5, a == atom.H6, a == atom.Hr:
			return true
		}
		if hasBlock(ch, depth+1) {
			return true
		}
	}
	return false
}

// hidden reports whether n is marked not to be shown.
func hidden(n *html.Node) bool {
	for _, at := range n.Attr {
		switch {
		case at.Key == "hidden", at.Key == "aria-hidden" && at.Val == "true":
			return true
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, at := range n.Attr {
		if at.Key == key {
			return at.Val
		}
	}
	return ""
}

// inline is what n holds, converted on its own and joined onto one line.
func (c *conv) inline(n *html.Node, depth int) string {
	sub := &conv{base: c.base}
	sub.children(n, depth)
	return collapse(sub.out.String())
}

// wrap writes n's content between marks (** for bold), nothing when it
// is empty.
func (c *conv) wrap(n *html.Node, depth int, mark string) {
	if hasBlock(n, 0) {
		c.children(n, depth)
		return
	}
	lead := c.space || startsSpace(textOf(n))
	t := c.inline(n, depth)
	if t == "" {
		return
	}
	c.space = lead
	c.raw(mark + t + mark)
	if endsSpace(textOf(n)) {
		c.space = true
	}
}

// link writes [text](url), the url made absolute; just the text when
// the link leads nowhere useful (a fragment, javascript:).
func (c *conv) link(n *html.Node, depth int) {
	if hasBlock(n, 0) {
		c.children(n, depth)
		return
	}
	lead := c.space || startsSpace(textOf(n))
	t := c.inline(n, depth)
	if t == "" {
		return
	}
	c.space = lead
	href := c.resolve(attr(n, "href"))
	if href == "" {
		c.raw(t)
	} else {
		c.raw("[" + t + "](" + href + ")")
	}
	if endsSpace(textOf(n)) {
		c.space = true
	}
}

// image writes ![alt](src) for an image with an alt text; an image
// without one says nothing a reader of text could use.
func (c *conv) image(n *html.Node) {
	alt := collapse(attr(n, "alt"))
	if alt == "" {
		return
	}
	if src := c.resolve(attr(n, "src")); src != "" {
		c.raw("![" + escape(alt) + "](" + src + ")")
		return
	}
	c.text(escape(alt))
}

// resolve makes a link absolute against the page's URL; "" for a
// fragment-only link, a data: or javascript: URL, or one that does not
// parse.
func (c *conv) resolve(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if c.base != nil {
		u = c.base.ResolveReference(u)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto", "ftp", "":
	default:
		return ""
	}
	s := u.String()
	s = strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(s)
	return s
}

// list writes a ul or ol, one item a line, nested lists indented.
func (c *conv) list(n *html.Node, depth int) {
	if len(c.lists) == 0 {
		c.brk(2)
	} else {
		c.brk(1)
	}
	next := -1
	if n.DataAtom == atom.Ol {
		next = 1
		if s, err := strconv.Atoi(attr(n, "start")); err == nil && s >= 0 && s < 1e9 {
			next = s
		}
	}
	c.lists = append(c.lists, next)
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type == html.ElementNode && ch.DataAtom == atom.Li {
			marker := "- "
			if k := &c.lists[len(c.lists)-1]; *k >= 0 {
				marker = strconv.Itoa(*k) + ". "
				*k++
			}
			c.item(ch, depth+1, marker)
			continue
		}
		c.node(ch, depth+1)
	}
	c.lists = c.lists[:len(c.lists)-1]
	if len(c.lists) == 0 {
		c.brk(2)
	} else {
		c.brk(1)
	}
}

// item writes one list item after its marker; its later lines are
// indented under the marker.
func (c *conv) item(n *html.Node, depth int, marker string) {
	c.brk(1)
	c.prefixes = append(c.prefixes, prefix{first: marker, rest: strings.Repeat(" ", len(marker))})
	c.children(n, depth)
	c.prefixes = c.prefixes[:len(c.prefixes)-1]
	c.brk(1)
}

// pre writes a fenced code block, its text as it is, with the language
// a class such as "language-go" names.
func (c *conv) pre(n *html.Node) {
	body := strings.TrimRight(textOf(n), "\n ")
	body = strings.TrimLeft(body, "\n")
	if strings.TrimSpace(body) == "" {
		return
	}
	lang := ""
	for _, el := range []*html.Node{n, find(n, atom.Code, 0)} {
		if el == nil {
			continue
		}
		for _, cl := range strings.Fields(attr(el, "class")) {
			if l, ok := strings.CutPrefix(cl, "language-"); ok && lang == "" {
				lang = l
			}
		}
	}
	fence := "```"
	for strings.Contains(body, fence) {
		fence += "`"
	}
	c.brk(2)
	c.raw(fence + lang)
	for _, line := range strings.Split(body, "\n") {
		c.newline()
		c.startLine()
		c.out.WriteString(strings.TrimRight(line, "\r"))
	}
	c.newline()
	c.startLine()
	c.out.WriteString(fence)
	c.brk(2)
}

// table writes a table as Markdown rows, the first row the header.
func (c *conv) table(n *html.Node, depth int) {
	var rows [][]string
	var walk func(*html.Node, int)
	walk = func(m *html.Node, d int) {
		for ch := m.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type != html.ElementNode || d > maxDepth {
				continue
			}
			switch ch.DataAtom {
			case atom.Tr:
				var row []string
				for cell := ch.FirstChild; cell != nil; cell = cell.NextSibling {
					if cell.Type == html.ElementNode && (cell.DataAtom == atom.Td || cell.DataAtom == atom.Th) {
						row = append(row, strings.ReplaceAll(c.inline(cell, d+1), "|", `\|`))
					}
				}
				if len(row) > 0 {
					rows = append(rows, row)
				}
			case atom.Table:
				// A table in a table: its rows are the cell's text.
			default:
				walk(ch, d+1)
			}
		}
	}
	walk(n, depth)
	if len(rows) == 0 {
		return
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	c.brk(2)
	for i, r := range rows {
		for len(r) < cols {
			r = append(r, "")
		}
		if i > 0 {
			c.newline()
		}
		c.raw("| " + strings.Join(r, " | ") + " |")
		if i == 0 {
			c.newline()
			c.raw(strings.TrimSuffix(strings.Repeat("| --- ", cols), " ") + " |")
		}
	}
	c.brk(2)
}

// codeSpan is s as inline code, with a fence longer than any run of
// backticks in it.
func codeSpan(s string) string {
	s = collapse(s)
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// textOf is the text n holds, as it is (for pre and code).
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node, int)
	walk = func(m *html.Node, d int) {
		if m.Type == html.TextNode {
			b.WriteString(m.Data)
			return
		}
		if d > maxDepth || m.Type == html.ElementNode && (m.DataAtom == atom.Script || m.DataAtom == atom.Style) {
			return
		}
		if m.Type == html.ElementNode && m.DataAtom == atom.Br {
			b.WriteByte('\n')
		}
		for ch := m.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch, d+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// collapse joins s's words with single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// mdSpecial escapes the characters that would start Markdown syntax in
// running text.
var mdSpecial = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`)

func escape(s string) string { return mdSpecial.Replace(s) }

// tidy trims the spaces that end lines, keeps at most one blank line in
// a row outside code blocks, and ends the text with one newline.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	blank, code := 0, ""
	for _, l := range lines {
		if code == "" {
			l = strings.TrimRight(l, " \t")
		}
		trimmed := strings.TrimLeft(l, "> -0123456789.:")
		if strings.HasPrefix(trimmed, "```") {
			fence := strings.TrimRight(trimmed, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-_#.")
			switch {
			case code == "":
				code = fence
			case fence == code && strings.TrimSpace(trimmed) == code:
				code = ""
			}
		}
		if code == "" && strings.TrimSpace(strings.Trim(l, ">")) == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	res := strings.TrimSpace(strings.Join(out, "\n"))
	if res == "" {
		return ""
	}
	return res + "\n"
}
