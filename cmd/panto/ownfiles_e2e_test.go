package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// toolEnds runs panto with the echo provider in --mode json on prompt
// (its tool:NAME lines are the calls, run at once) and returns each
// call's result and whether it was an error, in call order.
func toolEnds(t *testing.T, h *harness, prompt string, args ...string) (results []string, errs []bool) {
	t.Helper()
	r := h.run("", append([]string{"-p", prompt, "--provider", "echo", "--mode", "json"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	byID := map[string]int{}
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Result  string `json:"result"`
			IsError bool   `json:"is_error"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		switch ev.Type {
		case "tool_start":
			byID[ev.ID] = len(results)
			results, errs = append(results, ""), append(errs, false)
		case "tool_end":
			i, ok := byID[ev.ID]
			require.True(t, ok, "tool_end %s before its start", ev.ID)
			results[i], errs[i] = ev.Result, ev.IsError
		}
	}
	return results, errs
}

// toolLine is one tool:NAME line of an echo prompt.
func toolLine(t *testing.T, name string, input any) string {
	raw, err := json.Marshal(input)
	require.NoError(t, err)
	return "tool:" + name + " " + string(raw)
}

// Issue 15 (adversary H4, M4): the model's write and edit cannot change
// panto's own configuration and data — the user layer, the base layer,
// the sessions, the state folder — whichever way the path is spelled
// (through a symlink in the project, through ..); the result says why;
// and guard asks before a bash command that names them (print mode has
// nobody to ask: it blocks). Before, one write put
// extension_api_keys = ["tools"] in the user's config.toml, and the
// next session gave bash the key.
func TestTheModelCannotWritePantosOwnConfiguration(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := filepath.Join(h.userDir(), "config.toml")
	h.write(cfg, "max_steps = 50\n")
	require.NoError(t, os.MkdirAll(filepath.Join(h.userDir(), "extensions"), 0o755))
	keysCopy(t, filepath.Join(pluginDir, "guard"), filepath.Join(h.userDir(), "extensions", "guard"))
	if err := os.Symlink(h.userDir(), filepath.Join(h.project, "conf")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	evil := "extension_api_keys = [\"tools\"]\ndisabled_extensions = [\"guard\"]\n"
	rel, err := filepath.Rel(h.project, filepath.Join(h.home, "state", "panto", "guards.json"))
	require.NoError(t, err)
	calls := []string{
		toolLine(t, "write", map[string]string{"path": cfg, "content": evil}),
		toolLine(t, "write", map[string]string{"path": "conf/config.toml", "content": evil}),
		toolLine(t, "edit", map[string]any{"path": cfg, "edits": []map[string]string{{"old_text": "max_steps = 50", "new_text": evil}}}),
		toolLine(t, "write", map[string]string{"path": filepath.Join(h.baseDir(), "extensions", "evil"), "content": "#!/bin/sh\n"}),
		toolLine(t, "write", map[string]string{"path": rel, "content": "{}"}),
		toolLine(t, "write", map[string]string{"path": filepath.Join(h.home, "data", "panto", "sessions", "x.jsonl"), "content": "{}\n"}),
		toolLine(t, "bash", map[string]string{"command": "echo 'extension_api_keys = [\"tools\"]' >> " + cfg}),
		toolLine(t, "write", map[string]string{"path": "notes.md", "content": "mine\n"}),
	}
	results, errs := toolEnds(t, h, strings.Join(calls, "\n"), "--extension", filepath.Join(pluginDir, "tools"))
	require.Len(t, results, len(calls))
	for i, res := range results[:6] {
		require.True(t, errs[i], res)
		require.Contains(t, res, "refused: it is in ", res)
		require.Contains(t, res, "panto's own configuration: the model does not write it; edit it yourself", res)
	}
	require.True(t, errs[6], results[6])
	require.Contains(t, results[6], "blocked by the guard extension", "guard asks before bash names them (a convenience, not a boundary)")
	require.False(t, errs[7], "the rest is the model's to write: %s", results[7])

	data, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.Equal(t, "max_steps = 50\n", string(data))
	require.NoFileExists(t, filepath.Join(h.baseDir(), "extensions", "evil"))
	require.NoFileExists(t, filepath.Join(h.home, "state", "panto", "guards.json.tmp"))
}

// contextBin is the context extension, built once (TestMain does not
// build it).
var contextBin = sync.OnceValues(func() (string, error) {
	out := filepath.Join(pluginDir, "context")
	cmd := exec.Command("go", "build", "-o", out, "../../extensions/context")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the context extension: %w: %s", err, msg)
	}
	return out, nil
})

// Issue 15 (adversary M1): a cloned repository's AGENTS.md that is a
// symlink out of the project (to ~/.aws/credentials, say) is skipped,
// with a notice naming it and its target; nothing of it reaches the
// provider or the session log. A link within the project is read.
// Before, the secret was in the first request and the log, with no
// tool call.
func TestInstructionFilesLeadingOutOfTheProjectAreSkipped(t *testing.T) {
	t.Parallel()
	bin, err := contextBin()
	require.NoError(t, err)
	h := newHarness(t)
	secret := filepath.Join(h.home, ".aws", "credentials")
	h.write(secret, "aws_secret_access_key=QZX-AWS-SECRET\n")
	h.write(filepath.Join(h.project, ".git", "HEAD"), "ref: refs/heads/main\n")
	h.write(filepath.Join(h.project, "docs", "agents.md"), "QZX-IN-REPO rules\n")
	if err := os.Symlink("../home/.aws/credentials", filepath.Join(h.project, "AGENTS.md")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	require.NoError(t, os.Symlink("docs/agents.md", filepath.Join(h.project, "CLAUDE.md")))
	r := h.run("", "-p", "hi", "--provider", "echo", "--extension", bin)
	require.Equal(t, 0, r.code, r.stderr)
	realSecret, err := filepath.EvalSymlinks(secret)
	require.NoError(t, err)
	realProject, err := filepath.EvalSymlinks(h.project)
	require.NoError(t, err)
	require.Contains(t, r.stderr, "panto: context: warning: skipped "+filepath.Join(h.project, "AGENTS.md")+": it leads to "+realSecret+", outside the project "+realProject)
	require.NotContains(t, r.stdout+r.stderr, "QZX-AWS-SECRET")
	files := h.sessionFiles()
	require.Len(t, files, 1)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	require.NotContains(t, string(data), "QZX-AWS-SECRET", "the secret is in the session log")
	require.Contains(t, string(data), "QZX-IN-REPO rules", "a link within the project is read")
}
