package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// echoBlocks are the system blocks an echo reply lists: "N. first line".
func echoBlocks(stdout string) []string {
	var out []string
	for _, line := range strings.Split(stdout, "\n") {
		if rest, ok := strings.CutPrefix(line, "  "); ok && len(rest) > 2 && rest[0] >= '1' && rest[0] <= '9' {
			if _, text, ok := strings.Cut(rest, ". "); ok {
				out = append(out, text)
			}
		}
	}
	return out
}

func count(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// Defect 1a: tool guidance goes with its extension. After a run with the
// tools and one with --no-extensions, the model is not told to use bash;
// when the tools come back, their guidance comes back once.
func TestGuidanceGoesWithItsExtension(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	g1 := filepath.Join(h.root, "g1.jsonl")
	tools := filepath.Join(pluginDir, "tools")
	r := h.ok("--session", g1, "--extension", tools, "-p", "one", "--provider", "echo")
	require.Equal(t, 1, count(echoBlocks(r.stdout), "# Tools from the tools extension"))
	r = h.ok("--session", g1, "--no-extensions", "-p", "two", "--provider", "echo")
	require.Zero(t, count(echoBlocks(r.stdout), "# Tools from the tools extension"), "no guidance for tools not offered")
	prompt := h.ok("prompt", "--session", g1, "--at", itoa(len(messagesIn(t, g1)))).stdout
	require.NotContains(t, prompt, "Use bash")
	require.Contains(t, h.ok("prompt", "--session", g1, "--at", "2").stdout, "Use bash",
		"the prompt as of the first run still has it: history is not rewritten")

	for range 2 {
		r = h.ok("--session", g1, "--extension", tools, "-p", "back", "--provider", "echo")
		require.Equal(t, 1, count(echoBlocks(r.stdout), "# Tools from the tools extension"), "back once, never twice")
	}
	var guidance int
	for _, e := range systemEntries(t, g1) {
		if strings.Contains(e, "# Tools from the tools extension") {
			guidance++
		}
	}
	require.Equal(t, 2, guidance, "recorded when first set and when back; not again while unchanged")
}

// Defect 1b: guidance that changes across resumes (v1, v2, v3) is one
// block, updated in place.
func TestChangedGuidanceIsUpdatedInPlace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	guide := filepath.Join(pluginDir, "guide")
	for _, v := range []string{"v1", "v2", "v3"} {
		h.env["PANTO_TEST_GUIDANCE"] = "Use note, " + v + "."
		args := []string{"-p", v, "--provider", "echo", "--extension", guide}
		if v != "v1" {
			args = append(args, "-c")
		}
		r := h.ok(args...)
		blocks := echoBlocks(r.stdout)
		require.Equal(t, 1, count(blocks, "# Tools from the guide extension"), v)
	}
	r := h.ok("prompt", "-c", "--extension", guide)
	require.Contains(t, r.stdout, "Use note, v3.")
	require.NotContains(t, r.stdout, "Use note, v1.")
	require.NotContains(t, r.stdout, "Use note, v2.")
	require.Contains(t, r.stdout, "· extension guide · section guide:guidance ---")
}

// Defect 1c: the env extension keeps one Environment block, updated in
// place when the branch changes, and records nothing when nothing did.
func TestEnvironmentIsOneSection(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	env, _ := dataExtensions(t)
	h := newHarness(t)
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = h.project
		cmd.Env = append(os.Environ(), "HOME="+h.home)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q", "-b", "main")
	h.ok("-p", "one", "--provider", "echo", "--extension", env)
	log := h.sessionFiles()[0]
	entries := len(systemEntries(t, log))
	h.ok("-p", "two", "--provider", "echo", "--extension", env, "-c")
	require.Equal(t, entries, len(systemEntries(t, log)), "nothing changed: nothing recorded")
	git("checkout", "-q", "-b", "feature")
	r := h.ok("-p", "three", "--provider", "echo", "--extension", env, "-c")
	require.Equal(t, 1, count(echoBlocks(r.stdout), "Environment:"), "one block, never two")
	prompt := h.ok("prompt", "-c", "--extension", env).stdout
	require.Contains(t, prompt, "Git repository: yes (branch feature)")
	require.NotContains(t, prompt, "branch main")
	require.Equal(t, entries+1, len(systemEntries(t, log)), "one entry: the section set in place")
}

