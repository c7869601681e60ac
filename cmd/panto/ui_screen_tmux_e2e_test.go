package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// history is the pane's scrollback and screen, as a terminal keeps them.
func (u *tmuxUI) history() string { return u.tmux("capture-pane", "-p", "-S", "-", "-t", "p") }

// Issue 20 item 3: on the normal screen the conversation is in the
// terminal's scrollback — while panto runs and after it exits — followed
// by one line with the session id and how to resume it; the shell's
// prompt comes back under it, no frame left behind.
func TestUIScrollbackAfterExit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := h.tmuxPanto(80, 12, nil, "--provider", "echo")
	u.ready("echo/echo")
	for _, msg := range []string{"first message", "second message", "third message"} {
		u.typ(msg)
		u.keys("Enter")
		u.wait(`you said "` + msg + `"`)
	}
	require.Contains(t, u.history(), `you said "first message"`, "scrolled out of the screen, into the scrollback")
	require.Equal(t, 0, u.quit())
	out := u.history()
	for _, want := range []string{"▌ first message", `you said "first message"`, `you said "third message"`} {
		require.Contains(t, out, want)
	}
	files := h.sessionFiles()
	require.Len(t, files, 1)
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	id = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f-]{27}`).FindString(id)
	require.Contains(t, out, "resume with panto -c or panto --resume "+id+"\n", "on one line")
	tail := out[strings.LastIndex(out, "resume with panto -c"):]
	require.NotContains(t, tail, "❯", "the editor is not left behind")
	require.NotContains(t, tail, "echo/echo", "nor the status line")
}

// Queue, steer and Esc in a real terminal: Alt+Enter while a tool runs
// steers (the model reads it in the same turn); Enter queues, Esc stops
// the turn and puts the queued message back into the editor unsent.
func TestUIQueueSteerAndEsc(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"))
	u.ready("echo/echo")
	u.typ(`tool:bash {"command":"sleep 2; echo slept"}`)
	u.keys("Enter")
	u.wait("bash sleep 2")
	u.typ("steer this in")
	u.keys("M-Enter")
	u.wait("↳ steering: steer this in")
	u.wait("steered into the turn")
	u.wait(`you said "steer this in"`)
	u.waitUntil(func(s string) bool { return !strings.Contains(s, "Esc interrupts") }, "the turn ends")
	require.Equal(t, []string{`tool:bash {"command":"sleep 2; echo slept"}`, "steer this in"}, h.userMessages(t),
		"the steered message is recorded in the turn, after the tool's result")

	u.typ(`tool:bash {"command":"sleep 30"}`)
	u.keys("Enter")
	u.wait("bash sleep 30")
	u.typ("queued hello")
	u.keys("Enter")
	u.wait("⏵ queued: queued hello")
	u.keys("Escape")
	u.wait("put back into the editor")
	s := u.wait("❯ queued hello")
	require.NotContains(t, s, "⏵ queued")
	require.Len(t, h.userMessages(t), 3, "the queued message was not sent")
	u.keys("C-u")
	require.Equal(t, 0, u.quit())
}
