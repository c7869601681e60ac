package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An edit's result shows the whole lines it changed, as they were and
// are, numbered by its hunk header, with three lines of context: what
// the model and the UI read of the change.
func TestEditResultHasDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for _, l := range []string{"package main", "", "func f(n int) {", "\tx := 0", "\tfor i := 0; i <= n; i++ {",
		"\t\tx += i", "\t}", "\tprintln(x)", "}", "// end"} {
		b.WriteString(l + "\n")
	}
	writeFiles(t, dir, map[string]string{"f.go": b.String()})
	res := call(t, dir, "edit", `{"path":"f.go","edits":[{"old_text":"i <= n","new_text":"i < n"}]}`)
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "Edited "+filepath.Join(dir, "f.go")+": applied 1 edit (at line 5).\n\n"+
		"@@ -2,7 +2,7 @@\n \n func f(n int) {\n \tx := 0\n-\tfor i := 0; i <= n; i++ {\n+\tfor i := 0; i < n; i++ {\n \t\tx += i\n \t}\n \tprintln(x)",
		res.Content)
}

// Overwriting a file shows what changed; a new file has no diff (its
// content is the call's input).
func TestWriteResultHasDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\ntwo\nthree\n", "bin": "a\x00b"})
	res := call(t, dir, "write", `{"path":"a.txt","content":"one\n2\nthree\nfour\n"}`)
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "Overwrote "+filepath.Join(dir, "a.txt")+": wrote 17 bytes.\n\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four", res.Content)

	res = call(t, dir, "write", `{"path":"a.txt","content":"one\n2\nthree\nfour\n"}`)
	require.Contains(t, res.Content, "(The content is unchanged.)")

	res = call(t, dir, "write", `{"path":"a.txt","content":"one\n2\nthree\nfour"}`)
	require.Contains(t, res.Content, "(Only the newline at the end of the file changed.)")

	res = call(t, dir, "write", `{"path":"bin","content":"text\n"}`)
	require.Equal(t, "Overwrote "+filepath.Join(dir, "bin")+": wrote 5 bytes.", res.Content)

	res = call(t, dir, "write", `{"path":"b.txt","content":"new\n"}`)
	require.NotContains(t, res.Content, "@@")
}
