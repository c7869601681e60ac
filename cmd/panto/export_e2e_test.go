package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// The readable export through the real binary, the tools extension and
// the echo provider: the HTML has the sidebar, the reply rendered from
// its Markdown, the edit's result folded as a numbered diff and the tool
// guidance in the prompt states; Markdown leaves the guidance out unless
// --prompt is given.
func TestExportReadableEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tools := filepath.Join(pluginDir, "tools")
	h.write(filepath.Join(h.project, "count.go"), "package count\n\nfunc Count(n int) int {\n\tc := 0\n\tfor i := 0; i <= n; i++ {\n\t\tc++\n\t}\n\treturn c\n}\n")
	h.ok("-p", `tool:edit {"path": "count.go", "edits": [{"old_text": "i <= n", "new_text": "i < n"}]}`, "--provider", "echo", "--extension", tools)
	h.ok("-c", "-p", "Fixed **one short**: `i < n` <script>alert(1)</script>", "--provider", "echo", "--extension", tools)

	out := filepath.Join(t.TempDir(), "s.html")
	h.ok("session", "export", "--format", "html", "-o", out)
	doc, err := html.Parse(bytes.NewReader(mustRead(t, out)))
	require.NoError(t, err)
	var sides, diffs, strongs, scripts, guidance int
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			class := ""
			for _, a := range n.Attr {
				if a.Key == "class" {
					class = a.Val
				}
				if a.Key == "href" {
					require.True(t, strings.HasPrefix(a.Val, "#"), "a link out of the page: %s", a.Val)
				}
			}
			switch {
			case n.Data == "aside" && class == "side":
				sides++
			case n.Data == "pre" && class == "diff" && strings.Contains(nodeText(n), "+ \tfor i := 0; i < n; i++ {"):
				diffs++
			case n.Data == "strong" && nodeText(n) == "one short" && n.Parent.Parent != nil && attrOf(n.Parent.Parent, "class") == "md":
				strongs++
			case n.Data == "script":
				scripts++
			case n.Data == "section" && class == "prompt" && strings.Contains(nodeText(n), "# Tools from the tools extension"):
				guidance++
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	require.Equal(t, 1, sides, "the sidebar")
	require.Equal(t, 1, diffs, "the edit's diff")
	require.Positive(t, strongs, "the reply's Markdown, rendered")
	require.Zero(t, scripts)
	require.Positive(t, guidance, "HTML keeps the tool guidance")

	md := h.ok("session", "export", "--format", "md").stdout
	// (The echo reply quotes the guidance's first line: its sections are
	// what only the guidance holds.)
	require.NotContains(t, md, "\n## edit\n")
	require.Contains(t, md, "(`--prompt` includes it)")
	whole := h.ok("session", "export", "--format", "md", "--prompt").stdout
	require.Contains(t, whole, "\n## edit\n")
	require.NotContains(t, whole, "`--prompt` includes it")
	_, err = os.Stat(out)
	require.NoError(t, err)
}

func nodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
