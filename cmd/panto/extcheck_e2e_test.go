package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	require.Contains(t, r.stdout, `section tools:guidance set (its tool guidance, as a session records it before session_start) by tools: "# Tools from the tools extension\n\n## bash\n\n`)
	require.Contains(t, r.stdout, "ok: shut down cleanly")
}

// An extension declaring a tool the providers refuse does not start; the
// turn goes on with the other extensions' tools (it used to fail every
// request: "encode request: tool 0: name \"bad name\" must be ...").
func TestInvalidToolDoesNotBreakTheTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bad := filepath.Join(h.root, "badtool-name") // sdkplug's behaviour by name
	require.NoError(t, os.Symlink(filepath.Join(pluginDir, "sdkplug"), bad))
	fake := newFake(t, anthropicText("Hi there."))
	h.env["ANTHROPIC_API_KEY"] = "sk-ant-test"
	r := h.ok("-p", "hello", "--provider", "anthropic", "--model", "claude-test", "--base-url", fake.srv.URL,
		"--extension", bad, "--extension", filepath.Join(pluginDir, "tools"))
	require.Equal(t, "Hi there.\n", r.stdout)
	require.Equal(t, 1, strings.Count(r.stderr, `extension badtool-name: tool "bad name": the name must be 1 to 64 letters, digits, _ or -`), r.stderr)

	var body struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(fake.request(t, 0).body, &body))
	var names []string
	for _, tool := range body.Tools {
		names = append(names, tool.Name)
	}
	require.Contains(t, names, "read")
	require.NotContains(t, names, "fine", "nothing of the failed extension is offered")

	r = h.run("", "ext", "check", bad)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `tool "bad name": the name must be 1 to 64 letters, digits, _ or -`)
}
