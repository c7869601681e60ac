package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An image the read tool returns is kept once, by its hash, beside the
// session log, and a fork and the HTML export carry it.
func TestReadImageStoredByHash(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := image.NewNRGBA(image.Rect(0, 0, 4, 3))
	m.Set(1, 1, color.NRGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, m))
	h.write(filepath.Join(h.project, "x.png"), buf.String())
	sum := sha256.Sum256(buf.Bytes())
	name := "sha256-" + hex.EncodeToString(sum[:]) + ".png"
	data := base64.StdEncoding.EncodeToString(buf.Bytes())

	// Twice, so the one image is in two entries.
	r := h.ok(echoTools(h, "-p", "tool:read {\"path\":\"x.png\"}\ntool:read {\"path\":\"x.png\"}")...)
	require.Contains(t, r.stdout, "x.png: PNG image, ")
	logs := h.sessionFiles()
	require.Len(t, logs, 1)
	log := logs[0]
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NotContains(t, string(raw), data, "no base64 in the log")
	require.Equal(t, 2, strings.Count(string(raw), `{"type":"image","media_type":"image/png","sha256":"`+hex.EncodeToString(sum[:])+`","size":`),
		"both results name the image by its hash")
	dir := strings.TrimSuffix(log, ".jsonl") + ".images"
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "stored once")
	require.Equal(t, name, entries[0].Name())
	stored, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	require.Equal(t, buf.Bytes(), stored)

	// A fork carries the image in its own folder.
	fork := filepath.Join(t.TempDir(), "fork.jsonl")
	h.ok("session", "fork", log, "-o", fork)
	got, err := os.ReadFile(filepath.Join(strings.TrimSuffix(fork, ".jsonl")+".images", name))
	require.NoError(t, err, "the fork's image folder holds the image")
	require.Equal(t, buf.Bytes(), got)

	// The HTML export draws it from the folder.
	out := filepath.Join(t.TempDir(), "s.html")
	h.ok("session", "export", log, "--format", "html", "-o", out)
	page, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Contains(t, string(page), "data:image/png;base64,"+data)
}
