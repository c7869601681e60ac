package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/panto-dev/panto/sdk"
)

// resultImages are a result's images, for a provider that takes them.
func resultImages(res *mcp.CallToolResult) []sdk.Image {
	var out []sdk.Image
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			out = append(out, sdk.Image{MediaType: img.MIMEType, Data: img.Data})
		}
	}
	return out
}

// resultText is what the model reads of a result: its text blocks, one
// after another; the structured content as JSON when there is no text;
// for other blocks, a line saying what they are (an image follows as an
// image, resultImages).
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
			hasText = true
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes, after this text]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s%s]", c.URI, named(c.Name)))
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil {
				if r.Text != "" {
					parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
					hasText = true
				} else {
					parts = append(parts, fmt.Sprintf("[resource %s: %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
				}
			}
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append([]string{string(b)}, parts...)
		}
	}
	return strings.Join(parts, "\n")
}

func named(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

// The limits of a result the model reads, as the tools extension's.
const (
	maxLines = 2000
	maxBytes = 50 * 1024
)

// cut keeps the head and the tail of a text over the limits, each at most
// half of them, and says what it left out and where the whole is (saved
// by save; "" when it could not be saved).
func cut(text string, save func(string) (string, error)) string {
	lines := strings.Count(text, "\n") + 1
	if len(text) <= maxBytes && lines <= maxLines {
		return text
	}
	head := firstPart(text, maxBytes/2, maxLines/2)
	tail := lastPart(text, maxBytes/2, maxLines/2)
	where := "it could not be saved"
	if path, err := save(text); err == nil {
		where = "the whole result is in " + path + " (read it in parts)"
	} else {
		where += ": " + err.Error()
	}
	omitted := len(text) - len(head) - len(tail)
	return fmt.Sprintf("%s\n[panto cut %d bytes from the middle of this result (%d lines, %d bytes in all); %s]\n%s",
		head, omitted, lines, len(text), where, tail)
}

// firstPart is text's first lines, at most n bytes and l lines, cut at a
// line end where there is one, never inside a character.
func firstPart(text string, n, l int) string {
	end := 0
	for i := 0; i < l && end < len(text); i++ {
		j := strings.IndexByte(text[end:], '\n')
		if j < 0 || end+j+1 > n {
			break
		}
		end += j + 1
	}
	if end == 0 { // one long line
		end = n
		for end > 0 && !isRuneStart(text[end]) {
			end--
		}
	}
	return strings.TrimSuffix(text[:end], "\n")
}

func lastPart(text string, n, l int) string {
	start := len(text)
	search := len(strings.TrimSuffix(text, "\n")) // a final newline ends the last line
	for range l {
		j := strings.LastIndexByte(text[:search], '\n')
		if j < 0 || len(text)-(j+1) > n {
			break
		}
		start, search = j+1, j
	}
	if start == len(text) { // one long last line
		start = max(0, len(text)-n)
		for start < len(text) && !isRuneStart(text[start]) {
			start++
		}
	}
	return text[start:]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// saveOutput writes a whole result to dir/NAME.txt (mode 0600) and
// returns its path.
func saveOutput(dir, name, text string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("no folder to save it in")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("save the whole result: %w", err)
	}
	path := filepath.Join(dir, sanitize(name)+".txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("save the whole result: %w", err)
	}
	return path, nil
}
