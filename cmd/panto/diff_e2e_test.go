package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// An edit through the real binary and the tools extension: the result
// the model reads carries the file's changed line, numbered, with its
// context, and the Markdown export shows it as a numbered diff.
func TestEditResultDiffEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.project, "count.go"), "package count\n\nfunc Count(n int) int {\n\tc := 0\n\tfor i := 0; i <= n; i++ {\n\t\tc++\n\t}\n\treturn c\n}\n")
	r := h.ok("-p", `tool:edit {"path": "count.go", "edits": [{"old_text": "i <= n", "new_text": "i < n"}]}`,
		"--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"))
	require.Contains(t, r.stdout, "edit (ok", r.stdout)
	data, err := os.ReadFile(filepath.Join(h.project, "count.go"))
	require.NoError(t, err)
	require.Contains(t, string(data), "i < n")

	out := filepath.Join(t.TempDir(), "s.md")
	h.ok("session", "export", "--format", "md", "-o", out)
	md, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Contains(t, string(md), "```diff\n  2  \n  3  func Count(n int) int {\n  4  \tc := 0\n- 5  \tfor i := 0; i <= n; i++ {\n+ 5  \tfor i := 0; i < n; i++ {\n  6  \t\tc++\n  7  \t}\n  8  \treturn c\n```")
}
