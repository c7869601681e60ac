// Package mdparse parses Markdown the one way panto reads it: goldmark's
// CommonMark with GitHub's tables, strikethrough, task lists and
// autolinks. The terminal renderer (tui/markdown) and the HTML export's
// renderer (mdhtml) both walk the tree Parse returns, so a reply reads as
// the same document in the UI and in an export.
//
// What does not belong here: any output — styling, escaping, wrapping is
// each renderer's own.
package mdparse

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// md is the parser; goldmark's parser is safe for concurrent use.
var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough,
	extension.TaskList, extension.Linkify))

// Parse parses src into a document. Node values point into src, which the
// caller keeps to read them (ast.Node.Lines, ast.Text.Value).
func Parse(src []byte) ast.Node {
	return md.Parser().Parse(text.NewReader(src), parser.WithContext(parser.NewContext()))
}

// Unescape resolves a text's backslash escapes, numeric character
// references and entity names: the text a reader sees, before a renderer
// escapes it for its own output.
func Unescape(v []byte) []byte {
	v = util.UnescapePunctuations(v)
	v = util.ResolveNumericReferences(v)
	return util.ResolveEntityNames(v)
}

// Raw is the text of a block's lines as written in src (a code block's
// code, an HTML block's markup with its closing line), for a renderer
// to show as text.
func Raw(n ast.Node, src []byte) string {
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		b.Write(h.ClosureLine.Value(src))
	}
	return b.String()
}
