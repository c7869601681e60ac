package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A change of the system prompt just after a reply — an extension's
// edit, or prompt files changed between two runs — says how many cached
// tokens it invalidates and why; cache_warn_tokens = -1 silences it.
func TestAChangeThatBustsTheCacheIsTold(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.userDir(), "SYSTEM.md"), strings.Repeat("You review Go code with care. ", 100)+"\n")
	h.write(filepath.Join(h.userDir(), "config.toml"), "cache_warn_tokens = 500\n")
	log := filepath.Join(h.root, "s.jsonl")
	fake := newFake(t, anthropicText("one"), anthropicText("two"), anthropicText("three"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	args := []string{"--session", log, "--provider", "anthropic", "--base-url", fake.srv.URL,
		"--extension", filepath.Join(pluginDir, "sysprompt")}
	r := h.ok(append(args, "-p", "hello")...)
	require.NotContains(t, r.stderr, "cached tokens", "nothing was cached before the first request")

	r = h.ok(append(args, "-p", "/system-append Answer in French.")...)
	require.Contains(t, r.stderr, "the sysprompt extension added to the system prompt: that invalidates about")
	require.Contains(t, r.stderr, "cached tokens")

	h.ok(append(args, "-p", "bonjour")...)
	h.write(filepath.Join(h.userDir(), "SYSTEM.md"), strings.Repeat("You review Rust code with care. ", 100)+"\n")
	r = h.ok(append(args, "-p", "and now")...)
	require.Contains(t, r.stderr, "the prompt files changed, so panto re-seeded the system prompt: that invalidates about")

	h.write(filepath.Join(h.userDir(), "config.toml"), "cache_warn_tokens = -1\n")
	r = h.ok(append(args, "-p", "/system-append Answer in German.")...)
	require.NotContains(t, r.stderr, "cached tokens")
}
