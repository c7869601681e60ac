package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// After .panto/APPEND_SYSTEM.md changed, panto session tree labels the
// re-seed as the transcript does: the file that changed, not "built-in
// default changed".
func TestSessionTreeLabelsAReseedByWhatChanged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "Prefer small diffs.")
	h.ok("-p", "one", "--provider", "echo")
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "Prefer big diffs.")
	h.ok("-p", "two", "--provider", "echo", "-c")
	out := h.ok("session", "tree").stdout
	require.Contains(t, out, "⚙ prompt   re-seeded: .panto/APPEND_SYSTEM.md changed")
	require.NotContains(t, out, "built-in default changed")
}
