//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// A path pasted into the full-screen UI, as a terminal pastes a file
// dropped on it (spaces escaped), attaches the image: it waits above the
// editor by name, size and dimensions and goes with the message.
func TestUIPastedImagePath(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	img := testPNG(t, 40, 30)
	p := filepath.Join(h.project, "my shot.png")
	require.NoError(t, os.WriteFile(p, img, 0o644))
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo")
	u.ready("echo/echo")
	u.paste(strings.ReplaceAll(p, " ", `\ `))
	label := "my shot.png, " + sizeText(len(img)) + ", 40×30"
	u.wait("▣ image 1: " + label)
	u.typ("what is this?")
	u.keys("Enter")
	u.wait("▣ image: " + label)
	u.wait("system prompt: 1 block(s)")
	require.Equal(t, 0, u.quit())
	m := lastUser(t, h)
	require.Equal(t, "what is this?", m.Typed())
	ims := imageBlocks(m)
	require.Len(t, ims, 1)
	require.Equal(t, "image/png", ims[0].MediaType)
}

// Ctrl-V reads the clipboard's image with xclip under X (DISPLAY set):
// here a fake xclip first on PATH prints a PNG. Without a tool, the
// notice says which were looked for.
func TestUIClipboardImage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	img := testPNG(t, 16, 9)
	bin := filepath.Join(h.root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	src := filepath.Join(h.root, "clip.png")
	require.NoError(t, os.WriteFile(src, img, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "xclip"), []byte(
		"#!/bin/sh\n[ \"$*\" = \"-selection clipboard -t image/png -o\" ] || exit 3\nexec cat '"+src+"'\n"), 0o755))
	u := h.tmuxPanto(100, 30, map[string]string{"DISPLAY": ":42", "PATH": bin + ":" + os.Getenv("PATH")}, "--provider", "echo")
	u.ready("echo/echo")
	u.keys("C-v")
	label := "clipboard.png, " + sizeText(len(img)) + ", 16×9"
	u.wait("image 1 attached, from the clipboard (xclip): " + label)
	u.typ("and this?")
	u.keys("Enter")
	u.wait("▣ image: " + label)
	u.wait("system prompt: 1 block(s)")
	require.Equal(t, 0, u.quit())
	m := lastUser(t, h)
	ims := imageBlocks(m)
	require.Len(t, ims, 1)
	require.Equal(t, conversation.TypeImage, ims[0].Type)

	// No display, no tool.
	h2 := newHarness(t)
	u2 := h2.tmuxPanto(100, 30, map[string]string{"WAYLAND_DISPLAY": "wayland-9", "PATH": "/nonexistent"}, "--provider", "echo")
	u2.ready("echo/echo")
	u2.keys("C-v")
	u2.wait("Ctrl-V: no clipboard tool for images: looked for wl-paste on PATH")
	require.Equal(t, 0, u2.quit())
}
