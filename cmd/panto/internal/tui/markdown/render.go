// Package markdown renders Markdown for the terminal: mdparse parses it
// (goldmark's CommonMark with GitHub's tables, strikethrough, task lists
// and autolinks, the parse the HTML export shares), and a small renderer of our own writes styled, wrapped
// lines — headings, emphasis, code spans, lists, quotes, fenced code,
// tables, links and rules.
//
// It is not glamour on purpose. Linking glamour (through chroma, its
// syntax highlighter) adds about 30 ms of package initialisation to every
// start of panto — print mode and --version included — measured on this
// project: `panto -p hi --provider echo` took 38 ms with glamour linked
// against 7 ms without, and goldmark alone adds under 2 ms. It also
// renders ~30 times faster (glamour spends most of its time styling),
// which keeps a resume and a resize cheap. Code blocks are therefore not
// syntax highlighted.
//
// Stream renders a reply as it streams: finished blocks are rendered
// once and kept as lines; only the open last block is rendered again.
//
// The source is outside text (a model's reply): every piece of it the
// renderer writes goes through termtext first — after entities are
// resolved, so "&#27;" cannot make an ESC — and a link shows its target
// beside its text when they differ. The only escapes in the lines are
// the theme's styling.
package markdown

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"

	"github.com/panto-dev/panto/cmd/panto/internal/mdparse"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

// Render renders src at width cells with th's styles, as lines (no
// trailing newlines, no blank line at either end).
func Render(src string, width int, th *theme.Theme) []string {
	if width < 10 {
		width = 10
	}
	source := []byte(src)
	doc := mdparse.Parse(source)
	r := &renderer{src: source, th: th}
	lines := r.blocks(doc, width)
	return trimBlank(lines)
}

type renderer struct {
	src []byte
	th  *theme.Theme
}

// blocks renders the block children of n, a blank line between blocks
// (none between the items' blocks of a tight list).
func (r *renderer) blocks(n ast.Node, width int) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tightItem(c) {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// tightItem reports whether c sits in a tight list item, where blocks
// follow each other without a blank line.
func tightItem(c ast.Node) bool {
	if li, ok := c.Parent().(*ast.ListItem); ok {
		if l, ok := li.Parent().(*ast.List); ok {
			return l.IsTight
		}
	}
	return false
}

func (r *renderer) block(n ast.Node, width int) []string {
	th := r.th
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return wrap(r.inline(n, theme.Style{}), width)
	case *ast.Heading:
		st := th.Heading3
		switch n.Level {
		case 1:
			st = th.Heading1
		case 2:
			st = th.Heading2
		}
		prefix := ""
		if th.Plain {
			prefix = strings.Repeat("#", n.Level) + " "
		}
		return wrap(prefix+r.inline(n, st), width)
	case *ast.ThematicBreak:
		return []string{th.Faint.Render(strings.Repeat("─", min(width, 40)))}
	case *ast.FencedCodeBlock:
		lang := termtext.Line(string(n.Language(r.src)))
		return r.code(n, lang, width)
	case *ast.CodeBlock:
		return r.code(n, "", width)
	case *ast.Blockquote:
		bar := th.QuoteBar.Render("│ ")
		var out []string
		for _, l := range r.blocks(n, width-2) {
			if l == "" {
				out = append(out, th.QuoteBar.Render("│"))
				continue
			}
			out = append(out, bar+l)
		}
		return out
	case *ast.List:
		return r.list(n, width)
	case *ast.HTMLBlock:
		var out []string
		for _, l := range strings.Split(strings.TrimRight(termtext.Sanitize(mdparse.Raw(n, r.src)), "\n"), "\n") {
			out = append(out, hardwrap(th.Dim, expandTabs(l), width)...)
		}
		return out
	case *east.Table:
		return r.table(n, width)
	}
	// Anything else with block children (a definition list, say): its
	// blocks; with inline children, its text.
	if n.FirstChild() != nil {
		if n.FirstChild().Type() == ast.TypeInline {
			return wrap(r.inline(n, theme.Style{}), width)
		}
		return r.blocks(n, width)
	}
	return nil
}

// code renders a fenced or indented code block: the fence lines dimmed
// (so a copied block keeps them), the code as written, long lines
// wrapped rather than cut.
func (r *renderer) code(n ast.Node, lang string, width int) []string {
	th := r.th
	var out []string
	_, fenced := n.(*ast.FencedCodeBlock)
	if fenced {
		out = append(out, th.CodeFence.Render("```"+lang))
	}
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		l := strings.TrimRight(string(seg.Value(r.src)), "\n\r")
		l = expandTabs(termtext.Sanitize(l))
		if !fenced {
			l = "    " + l
		}
		out = append(out, hardwrap(th.CodeBlock, l, width)...)
	}
	if fenced {
		out = append(out, th.CodeFence.Render("```"))
	}
	return out
}

