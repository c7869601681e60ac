package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk/sdktest"
)

// sdktest applies panto's rules: the same commands, run through the
// harness and through the real panto binary, record the same prompt —
// variables rendered the same, the same edit refused.
func TestHarnessAgreesWithPanto(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds panto")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", "../../../cmd/panto", ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	project := filepath.Join(dir, "project")
	require.NoError(t, os.MkdirAll(project, 0o755))
	env := []string{"HOME=" + filepath.Join(dir, "home"), "PATH=" + os.Getenv("PATH"), "PANTO_LOG_LEVEL=off"}
	panto := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(dir, "panto"), args...)
		cmd.Dir, cmd.Env = project, env
		out, err := cmd.Output()
		return string(out), err
	}
	commands := []string{
		"/system-append Work in {{cwd}} on {{os}}.",
		"/system-append Unknown {{project_name}} is refused.",
		"/system-append Escaped \\{{cwd}} stays.",
	}
	h := sdktest.New(t, &ext{}).WithSystem("Seed.").WithVariables(map[string]string{"cwd": project})
	for i, c := range commands {
		name, args, _ := strings.Cut(strings.TrimPrefix(c, "/"), " ")
		_, herr := h.Command(name, args)
		flags := []string{"-p", c, "--provider", "echo", "--system-prompt", "Seed.", "--extension", filepath.Join(dir, "sysprompt")}
		if i > 0 {
			flags = append(flags, "-c")
		}
		_, perr := panto(flags...)
		require.Equal(t, herr != nil, perr != nil, "%s: harness %v, panto %v", c, herr, perr)
	}
	out, err := panto("prompt", "-c", "--json", "--system-prompt", "Seed.", "--extension", filepath.Join(dir, "sysprompt"))
	require.NoError(t, err)
	var got struct{ Blocks []struct{ Text string } }
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	var texts []string
	for _, b := range got.Blocks {
		texts = append(texts, b.Text)
	}
	require.Equal(t, h.Prompt(), texts)
	require.Equal(t, []string{"Seed.", "Work in " + project + " on " + runtime.GOOS + ".", "Escaped {{cwd}} stays."}, texts)
}
