package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// ignoredTree is a work tree whose .gitignore files leave out build
// outputs: bin/ at the root, *.log but keep.log, a nested .gitignore.
func ignoredTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".git/HEAD":                 "ref: refs/heads/main\n",
		".git/info/exclude":         "local.txt\n",
		".gitignore":                "bin/\n*.log\n!keep.log\n",
		"main.go":                   "package main // needle\n",
		"bin/panto-ext-tools":       "needle in a build output\n",
		"extensions/tools/main.go":  "package main // needle\n",
		"extensions/tools/out.log":  "needle in a log\n",
		"extensions/tools/keep.log": "needle kept\n",
		"web/.gitignore":            "dist/\n",
		"web/dist/app.js":           "needle bundled\n",
		"web/app.js":                "needle\n",
		"local.txt":                 "needle local\n",
	})
	return dir
}

// find leaves out what .gitignore and .git/info/exclude ignore (nested
// files included, negation honoured), and .git; include_ignored or a path
// inside an ignored directory finds them.
func TestFindHonoursGitignore(t *testing.T) {
	t.Parallel()
	dir := ignoredTree(t)
	res := call(t, dir, "find", `{"pattern":"*"}`)
	require.False(t, res.IsError, res.Content)
	require.Equal(t, ".gitignore\nextensions/\nextensions/tools/\nextensions/tools/keep.log\nextensions/tools/main.go\nmain.go\nweb/\nweb/.gitignore\nweb/app.js\n", res.Content)

	res = call(t, dir, "find", `{"pattern":"*","include_ignored":true}`)
	for _, p := range []string{"bin/panto-ext-tools", "extensions/tools/out.log", "web/dist/app.js", "local.txt"} {
		require.Contains(t, res.Content, p+"\n")
	}
	require.NotContains(t, res.Content, ".git/")

	res = call(t, dir, "find", `{"pattern":"*","path":"bin"}`)
	require.Equal(t, "bin/panto-ext-tools\n", res.Content)

	res = call(t, dir, "find", `{"pattern":"*.log","path":"extensions"}`)
	require.Equal(t, "extensions/tools/keep.log\n", res.Content)

	res = call(t, dir, "find", `{"pattern":"panto-ext-*"}`)
	require.Equal(t, "No paths match panto-ext-* under "+dir+" (paths that .gitignore ignores were skipped; include_ignored: true searches them too).", res.Content)
}

// grep searches the same files find lists; an ignored file given as
// path is searched.
func TestGrepHonoursGitignore(t *testing.T) {
	t.Parallel()
	dir := ignoredTree(t)
	res := call(t, dir, "grep", `{"pattern":"needle"}`)
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "extensions/tools/keep.log:1: needle kept\nextensions/tools/main.go:1: package main // needle\nmain.go:1: package main // needle\nweb/app.js:1: needle\n", res.Content)

	res = call(t, dir, "grep", `{"pattern":"needle","include_ignored":true}`)
	require.Contains(t, res.Content, "bin/panto-ext-tools:1: needle in a build output\n")
	require.Contains(t, res.Content, "web/dist/app.js:1: needle bundled\n")

	res = call(t, dir, "grep", `{"pattern":"needle","path":"web/dist"}`)
	require.Equal(t, "web/dist/app.js:1: needle bundled\n", res.Content)
	res = call(t, dir, "grep", `{"pattern":"needle","path":"extensions/tools/out.log"}`)
	require.Equal(t, "extensions/tools/out.log:1: needle in a log\n", res.Content)

	res = call(t, dir, "grep", `{"pattern":"bundled"}`)
	require.Contains(t, res.Content, "No matches for bundled in "+dir+" (")
	require.Contains(t, res.Content, "include_ignored: true searches them too).")
}
