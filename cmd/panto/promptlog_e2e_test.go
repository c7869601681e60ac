package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// panto prompt log and panto prompt diff on a branched session: the
// log of testdata/promptlog.jsonl has three branches from a6 — the
// current one (a tools section updated in place, to a9, where a move
// went back), a persona's replace under OpenAI (b…), and a removal of
// the section (c…) — and Anthropic requests before them.
func TestPromptLogAndDiffOnABranchedSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	log, err := filepath.Abs("testdata/promptlog.jsonl")
	require.NoError(t, err)

	// The current branch: ids, times, modes and keys, +/- lines, the
	// cache estimate (Anthropic), who.
	out := h.ok("prompt", "log", "--session", log).stdout
	require.Equal(t, `ENTRY     TIME                 MSG  MODE/KEY                LINES  CACHE (EST.)  WHO
a1000000  2026-02-01 10:00:01  1    append                  +1 −0  ~0            built-in default
a4000000  2026-02-01 10:00:04  2    section tools:guidance  +4 −0  ~0            extension tools
a7000000  2026-02-01 10:00:07  5    section tools:guidance  +1 −1  ~16           extension tools
CACHE: estimated tokens of Anthropic's prompt cache the change invalidated (what the last request before it cached: its tools, system prompt and messages); - for another provider
`, out)

	// Every branch: each change once, in the tree's order, * on the
	// current path; the OpenAI branch has no estimate.
	out = h.ok("prompt", "log", "--session", log, "--all").stdout
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 7, out)
	require.Equal(t, "* a7000000  2026-02-01 10:00:07  5    section tools:guidance            +1 −1  ~16           extension tools", lines[3])
	require.Equal(t, "  b2000000  2026-02-01 10:01:01  5    replace                           +1 −5  -             extension persona", lines[4])
	require.Equal(t, "  c1000000  2026-02-01 10:02:00  5    section tools:guidance (removed)  +0 −4  ~16           panto: removed because extension tools is not loaded", lines[5])

	// --json: one object a line.
	out = h.ok("prompt", "log", "--session", log, "--all", "--json").stdout
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		got = append(got, m)
	}
	require.Len(t, got, 5)
	require.Equal(t, map[string]any{"entry": "a700000000000000", "parent": "a600000000000000", "time": "2026-02-01T10:00:07Z",
		"message": 5.0, "source": "extension tools", "who": "tools", "mode": "append", "key": "tools:guidance", "blocks": 1.0,
		"change": "tools updated its guidance section", "added": 1.0, "removed": 1.0, "on_path": true,
		"provider": "anthropic", "invalidated_tokens": 16.0}, got[2])
	require.Equal(t, "openai", got[3]["provider"])
	require.NotContains(t, got[3], "invalidated_tokens")
	require.Equal(t, true, got[4]["removal"])
	require.Equal(t, false, got[4]["on_path"])

	// The diff between two message counts of the current branch…
	out = h.ok("prompt", "diff", "--session", log, "4", "5").stdout
	require.Equal(t, `--- the prompt at 4 messages (entry a600000000000000)
+++ the prompt at 5 messages (entry a700000000000000)
@@ -2,4 +2,4 @@
 
 ---
 
-Tools: read.
+Tools: read, bash.
`, out)
	// …between entries of two branches (unique prefixes)…
	out = h.ok("prompt", "diff", "--session", log, "a7", "b2").stdout
	require.Equal(t, `--- the prompt at entry a700000000000000 (message 5)
+++ the prompt at entry b200000000000000 (message 5)
@@ -1,5 +1 @@
-You are panto.
-
----
-
-Tools: read, bash.
+You are a pirate.
`, out)
	// …and from an entry to the current leaf; the same prompt is no diff.
	out = h.ok("prompt", "diff", "--session", log, "c1").stdout
	require.Contains(t, out, "+++ the prompt at the current leaf, entry d100000000000000 (message 7)\n@@ -1 +1,5 @@\n You are panto.\n+\n+---\n+\n+Tools: read, bash.\n")
	r := h.ok("prompt", "diff", "--session", log, "a7")
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "the system prompt is the same at entry a700000000000000 (message 5) and at the current leaf")

	// What is not there is named, and where.
	r = h.run("", "prompt", "diff", "--session", log, "zz", "3")
	require.Equal(t, 1, r.code)
	require.Equal(t, `panto: prompt diff: point A zz: session log `+log+`: no entry "zz" (and no entry id starts with it)`+"\n", r.stderr)
	r = h.run("", "prompt", "diff", "--session", log, "3", "99")
	require.Equal(t, 1, r.code)
	require.Equal(t, "panto: prompt diff: point B 99: session log "+log+": no message 99: the current branch has 7 messages\n", r.stderr)
	r = h.run("", "prompt", "diff", "--session", log)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "want A and B")
}

// On a log that real runs wrote (Anthropic, the sysprompt extension's
// append, a branch taken before it with --from): without a session flag
// the directory's latest session is read; the extension's change has a
// cache estimate, the seed none; the diff shows the appended block.
func TestPromptLogOfRealRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "SYSTEM.md"), "Be brief.")
	fake := newFake(t, anthropicText("a1"), anthropicText("a2"), anthropicText("a3"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	args := func(more ...string) []string {
		return append([]string{"--provider", "anthropic", "--base-url", fake.srv.URL, "--extension", filepath.Join(pluginDir, "sysprompt")}, more...)
	}
	h.ok(args("-p", "u1")...)
	h.ok(args("-c", "-p", "/system-append Answer in French.")...)
	h.ok(args("-c", "-p", "u2")...)
	ids := entryIDs(t, h.sessionFiles()[0])
	h.ok(args("-c", "--from", ids["a1"], "-p", "u3")...) // a branch from before the append

	out := h.ok("prompt", "log", "--json", "--all").stdout
	var changes []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		changes = append(changes, m)
	}
	var appended map[string]any
	for _, c := range changes {
		require.Equal(t, "anthropic", c["provider"], c)
		if c["source"] == "extension sysprompt" {
			appended = c
		}
	}
	require.NotNil(t, appended, out)
	require.Equal(t, false, appended["on_path"], "the current branch was taken before it")
	require.Equal(t, "append", appended["mode"])
	require.Greater(t, appended["invalidated_tokens"].(float64), 0.0, "u1 and a1 were sent before it")
	require.Equal(t, 0.0, changes[0]["invalidated_tokens"], "nothing was sent before the seed")
	require.Equal(t, true, changes[0]["on_path"])

	// The current branch does not have it; the diff from it to the
	// current leaf takes it away.
	require.NotContains(t, h.ok("prompt", "log").stdout, "extension sysprompt")
	out = h.ok("prompt", "diff", appended["entry"].(string)).stdout
	require.Contains(t, out, "\n-Answer in French.\n", out)
	require.NotContains(t, out, "+Answer in French.")
}
