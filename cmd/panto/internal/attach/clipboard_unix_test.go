//go:build unix

package attach

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeTool writes an executable script named name into dir.
func fakeTool(t *testing.T, dir, name, script string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755))
}

func TestClipboard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pngFile := write(t, dir, "c.png", encoded(t, "png", 10, 5))
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	look := func(name string) (string, error) {
		p := filepath.Join(bin, name)
		if _, err := os.Stat(p); err != nil {
			return "", err
		}
		return p, nil
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	ctx := context.Background()

	// No tool: the notice says which were looked for.
	_, _, err := Clipboard{GOOS: "linux", Getenv: env("WAYLAND_DISPLAY", "w", "DISPLAY", ":0"), LookPath: look}.Image(ctx)
	require.EqualError(t, err, "no clipboard tool for images: looked for wl-paste, xclip on PATH")
	_, _, err = Clipboard{GOOS: "linux", Getenv: env(), LookPath: look}.Image(ctx)
	var nt *NoToolError
	require.ErrorAs(t, err, &nt)

	fakeTool(t, bin, "xclip", `[ "$*" = "-selection clipboard -t image/png -o" ] || exit 2; cat '`+pngFile+`'`)
	im, tool, err := Clipboard{GOOS: "linux", Getenv: env("DISPLAY", ":0"), LookPath: look}.Image(ctx)
	require.NoError(t, err)
	require.Equal(t, "xclip", tool)
	require.Equal(t, "clipboard.png, "+SizeText(im.Size)+", 10×5", im.Label())
	require.Equal(t, [2]int{10, 5}, [2]int{im.Width, im.Height})

	// Text on the clipboard, or a tool that fails: no image.
	fakeTool(t, bin, "wl-paste", `echo "No suitable type of content copied" >&2; exit 1`)
	_, tool, err = Clipboard{GOOS: "linux", Getenv: env("WAYLAND_DISPLAY", "w"), LookPath: look}.Image(ctx)
	require.Equal(t, "wl-paste", tool)
	require.EqualError(t, err, "no image on the clipboard (wl-paste): No suitable type of content copied")

	// A tool that hangs is cut off.
	fakeTool(t, bin, "pngpaste", `sleep 5`)
	start := time.Now()
	_, _, err = Clipboard{GOOS: "darwin", Getenv: env(), LookPath: look, Timeout: 200 * time.Millisecond}.Image(ctx)
	require.ErrorContains(t, err, "no answer in 200ms")
	require.Less(t, time.Since(start), 3*time.Second)
}

func TestAppleScriptData(t *testing.T) {
	t.Parallel()
	b, err := appleScriptData([]byte("«data PNGf89504E47»\n"))
	require.NoError(t, err)
	require.Equal(t, []byte{0x89, 'P', 'N', 'G'}, b)
	_, err = appleScriptData([]byte("hello"))
	require.Error(t, err)
}