// list renders a list: bullets (or numbers) hanging, items' blocks
// indented under them.
func (r *renderer) list(l *ast.List, width int) []string {
	th := r.th
	depth := 0
	for p := l.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.List); ok {
			depth++
		}
	}
	bullets := []string{"•", "◦", "▪"}
	num := l.Start
	var out []string
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		marker := bullets[depth%len(bullets)]
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + string(l.Marker)
			num++
		}
		marker += " "
		indent := ansi.StringWidth(marker)
		body := r.blocks(it, width-indent)
		if len(body) == 0 {
			body = []string{""}
		}
		if len(out) > 0 && !l.IsTight {
			out = append(out, "")
		}
		for i, line := range body {
			if i == 0 {
				out = append(out, th.Accent.Render(marker)+line)
				continue
			}
			if line == "" {
				out = append(out, "")
				continue
			}
			out = append(out, strings.Repeat(" ", indent)+line)
		}
	}
	return out
}

// inline renders n's inline children as one styled string: soft line
// breaks become spaces, hard ones newlines. base styles all of it.
func (r *renderer) inline(n ast.Node, base theme.Style) string {
	var b strings.Builder
	r.inlines(&b, n, base)
	return b.String()
}

func (r *renderer) inlines(b *strings.Builder, n ast.Node, st theme.Style) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inlineNode(b, c, st)
	}
}

func (r *renderer) inlineNode(b *strings.Builder, n ast.Node, st theme.Style) {
	th := r.th
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(r.src)
		if !n.IsRaw() {
			v = unescape(v)
		}
		b.WriteString(st.Render(termtext.Line(string(v))))
		switch {
		case n.HardLineBreak():
			b.WriteString("\n")
		case n.SoftLineBreak():
			b.WriteString(" ")
		}
	case *ast.String:
		v := n.Value
		if !n.IsRaw() && !n.IsCode() {
			v = unescape(v)
		}
		b.WriteString(st.Render(termtext.Line(string(v))))
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
		s := termtext.Line(code.String())
		if th.Plain {
			s = "`" + s + "`"
		}
		b.WriteString(st.Add(th.Code).Render(s))
	case *ast.Emphasis:
		inner := th.Italic
		if n.Level >= 2 {
			inner = th.Bold
		}
		r.inlines(b, n, st.Add(inner))
	case *east.Strikethrough:
		r.inlines(b, n, st.Add(th.Strike))
	case *ast.Link:
		label := r.inline(n, st.Add(th.Link))
		b.WriteString(label)
		// The target is shown beside the text whenever they differ: a
		// link's text cannot pass for where it goes.
		url := termtext.Line(string(n.Destination))
		if url != "" && ansi.Strip(label) != url {
			b.WriteString(th.LinkURL.Render(" (" + url + ")"))
		}
	case *ast.AutoLink:
		b.WriteString(st.Add(th.Link).Render(termtext.Line(string(n.URL(r.src)))))
	case *ast.Image:
		alt := ansi.Strip(r.inline(n, st))
		b.WriteString(th.LinkURL.Render("[image: " + alt + "] (" + termtext.Line(string(n.Destination)) + ")"))
	case *ast.RawHTML:
		var raw strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			raw.Write(seg.Value(r.src))
		}
		b.WriteString(th.Dim.Render(termtext.Line(raw.String())))
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.WriteString(th.OK.Render("[x] "))
		} else {
			b.WriteString(th.Dim.Render("[ ] "))
		}
	default:
		r.inlines(b, n, st)
	}
}

