package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Live bash output in the full-screen UI: `echo starting; sleep 60`
// shows "starting" under the running call, with its spinner and time,
// while it sleeps (before, only the spinner); Esc interrupts it, and the
// block and the log keep the output, marked interrupted.
func TestUIRunningBashShowsItsOutput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"))
	u.ready("echo/echo")
	u.typ(`tool:bash {"command":"echo starting; sleep 60"}`)
	u.keys("Enter")
	running := regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash echo starting; sleep 60 · [0-9.]+s\n\s*│ starting\n`)
	u.waitUntil(running.MatchString, "the running call shows its output")
	u.keys("Escape")
	s := u.wait("[interrupted by the user after")
	require.Contains(t, s, "✗ bash echo starting; sleep 60 · error")
	require.Contains(t, s, "│ starting")
	require.Equal(t, 0, u.quit())
	res := toolResults(t, h.sessionFiles()[0])
	require.Len(t, res, 1)
	require.True(t, strings.HasPrefix(res[0]["text"].(string), "starting\n[interrupted by the user after "), res[0]["text"])
	require.True(t, res[0]["is_error"].(bool))
}
