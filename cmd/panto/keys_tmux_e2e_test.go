package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The keys and commands of issue 20 where the terminal matters, in
// tmux: panto "TEXT" sends it first; /copy reaches the terminal's
// clipboard as OSC 52 (tmux takes it with set-clipboard on, into a
// buffer); Ctrl-G hands the terminal to $EDITOR and gets the text back.
func TestUIFirstMessageCopyAndExternalEditor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := t.TempDir()
	seen := filepath.Join(bin, "seen")
	ed := filepath.Join(bin, "ed")
	require.NoError(t, os.WriteFile(ed, []byte("#!/bin/sh\ncp \"$1\" "+seen+"\nprintf 'from the editor\\n' > \"$1\"\n"), 0o755))
	u := h.tmuxPanto(100, 30, map[string]string{"EDITOR": ed}, "--provider", "echo", "hello first")
	u.tmux("set-option", "-g", "set-clipboard", "on")
	u.wait(`echo: you said "hello first"`)

	u.typ("/copy")
	u.keys("Enter")
	u.wait("copied the last reply")
	require.Contains(t, u.screen(), "(OSC 52)")
	// tmux makes the buffer as it reads the OSC 52 from the pane, which
	// can come after the notice is drawn on a loaded machine.
	var buf string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out, err := exec.Command("tmux", "-S", u.sock, "show-buffer").CombinedOutput()
		if buf = string(out); err == nil && strings.Contains(buf, "hello first") {
			break
		}
	}
	require.Contains(t, buf, `echo: you said "hello first"`, "the terminal got the reply as OSC 52")

	u.typ("draft")
	u.keys("C-g")
	u.wait("from the editor")
	data, err := os.ReadFile(seen)
	require.NoError(t, err)
	require.Equal(t, "draft", string(data))
	u.keys("Enter")
	u.wait(`echo: you said "from the editor"`)
	require.Equal(t, 0, u.quit())
	require.Equal(t, []string{"hello first", "from the editor"}, h.userMessages(t))
	require.False(t, strings.Contains(u.screen(), "unknown command"))
}
