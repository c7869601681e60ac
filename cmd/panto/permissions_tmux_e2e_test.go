package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The permission dialog in the full-screen UI, in tmux, with the real
// tools extension: bash in default mode asks; "allow for this session"
// runs it and the same command again without asking; Shift+Tab switches
// the mode, shown in the status line; /permissions lists the grant; and
// a resume (print mode, where nobody could be asked) keeps it.
func TestUIPermissionDialogAndGrants(t *testing.T) {
	t.Parallel()
	h := permHarness(t)
	args := []string{"--provider", "echo", "--extension", filepath.Join(pluginDir, "tools")}
	u := h.tmuxPanto(110, 32, nil, args...)
	u.ready("echo/echo")
	call := `tool:bash {"command": "touch granted"}`
	u.typ(call)
	u.keys("Enter")
	s := u.wait("panto asks: Allow bash?")
	require.Contains(t, s, "bash: touch granted")
	require.Contains(t, s, "asked because bash is asked about (permission mode default)")
	require.Contains(t, s, "Allow for this session: bash(touch granted)")
	require.Contains(t, s, "Always allow: add bash(touch granted) to")
	require.NoFileExists(t, filepath.Join(h.project, "granted"), "nothing runs before the answer")
	// The user stops typing and reads it: keys count once typing paused.
	time.Sleep(1500 * time.Millisecond)
	u.keys("Down")
	time.Sleep(150 * time.Millisecond)
	u.keys("Enter")
	u.wait("✓ bash touch granted")
	require.FileExists(t, filepath.Join(h.project, "granted"))
	require.NoError(t, os.Remove(filepath.Join(h.project, "granted")))

	u.typ(call)
	u.keys("Enter")
	u.waitUntil(func(s string) bool { return strings.Count(s, "✓ bash touch granted") == 2 }, "the second call ran")
	require.NotContains(t, u.screen(), "panto asks: Allow bash?", "not asked again")

	u.keys("BTab")
	u.wait("⏵ accept-edits")
	u.typ("/permissions")
	u.keys("Enter")
	s = u.wait("allowed for this session:")
	require.Contains(t, s, "permission mode: accept-edits")
	require.Contains(t, s, "bash(touch granted)")
	require.Contains(t, s, "sandbox: workspace-write, network off")
	require.Equal(t, 0, u.quit())

	require.NoError(t, os.Remove(filepath.Join(h.project, "granted")))
	res, _ := runTools(t, h, call, "-c")
	require.NotContains(t, res["echo_1"], "not run", "the grant holds after the resume")
	require.FileExists(t, filepath.Join(h.project, "granted"))
}
