package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	dataExtsOnce sync.Once
	dataExtsErr  error
)

// dataExtensions builds the first-party env and context extensions into
// pluginDir (once) and returns their paths.
func dataExtensions(t *testing.T) (env, context string) {
	t.Helper()
	dataExtsOnce.Do(func() {
		out, err := exec.Command("go", "build", "-o", pluginDir+"/", "../../extensions/env", "../../extensions/context").CombinedOutput()
		if err != nil {
			dataExtsErr = err
			t.Logf("%s", out)
		}
	})
	require.NoError(t, dataExtsErr, "build env and context")
	return filepath.Join(pluginDir, "env"), filepath.Join(pluginDir, "context")
}

// Paths and instruction files are data: their "{{" (a cookiecutter folder,
// a Helm snippet in AGENTS.md) reaches the prompt as is, instead of making
// strict rendering refuse the block.
func TestDataWithBracesIsRecordedVerbatim(t *testing.T) {
	t.Parallel()
	env, context := dataExtensions(t)
	h := newHarness(t)
	dir := filepath.Join(h.project, "{{cookiecutter.slug}}")
	rules := "Set {{ .Values.name }} in values.yaml; {{cwd}} is not a panto variable here. \\{{ stays too."
	h.write(filepath.Join(dir, "AGENTS.md"), rules+"\n")

	run := func(args ...string) result {
		cmd := h.command("", args...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), "panto %v\nstderr: %s", args, errb.String())
		return result{out.String(), errb.String(), 0}
	}
	r := run("-p", "hi", "--provider", "echo", "--extension", env, "--extension", context)
	require.NotContains(t, r.stderr, "refused")

	prompt := run("prompt", "-c", "--extension", env, "--extension", context).stdout
	require.Contains(t, prompt, "Working directory: "+dir)
	require.Contains(t, prompt, "Instructions from "+filepath.Join(dir, "AGENTS.md")+":\n\n"+rules)

	// A resume with nothing changed records no new block: the extensions
	// compare with the prompt as recorded, braces and all.
	before := len(systemEntries(t, h.sessionFiles()[0]))
	r = run("-c", "-p", "again", "--provider", "echo", "--extension", env, "--extension", context)
	require.NotContains(t, r.stderr, "refused")
	require.Equal(t, before, len(systemEntries(t, h.sessionFiles()[0])), "no new system entries")
	require.Equal(t, 1, strings.Count(run("prompt", "-c", "--extension", env, "--extension", context).stdout, rules))
}