// Defect 2: an extension's replace survives a resume with unchanged files.
func TestExtensionReplaceSurvivesResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sp := filepath.Join(pluginDir, "sysprompt")
	h.ok("-p", "/system-replace Answer only in French.", "--provider", "echo", "--extension", sp)
	fake := newFake(t, anthropicText("Oui."))
	h.env["ANTHROPIC_API_KEY"] = "k"
	h.ok("-c", "-p", "Bonjour ?", "--provider", "anthropic", "--base-url", fake.srv.URL)
	require.Equal(t, "Answer only in French.", wireSystem(t, "anthropic", fake.request(t, 0).body))
	// A changed file still re-seeds wholesale.
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "More.\n")
	r := h.ok("-c", "-p", "encore", "--provider", "echo")
	require.Equal(t, []string{"You are panto, a coding agent working in the user's project, in their...", "More."}, echoBlocks(r.stdout))
}

// Defect 3: every block of the prompt as of any point says where it came
// from; a section says its key.
func TestPromptSaysWhereEachBlockCameFrom(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	h.ok("-p", "one", "--provider", "echo", "--extension", filepath.Join(pluginDir, "guide"),
		"--append-system-prompt", "from the flag")
	h.ok("-c", "-p", "/system-append by hand", "--provider", "echo", "--extension", filepath.Join(pluginDir, "sysprompt"),
		"--append-system-prompt", "from the flag")
	log := h.sessionFiles()[0]
	r := h.ok("prompt", "--session", log, "--at", itoa(len(messagesIn(t, log))))
	for _, want := range []string{
		"--- block 1 · project " + filepath.Join(h.projectDir(), "SYSTEM.md") + " · entry ",
		" (message 1) ---\nproject seed",
		"--- block 2 · --append-system-prompt · entry ",
		" (message 2) ---\nfrom the flag",
		"--- block 3 · project " + filepath.Join(h.projectDir(), "APPEND_SYSTEM.md") + " · entry ",
		"--- block 4 · user " + filepath.Join(h.userDir(), "APPEND_SYSTEM.md") + " · entry ",
		"--- block 5 · base " + filepath.Join(h.baseDir(), "APPEND_SYSTEM.md") + " · entry ",
		"· extension sysprompt · entry ",
	} {
		require.Contains(t, r.stdout, want)
	}
	require.NotContains(t, r.stdout, "extension guide", "guide is not loaded in the last run: its guidance was removed")
	require.Contains(t, h.ok("prompt", "--session", log, "--at", "7").stdout, "· extension guide · section guide:guidance · entry ")
}

// An extension disabled mid-session (it crashed) has its sections
// removed by panto at once: the next request of the same turn does not
// describe its tools.
func TestDisabledExtensionsSectionsAreRemoved(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Restarted after the first crash, it is stopped after the second.
	out, stderr := h.lineLoop(strings.NewReader("tool:crash {}\ntool:crash {}\n"), "--provider", "echo", "--extension", filepath.Join(pluginDir, "guide"))
	require.Contains(t, out+stderr, "the guide extension stopped again")
	log := h.sessionFiles()[0]
	var removal map[string]any
	for _, e := range entriesOfType(t, log, "message") {
		m := e["message"].(map[string]any)
		if m["key"] == "guide:guidance" && m["content"].([]any)[0].(map[string]any)["text"] == "" {
			removal = m
		}
	}
	require.NotNil(t, removal, "the removal is recorded")
	require.Contains(t, removal["source"], "panto: removed because extension guide stopped")
	require.NotContains(t, h.ok("prompt", "--session", log, "--at", itoa(len(messagesIn(t, log)))).stdout, "Use note")
}

// An unchanged resume sends a byte-identical system prompt (the
// provider's prompt cache survives), with every first-party section
// loaded.
func TestUnchangedResumesSendTheSamePrompt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	env, context := dataExtensions(t)
	h.write(filepath.Join(h.project, "AGENTS.md"), "Run the tests.\n")
	fake := newFake(t, anthropicText("a"), anthropicText("b"), anthropicText("c"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	args := []string{"--provider", "anthropic", "--base-url", fake.srv.URL,
		"--extension", filepath.Join(pluginDir, "tools"), "--extension", env, "--extension", context}
	h.ok(append([]string{"-p", "one"}, args...)...)
	h.ok(append([]string{"-p", "two", "-c"}, args...)...)
	h.ok(append([]string{"-p", "three", "-c"}, args...)...)
	first := wireSystem(t, "anthropic", fake.request(t, 0).body)
	require.Contains(t, first, "Run the tests.")
	require.Equal(t, first, wireSystem(t, "anthropic", fake.request(t, 1).body))
	require.Equal(t, first, wireSystem(t, "anthropic", fake.request(t, 2).body))
}

// messagesIn returns the messages of a log's current branch.
func messagesIn(t *testing.T, path string) []map[string]any {
	t.Helper()
	return entriesOfType(t, path, "message")
}
