package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tree makes a small project: Go files at several depths, a .git and a
// node_modules that must be skipped, a binary file and a symlinked dir.
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.go":                 "package main\n\nfunc main() {\n\tHello()\n}\n",
		"README.md":               "# Demo\nhello world\n",
		".hidden":                 "secret hello\n",
		"cmd/tool/tool.go":        "package tool\n\n// Hello greets.\nfunc Hello() {}\n",
		"cmd/tool/tool_test.go":   "package tool\n",
		"web/app.ts":              "const hello = 1;\n",
		"web/app.tsx":             "export const HELLO = 2;\n",
		".git/config":             "hello from git\n",
		"node_modules/x/index.js": "hello from node\n",
		"img.png":                 "\x89PNG\x00hello",
	})
	require.NoError(t, os.Symlink(filepath.Join(dir, "cmd"), filepath.Join(dir, "cmdlink")))
	return dir
}

func TestLs(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	for _, tc := range []struct {
		name, input, want string
		isErr             bool
	}{
		{"default is the project directory", `{}`,
			".git/\n.hidden\nREADME.md\ncmd/\ncmdlink/\nempty/\nimg.png\nmain.go\nnode_modules/\nweb/\n", false},
		{"subdirectory", `{"path":"cmd/tool"}`, "tool.go\ntool_test.go\n", false},
		{"limit", `{"limit":2}`, ".git/\n.hidden\n\n[10 entries: output cut at limit of 2 (2 shown); raise limit to see more]\n", false},
		{"empty", `{"path":"empty"}`, "(" + filepath.Join(dir, "empty") + " is empty)", false},
		{"a file", `{"path":"main.go"}`, "ls " + filepath.Join(dir, "main.go") + ": not a directory; read it with read", true},
		{"missing", `{"path":"nope"}`, "ls " + filepath.Join(dir, "nope") + ": no such file or directory", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, dir, "ls", tc.input)
			require.Equal(t, tc.isErr, res.IsError, res.Content)
			require.Equal(t, tc.want, res.Content)
		})
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	for _, tc := range []struct {
		name, input, want string
		isErr             bool
	}{
		{"name at any depth", `{"pattern":"*.go"}`, "cmd/tool/tool.go\ncmd/tool/tool_test.go\nmain.go\n", false},
		{"anchored", `{"pattern":"*/tool/*_test.go"}`, "cmd/tool/tool_test.go\n", false},
		{"double star", `{"pattern":"**/tool.go"}`, "cmd/tool/tool.go\n", false},
		{"double star at the end", `{"pattern":"cmd/**"}`, "cmd/\ncmd/tool/\ncmd/tool/tool.go\ncmd/tool/tool_test.go\n", false},
		{"braces", `{"pattern":"*.{ts,tsx}"}`, "web/app.ts\nweb/app.tsx\n", false},
		{"under a path", `{"pattern":"*.go","path":"cmd"}`, "cmd/tool/tool.go\ncmd/tool/tool_test.go\n", false},
		{"directories", `{"pattern":"tool"}`, "cmd/tool/\n", false},
		{"skips .git and node_modules", `{"pattern":"{config,index.js}"}`, "No paths match {config,index.js} under " + dir + ".", false},
		{"limit", `{"pattern":"*","limit":1}`, ".hidden\n\n[12 matches: output cut at limit of 1 (1 shown); narrow the pattern or path, or raise limit]\n", false},
		{"not a directory", `{"pattern":"*","path":"main.go"}`, "search " + filepath.Join(dir, "main.go") + ": not a directory", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, dir, "find", tc.input)
			require.Equal(t, tc.isErr, res.IsError, res.Content)
			require.Equal(t, tc.want, res.Content)
		})
	}
}

func TestGrep(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	for _, tc := range []struct {
		name, input, want string
		isErr             bool
	}{
		{"regexp", `{"pattern":"func \\w+\\("}`, "cmd/tool/tool.go:4: func Hello() {}\nmain.go:3: func main() {\n", false},
		{"case-sensitive by default", `{"pattern":"HELLO"}`, "web/app.tsx:1: export const HELLO = 2;\n", false},
		{"ignore case, skips binary, .git and node_modules", `{"pattern":"hello","ignore_case":true,"glob":"*.{md,ts,tsx}"}`,
			"README.md:2: hello world\nweb/app.ts:1: const hello = 1;\nweb/app.tsx:1: export const HELLO = 2;\n", false},
		{"hidden files are searched", `{"pattern":"secret"}`, ".hidden:1: secret hello\n", false},
		{"glob with a slash", `{"pattern":"package","glob":"cmd/**/*_test.go"}`, "cmd/tool/tool_test.go:1: package tool\n", false},
		{"under a path", `{"pattern":"package","path":"cmd/tool"}`, "cmd/tool/tool.go:1: package tool\ncmd/tool/tool_test.go:1: package tool\n", false},
		{"one file", `{"pattern":"Hello","path":"main.go"}`, "main.go:4: \tHello()\n", false},
		{"no match", `{"pattern":"zebra"}`, "No matches for zebra in " + dir + ".", false},
		{"limit", `{"pattern":"package","limit":1}`,
			"cmd/tool/tool.go:1: package tool\n\n[matches: output cut at limit of 1 (1 shown); narrow the pattern, path or glob, or raise limit]\n", false},
		{"missing path", `{"pattern":"a","path":"nope"}`, "search " + filepath.Join(dir, "nope") + ": no such file or directory", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, dir, "grep", tc.input)
			require.Equal(t, tc.isErr, res.IsError, res.Content)
			require.Equal(t, tc.want, res.Content)
		})
	}
}

func TestGrepLongLinesAndBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "match %d %s\n", i, strings.Repeat("x", 600))
	}
	writeFiles(t, dir, map[string]string{"big.txt": b.String()})
	res := call(t, dir, "grep", `{"pattern":"match","limit":5000}`)
	require.False(t, res.IsError)
	require.Contains(t, res.Content, "big.txt:1: match 0 xxx")
	require.Contains(t, res.Content, "… [line cut: 609 bytes]")
	require.Contains(t, res.Content, "output cut at 50 KB")
	require.LessOrEqual(t, len(res.Content), maxBytes+200)
}

func TestSearchCancelled(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range []string{"find", "grep"} {
		res := callCtx(t, ctx, dir, tool, `{"pattern":"x"}`)
		require.True(t, res.IsError)
		require.Contains(t, res.Content, "context canceled")
	}
}

func TestGlob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern string
		yes, no []string
	}{
		{"*.go", []string{"a.go", "x/y/a.go"}, []string{"a.got", "a.go/b"}},
		{"./a/*.go", []string{"a/b.go"}, []string{"b.go", "a/c/b.go"}},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"b", "a/x/c"}},
		{"**", []string{"a", "a/b"}, nil},
		{"{a,b/{c,d}}.txt", []string{"a.txt", "b/c.txt", "b/d.txt"}, []string{"b/e.txt", "c.txt"}},
		{"[ab]?.md", []string{"a1.md", "x/b2.md"}, []string{"c1.md"}},
	} {
		g, err := compileGlob(tc.pattern)
		require.NoError(t, err, tc.pattern)
		for _, p := range tc.yes {
			require.True(t, g.match(p), "%s should match %s", tc.pattern, p)
		}
		for _, p := range tc.no {
			require.False(t, g.match(p), "%s should not match %s", tc.pattern, p)
		}
	}
	for _, bad := range []string{"", "[a", "{a,b", "a}", "a\\"} {
		_, err := compileGlob(bad)
		require.Error(t, err, bad)
	}
}
