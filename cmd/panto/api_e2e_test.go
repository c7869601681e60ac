package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// promptJSON runs panto prompt --json with args and returns the blocks'
// texts.
func promptJSON(t *testing.T, h *harness, args ...string) []promptBlock {
	t.Helper()
	r := h.ok(append([]string{"prompt", "--json"}, args...)...)
	var got struct{ Blocks []promptBlock }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	return got.Blocks
}

// wireSystem is the system part of a request body, byte for byte:
// Anthropic's system string, or OpenAI's leading system messages' texts
// joined with a NUL.
func wireSystem(t *testing.T, provider string, body []byte) string {
	t.Helper()
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	if provider == "anthropic" {
		require.NotEmpty(t, req.System)
		return anthropicSystem(t, req.System)
	}
	var parts []string
	for _, m := range req.Messages {
		if m.Role != "system" {
			break
		}
		parts = append(parts, m.Content.(string))
	}
	return strings.Join(parts, "\x00")
}

// expectedSystem is what the serializers make of the blocks panto prompt
// shows: Anthropic joins them, their final newlines cut, with "---"
// between; OpenAI sends each as it is.
func expectedSystem(provider string, blocks []promptBlock) string {
	var parts []string
	for _, b := range blocks {
		if provider == "anthropic" {
			parts = append(parts, strings.TrimRight(b.Text, "\n"))
		} else {
			parts = append(parts, b.Text)
		}
	}
	if provider == "anthropic" {
		return strings.Join(parts, "\n\n---\n\n")
	}
	return strings.Join(parts, "\x00")
}

// panto prompt shows exactly what the next request's system part carries,
// the extensions' blocks included: for a fresh session, and for a resumed
// one, on both wires. With --no-extensions it shows the files' blocks.
func TestPromptIsTheNextRequest(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			threeLayers(h)
			env, _ := dataExtensions(t)
			exts := []string{"--extension", filepath.Join(pluginDir, "tools"), "--extension", env}
			reply := anthropicText("ok")
			if provider == "openai" {
				reply = openaiText("ok")
			}
			fake := newFake(t, reply, reply)
			h.env["ANTHROPIC_API_KEY"], h.env["OPENAI_API_KEY"] = "k", "k"
			model := append([]string{"--provider", provider, "--base-url", fake.srv.URL}, exts...)

			fresh := promptJSON(t, h, exts...)
			require.Len(t, fresh, 6, "the seed and 3 appends, the tools' guidance, the environment")
			h.ok(append([]string{"-p", "one"}, model...)...)
			require.Equal(t, expectedSystem(provider, fresh), wireSystem(t, provider, fake.request(t, 0).body))

			// A resume after a file changed: the re-seed and the sections.
			h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "project append v2\n")
			resumed := promptJSON(t, h, append([]string{"-c"}, exts...)...)
			h.ok(append([]string{"-p", "two", "-c"}, model...)...)
			require.Equal(t, expectedSystem(provider, resumed), wireSystem(t, provider, fake.request(t, 1).body))
			require.Equal(t, "project append v2\n", resumed[1].Text)

			files := promptJSON(t, h, "-c", "--no-extensions")
			require.Len(t, files, 4, "the files' blocks only: the extensions' sections go with them")
		})
	}
}

// A run records model_change when its provider or model differs from the
// last one recorded, and not when it is the same.
func TestModelChangeRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "one", "--provider", "echo")
	log := h.sessionFiles()[0]
	models := func() []string {
		var out []string
		for _, e := range entriesOfType(t, log, "model_change") {
			out = append(out, e["provider"].(string)+"/"+e["model"].(string))
		}
		return out
	}
	require.Equal(t, []string{"echo/echo"}, models(), "a fresh session records its model")
	h.ok("-p", "two", "--provider", "echo", "-c")
	require.Equal(t, []string{"echo/echo"}, models(), "the same model: nothing")
	h.ok("-p", "three", "--provider", "echo", "--model", "echo-2", "-c")
	require.Equal(t, []string{"echo/echo", "echo/echo-2"}, models())
	fake := newFake(t, anthropicText("ok"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	h.ok("-p", "four", "--provider", "anthropic", "--model", "claude-x", "--base-url", fake.srv.URL, "-c")
	require.Equal(t, []string{"echo/echo", "echo/echo-2", "anthropic/claude-x"}, models())
}

// Tool calls show as they start, in the order the model made them, even
// though they run at once and finish in another order.
func TestToolStartLinesInCallOrder(t *testing.T) {
	t.Parallel()
	h, _, args := toolHarness(t,
		anthropicTools(toolCall{"t1", "ls", `{}`}, toolCall{"t2", "read", `{"path":"notes.txt"}`}, toolCall{"t3", "bash", `{"command":"echo hi"}`}),
		anthropicText("done"))
	h.write(filepath.Join(h.project, "notes.txt"), "a note\n")
	r := h.ok(append([]string{"-p", "look"}, args...)...)
	var starts []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if name, ok := strings.CutPrefix(line, "→ "); ok {
			n, _, _ := strings.Cut(name, " ")
			starts = append(starts, n)
		}
	}
	require.Equal(t, []string{"ls", "read", "bash"}, starts, r.stderr)
}

// Every command's -h and --help exit 0 with its usage on stdout; a
// mistyped command or flag gets a suggestion; completion scripts come
// for bash, zsh and fish.
func TestHelpSuggestionsAndCompletion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, cmd := range [][]string{{}, {"prompt"}, {"session"}, {"session", "list"}, {"dirs"}, {"ext"}, {"ext", "list"},
		{"ext", "check"}, {"ext", "trust"}, {"version"}, {"completion"}} {
		for _, flag := range []string{"-h", "--help"} {
			r := h.run("", append(cmd, flag)...)
			require.Equal(t, 0, r.code, "panto %v %s: %s", cmd, flag, r.stderr)
			require.Contains(t, r.stdout, "Usage:", "panto %v %s", cmd, flag)
			require.Empty(t, r.stderr)
		}
	}
	r := h.ok("ext", "check", "--help")
	require.Contains(t, r.stdout, "panto ext check PATH")
	require.Contains(t, r.stdout, "--log-level", "--log-level is accepted on subcommands")

	for _, tc := range []struct{ args, want string }{
		{"promt", "unknown command \"promt\": did you mean `panto prompt`?"},
		{"sesion list", "unknown command \"sesion\": did you mean `panto session`?"},
		{"session lst", "session: unknown command \"lst\": did you mean `panto session list`?"},
		{"--sesion x.jsonl", "unknown flag --sesion: did you mean --session?"},
		{"prompt --jsn", "prompt: unknown flag --jsn: did you mean --json?"},
	} {
		r := h.run("", strings.Fields(tc.args)...)
		require.Equal(t, 2, r.code, tc.args)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
	for shell, want := range map[string]string{"bash": "__start_panto", "zsh": "#compdef panto", "fish": "complete -c panto"} {
		r := h.ok("completion", shell)
		require.Contains(t, r.stdout, want, shell)
	}
	// Flag values complete too: the providers, and this directory's sessions.
	r = h.ok("__complete", "--provider", "")
	require.Contains(t, r.stdout, "anthropic\nopenai\necho\n")
	h.ok("-p", "hi", "--provider", "echo")
	id := strings.TrimSuffix(filepath.Base(h.sessionFiles()[0]), ".jsonl")
	_, id, _ = strings.Cut(id, "_")
	r = h.ok("__complete", "--resume", id[:4])
	require.Contains(t, r.stdout, id)
}
