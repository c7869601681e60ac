package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// ext check renders recorded text as a real session does: an unknown
// variable refuses the edit, and that fails the check.
func TestExtCheckRendersStrictly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("", "ext", "check", filepath.Join(pluginDir, "varext"))
	require.Equal(t, 1, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, `system append by varext: "Team platform works in `+h.project+`."`,
		"its own variable rendered; the built-in cwd wins over its cwd")
	require.Contains(t, r.stdout, `system append by varext REFUSED: "broken {{nope}}": extension varext line 1: unknown variable nope`)
	require.NotContains(t, r.stdout, "the broken edit was accepted")
	require.NotContains(t, r.stdout, "ok: shut down cleanly")
	require.Contains(t, r.stderr, "panto: ext check: extension varext: system edit refused: extension varext line 1: unknown variable nope")
}

// ext check shows the tool guidance block a session would record.
func TestExtCheckShowsToolGuidance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.ok("ext", "check", filepath.Join(pluginDir, "tools"))
	require.Contains(t, r.stdout, "recording tool guidance (as a session does before session_start)\n"+
		`system append by tools: "# Tools from the tools extension\n\n## bash\n\n`)
	require.Contains(t, r.stdout, "ok: shut down cleanly")
}
