package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// testPNG is a w×h PNG image.
func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))))
	return b.Bytes()
}

// lastUser is the last user message of the project's only session log,
// as sessionlog reads it.
func lastUser(t *testing.T, h *harness) conversation.Message {
	t.Helper()
	files := h.sessionFiles()
	require.Len(t, files, 1)
	l, err := sessionlog.Read(files[0])
	require.NoError(t, err)
	msgs := l.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == conversation.RoleUser {
			return msgs[i]
		}
	}
	t.Fatal("no user message in the log")
	return conversation.Message{}
}

// imageBlocks are a message's image blocks.
func imageBlocks(m conversation.Message) []conversation.Block {
	var out []conversation.Block
	for _, b := range m.Content {
		if b.Type == conversation.TypeImage {
			out = append(out, b)
		}
	}
	return out
}

// An @path to an image file in print mode attaches it: the user message
// recorded holds the image block and a text naming it, the user's text
// stays what they typed, and stderr says what was attached.
func TestImageMentionPrintMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	img := testPNG(t, 40, 30)
	require.NoError(t, os.WriteFile(filepath.Join(h.project, "shot.png"), img, 0o644))
	h.write(filepath.Join(h.project, "main.go"), "package main\n")
	r := h.ok("-p", "look at @shot.png and @main.go", "--provider", "echo")
	require.Contains(t, r.stderr, "attached image shot.png, "+sizeText(len(img))+", 40×30")
	u := lastUser(t, h)
	require.Equal(t, "look at @shot.png and @main.go", u.Typed())
	ims := imageBlocks(u)
	require.Len(t, ims, 1, "the image, not the source file")
	require.Equal(t, "image/png", ims[0].MediaType)
	require.Equal(t, base64.StdEncoding.EncodeToString(img), ims[0].Data)
	require.Contains(t, u.Text(), "[image: shot.png, "+sizeText(len(img))+", 40×30]")
}

func sizeText(n int) string {
	if n < 1000 {
		return itoa(n) + " B"
	}
	return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " kB"
}

// Not an image, too big: nothing is sent, and the error names the file.
func TestImageMentionRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.project, "notes.png"), "just text")
	r := h.run("", "-p", "see @notes.png", "--provider", "echo")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "not sent: attach notes.png: not a PNG, JPEG, GIF or WebP image")

	var huge bytes.Buffer
	require.NoError(t, png.Encode(&huge, image.NewGray(image.Rect(0, 0, 7000, 6000))))
	require.NoError(t, os.WriteFile(filepath.Join(h.project, "big.png"), huge.Bytes(), 0o644))
	r = h.run("", "-p", "see @big.png", "--provider", "echo")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "attach big.png: PNG image of 7000×6000 px: too large to scale down (more than 40 megapixels)")
	for _, f := range h.sessionFiles() {
		l, err := sessionlog.Read(f)
		require.NoError(t, err)
		for _, m := range l.Messages() {
			require.NotEqual(t, conversation.RoleUser, m.Role, "nothing was sent")
		}
	}
}

// The image reaches both wires as each API takes an image.
func TestImageMentionWires(t *testing.T) {
	t.Parallel()
	img := testPNG(t, 12, 7)
	data := base64.StdEncoding.EncodeToString(img)

	t.Run("anthropic", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		require.NoError(t, os.WriteFile(filepath.Join(h.project, "s.png"), img, 0o644))
		fake := newFake(t, anthropicText("a gray box"))
		h.env["ANTHROPIC_API_KEY"] = "k"
		r := h.ok("-p", "what is @s.png", "--provider", "anthropic", "--base-url", fake.srv.URL)
		require.Equal(t, "a gray box\n", r.stdout)
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content []struct {
					Type   string `json:"type"`
					Text   string `json:"text"`
					Source struct {
						Type      string `json:"type"`
						MediaType string `json:"media_type"`
						Data      string `json:"data"`
					} `json:"source"`
				} `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(fake.request(t, 0).body, &body))
		last := body.Messages[len(body.Messages)-1]
		require.Equal(t, "user", last.Role)
		var found bool
		for _, c := range last.Content {
			if c.Type == "image" {
				found = true
				require.Equal(t, "base64", c.Source.Type)
				require.Equal(t, "image/png", c.Source.MediaType)
				require.Equal(t, data, c.Source.Data)
			}
		}
		require.True(t, found, "an image block in %s", fake.request(t, 0).body)
	})

	t.Run("openai", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		require.NoError(t, os.WriteFile(filepath.Join(h.project, "s.png"), img, 0o644))
		fake := newFake(t, openaiText("a gray box"))
		h.env["OPENAI_API_KEY"] = "k"
		r := h.ok("-p", "what is @s.png", "--provider", "openai", "--base-url", fake.srv.URL+"/v1")
		require.Equal(t, "a gray box\n", r.stdout)
		var body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(fake.request(t, 0).body, &body))
		last := body.Messages[len(body.Messages)-1]
		require.Equal(t, "user", last.Role)
		var parts []struct {
			Type     string `json:"type"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		require.NoError(t, json.Unmarshal(last.Content, &parts), "content parts: %s", last.Content)
		var found bool
		for _, p := range parts {
			if p.Type == "image_url" {
				found = true
				require.Equal(t, "data:image/png;base64,"+data, p.ImageURL.URL)
			}
		}
		require.True(t, found, "an image part in %s", last.Content)
	})
}
