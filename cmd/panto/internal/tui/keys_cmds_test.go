package tui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// fakeEnv is an environment for Options.Getenv.
func fakeEnv(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// writeScript writes an executable shell script named name into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

// /copy puts the last reply on the clipboard by OSC 52 and by the
// display's clipboard tool; /copy N the Nth-last block.
func TestCopy(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	got := filepath.Join(bin, "got")
	writeScript(t, bin, "wl-copy", "cat > "+got)
	f := newFake()
	f.msgs = []conversation.Message{
		conversation.UserText("list it"),
		{Role: conversation.RoleAssistant, Content: []conversation.Block{conversation.ToolUse("t1", "bash", []byte(`{"command":"ls"}`))}},
		{Role: conversation.RoleUser, Content: []conversation.Block{conversation.ToolResult("t1", "a.go\nb.go", false)}},
		conversation.AssistantText("Two files: **a.go** and b.go."),
	}
	h := newHarness(t, f, func(o *Options) {
		o.Getenv = fakeEnv("PATH", bin, "WAYLAND_DISPLAY", "wayland-0")
	})
	h.typ("/copy")
	h.enter()
	h.settle()
	require.Equal(t, "Two files: **a.go** and b.go.", h.clipboard, "OSC 52 carries the reply's Markdown")
	data, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, "Two files: **a.go** and b.go.", string(data), "wl-copy was given it too")
	require.Contains(t, h.screen(), "copied the last reply, 29 B (OSC 52 and wl-copy)")

	h.typ("/copy 2")
	h.enter()
	h.settle()
	require.Equal(t, "a.go\nb.go", h.clipboard, "2: the tool's output before the reply")
	require.Contains(t, h.screen(), "copied the tool output 2 from the end, 9 B")

	h.typ("/copy 9")
	h.enter()
	require.Contains(t, h.screen(), "/copy 9: there are 3 blocks to copy")
}

// Inside tmux, with no clipboard tool, the notice says OSC 52 may not
// get through.
func TestCopyInTmuxSaysSo(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.msgs = []conversation.Message{conversation.UserText("hi"), conversation.AssistantText("hello")}
	h := newHarness(t, f, func(o *Options) {
		o.Getenv = fakeEnv("PATH", t.TempDir(), "TMUX", "/tmp/tmux-1/default,1,0")
	})
	h.typ("/copy")
	h.enter()
	h.settle()
	require.Equal(t, "hello", h.clipboard)
	require.Contains(t, h.screen(), "copied the last reply, 5 B (OSC 52): inside tmux it reaches the clipboard only")
}