// table renders a GFM table: columns as wide as their widest cell, shrunk
// (cells wrapped) when the table does not fit.
func (r *renderer) table(t *east.Table, width int) []string {
	th := r.th
	var rows [][]string
	header := -1
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		if _, ok := row.(*east.TableHeader); ok {
			header = len(rows)
		}
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			st := theme.Style{}
			if header == len(rows) {
				st = th.Bold
			}
			cells = append(cells, r.inline(c, st))
		}
		rows = append(rows, cells)
	}
	cols := 0
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return nil
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	sep := th.Border.Render(" │ ")
	avail := width - 3*(cols-1)
	fitColumns(widths, max(avail, cols*3))
	var out []string
	for ri, row := range rows {
		wrapped := make([][]string, cols)
		h := 1
		for i := range cols {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			wrapped[i] = wrap(c, widths[i])
			if len(wrapped[i]) == 0 {
				wrapped[i] = []string{""}
			}
			h = max(h, len(wrapped[i]))
		}
		for line := range h {
			var b strings.Builder
			for i := range cols {
				if i > 0 {
					b.WriteString(sep)
				}
				cell := ""
				if line < len(wrapped[i]) {
					cell = wrapped[i][line]
				}
				cell = align(cell, widths[i], alignment(t, i))
				if i == cols-1 {
					cell = strings.TrimRight(cell, " ")
				}
				b.WriteString(cell)
			}
			out = append(out, strings.TrimRight(b.String(), " "))
		}
		if ri == header {
			var b strings.Builder
			for i, w := range widths {
				if i > 0 {
					b.WriteString("─┼─")
				}
				b.WriteString(strings.Repeat("─", w))
			}
			out = append(out, th.Border.Render(b.String()))
		}
	}
	return out
}

func alignment(t *east.Table, i int) east.Alignment {
	if i < len(t.Alignments) {
		return t.Alignments[i]
	}
	return east.AlignNone
}

func align(s string, w int, a east.Alignment) string {
	pad := w - ansi.StringWidth(s)
	if pad <= 0 {
		return s
	}
	switch a {
	case east.AlignRight:
		return strings.Repeat(" ", pad) + s
	case east.AlignCenter:
		return strings.Repeat(" ", pad/2) + s + strings.Repeat(" ", pad-pad/2)
	}
	return s + strings.Repeat(" ", pad)
}

// fitColumns shrinks the widest columns until the widths sum to at most
// avail (each keeps at least 3 cells).
func fitColumns(widths []int, avail int) {
	for {
		sum, widest := 0, 0
		for i, w := range widths {
			sum += w
			if w > widths[widest] {
				widest = i
			}
		}
		if sum <= avail || widths[widest] <= 3 {
			return
		}
		widths[widest] -= max(1, min(sum-avail, widths[widest]/4))
		widths[widest] = max(widths[widest], 3)
	}
}

// wrap word-wraps a styled string to width, each line carrying its own
// styles, and splits it into lines.
func wrap(s string, width int) []string {
	if s == "" {
		return nil
	}
	if ansi.StringWidth(s) <= width && !strings.Contains(s, "\n") {
		return []string{s}
	}
	return Wrap(s, width)
}

// Wrap word-wraps a styled string to width and splits it into lines,
// each carrying its own styles: a style open where a line breaks is
// closed at its end and opened again at the next line's start, so each
// line can be drawn on its own.
func Wrap(s string, width int) []string {
	lines := strings.Split(ansi.Wrap(s, width, ""), "\n")
	open := ""
	for i, l := range lines {
		if open != "" {
			l = open + l
		}
		open = openStyle(l)
		if open != "" {
			l += "\x1b[m"
		}
		lines[i] = l
	}
	return lines
}

// openStyle returns the SGR sequences still in force at the end of l:
// those after its last reset.
func openStyle(l string) string {
	var open strings.Builder
	for i := 0; i < len(l); i++ {
		if l[i] != '\x1b' || i+1 >= len(l) || l[i+1] != '[' {
			continue
		}
		j := i + 2
		for j < len(l) && (l[j] < 0x40 || l[j] > 0x7e) {
			j++
		}
		if j >= len(l) {
			break
		}
		if l[j] == 'm' {
			if params := l[i+2 : j]; params == "" || params == "0" {
				open.Reset()
			} else {
				open.WriteString(l[i : j+1])
			}
		}
		i = j
	}
	return open.String()
}

// hardwrap cuts a line of code at width, styling each piece.
func hardwrap(st theme.Style, l string, width int) []string {
	if ansi.StringWidth(l) <= width {
		return []string{st.Render(l)}
	}
	var out []string
	for _, piece := range strings.Split(ansi.Hardwrap(l, width, true), "\n") {
		out = append(out, st.Render(piece))
	}
	return out
}

// expandTabs replaces tabs with spaces to the next multiple of 4, so
// widths are what the terminal shows.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// ExpandTabs is expandTabs, for the other renderers of the UI.
func ExpandTabs(s string) string { return expandTabs(s) }

func unescape(v []byte) []byte { return mdparse.Unescape(v) }

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
