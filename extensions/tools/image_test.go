package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk/sdktest"
)

// pngOf returns a w×h PNG of a gradient.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, m))
	return buf.Bytes()
}

func TestReadImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := pngOf(t, 40, 30)
	big := pngOf(t, 2000, 1000)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.png"), small, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.png"), big, 0o600))
	// An image by its content, whatever its name says.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shot.dat"), small, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.png"), small[:60], 0o600))

	h := sdktest.New(t, &ext{dir: dir})
	res, err := h.CallTool("read", json.RawMessage(`{"path":"x.png"}`))
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "x.png: PNG image, "+strconv.Itoa(len(small))+" bytes, 40×30 px", res.Content)
	require.Len(t, res.Images, 1)
	require.Equal(t, "image/png", res.Images[0].MediaType)
	require.Equal(t, small, res.Images[0].Data, "a small image goes as it is")

	res, err = h.CallTool("read", json.RawMessage(`{"path":"shot.dat"}`))
	require.NoError(t, err)
	require.Len(t, res.Images, 1, res.Content)

	res, err = h.CallTool("read", json.RawMessage(`{"path":"big.png"}`))
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "big.png: PNG image, ")
	require.Contains(t, res.Content, "1568×784 px (scaled down from 2000×1000 px, "+strconv.Itoa(len(big))+" bytes)")
	require.Len(t, res.Images, 1)
	cfg, err := png.DecodeConfig(bytes.NewReader(res.Images[0].Data))
	require.NoError(t, err)
	require.Equal(t, [2]int{1568, 784}, [2]int{cfg.Width, cfg.Height})

	res, err = h.CallTool("read", json.RawMessage(`{"path":"broken.png"}`))
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "broken.png: decode PNG image")
	require.Empty(t, res.Images)
}

func TestReadOtherBinaryStillRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// RIFF but not WebP (a WAV file) is binary, not an image.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.wav"), []byte("RIFF\x24\x00\x00\x00WAVEfmt \x00\x00"), 0o600))
	res := call(t, dir, "read", `{"path":"a.wav"}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "binary file (18 bytes)")
	require.Empty(t, res.Images)
}
