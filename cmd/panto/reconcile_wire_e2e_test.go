package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// wirePrompt is what a request body says the system prompt is, and the
// roles and texts of the other messages, for either wire format.
type wirePrompt struct {
	system []string // Anthropic: the one string split at the separator; OpenAI: the leading system messages
	rest   []string // "role:text" of every other message
}

func decodeWire(t *testing.T, provider string, body []byte) wirePrompt {
	t.Helper()
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	var w wirePrompt
	if s := anthropicSystem(t, req.System); provider == "anthropic" && s != "" {
		w.system = strings.Split(s, "\n\n---\n\n")
	}
	for _, m := range req.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil { // Anthropic: blocks
			var blocks []struct{ Text string }
			require.NoError(t, json.Unmarshal(m.Content, &blocks))
			for _, b := range blocks {
				text += b.Text
			}
		}
		if m.Role == "system" {
			require.Empty(t, w.rest, "a system message after the others")
			w.system = append(w.system, strings.TrimRight(text, "\n"))
			continue
		}
		w.rest = append(w.rest, m.Role+":"+text)
	}
	return w
}

// anthropicSystem is the text of Anthropic's system field: the string,
// or the text of its one block (with prompt caching on, the block carries
// the cache mark).
func anthropicSystem(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct{ Type, Text string }
	require.NoError(t, json.Unmarshal(raw, &blocks))
	require.Len(t, blocks, 1, "the system prompt is one block")
	require.Equal(t, "text", blocks[0].Type)
	return blocks[0].Text
}

// After a re-seed, and after an extension's edit, the next request carries
// exactly the prompt the log says, over both wire formats: the old blocks
// are gone and the conversation is kept.
func TestReconciledPromptOnTheWire(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			text := anthropicText
			if provider == "openai" {
				text = openaiText
			}
			h := newHarness(t)
			threeLayers(h)
			fake := newFake(t, text("r1"), text("r2"), text("r3"))
			h.env["ANTHROPIC_API_KEY"], h.env["OPENAI_API_KEY"] = "k", "k"
			base := fake.srv.URL
			if provider == "openai" {
				base += "/v1"
			}
			args := func(more ...string) []string {
				return append([]string{"--provider", provider, "--base-url", base}, more...)
			}

			h.ok(args("-p", "one")...)
			w := decodeWire(t, provider, fake.request(t, 0).body)
			require.Equal(t, []string{"project seed", "project append", "user append", "base append"}, w.system)
			require.Equal(t, []string{"user:one"}, w.rest)

			// A changed file: replace + appends are recorded; the request
			// has the new prompt only, and the whole conversation.
			h.write(filepath.Join(h.userDir(), "APPEND_SYSTEM.md"), "user append v2\n")
			h.ok(args("-c", "-p", "two")...)
			w = decodeWire(t, provider, fake.request(t, 1).body)
			require.Equal(t, []string{"project seed", "project append", "user append v2", "base append"}, w.system)
			require.Equal(t, []string{"user:one", "assistant:r1", "user:two"}, w.rest)

			// An extension's append is in the next request, after the
			// configured blocks, and survives an unchanged resume.
			sp := filepath.Join(pluginDir, "sysprompt")
			h.ok(append(args("-c", "--extension", sp), "-p", "/system-append Extension block.")...)
			h.ok(args("-c", "-p", "three")...)
			w = decodeWire(t, provider, fake.request(t, 2).body)
			require.Equal(t, []string{"project seed", "project append", "user append v2", "base append", "Extension block."}, w.system)
			require.Equal(t, []string{"user:one", "assistant:r1", "user:two", "assistant:r2", "user:three"}, w.rest)
			require.Equal(t, 3, fake.count(), "the command ran without the model")
		})
	}
}
