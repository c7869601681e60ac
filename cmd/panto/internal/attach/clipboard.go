package attach

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Clipboard reads an image from the clipboard with the platform's tool:
// wl-paste under Wayland (WAYLAND_DISPLAY set), xclip under X
// (DISPLAY set), pngpaste or else osascript on macOS. The tool is found
// on PATH, so a test puts its own first there.
type Clipboard struct {
	// GOOS is the platform (runtime.GOOS).
	GOOS string
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// LookPath finds a tool (exec.LookPath).
	LookPath func(string) (string, error)
	// Timeout bounds the tool's run; 0 is 3 seconds.
	Timeout time.Duration
}

// NoToolError says no clipboard tool was found, and which were looked
// for.
type NoToolError struct{ Looked []string }

func (e *NoToolError) Error() string {
	if len(e.Looked) == 0 {
		return "no clipboard tool for images on this platform"
	}
	return "no clipboard tool for images: looked for " + strings.Join(e.Looked, ", ") + " on PATH"
}

// NoImageError says the tool ran and gave no image.
type NoImageError struct {
	Tool   string
	Detail string
}

func (e *NoImageError) Error() string {
	s := "no image on the clipboard (" + e.Tool + ")"
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// tool is a way to read the clipboard's PNG.
type tool struct {
	name string
	args []string
	// decode turns what it printed into the image's bytes.
	decode func([]byte) ([]byte, error)
}

func raw(b []byte) ([]byte, error) { return b, nil }

// tools are the tools to try, in order, and the names looked for.
func (c Clipboard) tools() []tool {
	get := c.Getenv
	switch {
	case c.GOOS == "darwin":
		return []tool{
			{"pngpaste", []string{"-"}, raw},
			{"osascript", []string{"-e", "the clipboard as «class PNGf»"}, appleScriptData},
		}
	case c.GOOS == "windows":
		return nil
	}
	var out []tool
	if get != nil && get("WAYLAND_DISPLAY") != "" {
		out = append(out, tool{"wl-paste", []string{"--no-newline", "--type", "image/png"}, raw})
	}
	if get != nil && get("DISPLAY") != "" {
		out = append(out, tool{"xclip", []string{"-selection", "clipboard", "-t", "image/png", "-o"}, raw})
	}
	return out
}

// Image runs the first clipboard tool present and returns the image it
// gave, named "clipboard.png". A *NoToolError when none is present, a
// *NoImageError when the clipboard holds no image.
func (c Clipboard) Image(ctx context.Context) (Image, string, error) {
	look := c.LookPath
	if look == nil {
		look = exec.LookPath
	}
	var looked []string
	for _, t := range c.tools() {
		path, err := look(t.name)
		if err != nil {
			looked = append(looked, t.name)
			continue
		}
		timeout := c.Timeout
		if timeout <= 0 {
			timeout = 3 * time.Second
		}
		tctx, cancel := context.WithTimeout(ctx, timeout)
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(tctx, path, t.args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		// A tool whose children keep its output open is not waited for.
		cmd.WaitDelay = 200 * time.Millisecond
		err = cmd.Run()
		timedOut := tctx.Err() != nil
		cancel()
		if timedOut {
			return Image{}, t.name, fmt.Errorf("read the clipboard with %s: no answer in %s", t.name, timeout)
		}
		if err != nil {
			return Image{}, t.name, &NoImageError{Tool: t.name, Detail: firstLine(stderr.String())}
		}
		data, err := t.decode(stdout.Bytes())
		if err != nil || Sniff(data) == "" {
			return Image{}, t.name, &NoImageError{Tool: t.name}
		}
		im, err := FromBytes("clipboard"+ext(Sniff(data)), data)
		return im, t.name, err
	}
	return Image{}, "", &NoToolError{Looked: looked}
}

// ext is the file extension of a media type.
func ext(mediaType string) string {
	return "." + strings.TrimPrefix(strings.TrimPrefix(mediaType, "image/"), "x-")
}

// appleScriptData decodes what osascript prints for «class PNGf»:
// «data PNGf89504E47…».
func appleScriptData(b []byte) ([]byte, error) {
	s := strings.TrimSpace(string(b))
	s, ok := strings.CutPrefix(s, "«data PNGf")
	if !ok {
		return nil, errors.New("not PNG data")
	}
	return hex.DecodeString(strings.TrimSuffix(s, "»"))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
