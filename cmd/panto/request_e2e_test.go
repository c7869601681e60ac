package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// replyIDs are the ids of the log's assistant messages, in file order.
func replyIDs(t *testing.T, log string) []string {
	t.Helper()
	var ids []string
	for _, e := range logLines(t, log) {
		if m, ok := e["message"].(map[string]any); ok && e["type"] == "message" && m["role"] == "assistant" {
			ids = append(ids, e["id"].(string))
		}
	}
	return ids
}

// panto request --at prints, for every reply of a session, the body the
// provider got for it, byte for byte: through an extension's edit of the
// prompt, a section updated in place, tools from two extensions, a model
// change, a settings change, a compaction and a branch.
func TestRequestAtIsWhatTheProviderGot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	log := filepath.Join(h.root, "s.jsonl")
	fake := newFake(t,
		anthropicTools(toolCall{"tu1", "note", `{"text":"x"}`}), anthropicText("noted it"), // tools + guide
		anthropicText("brief now"),        // after /system-append
		anthropicText("guidance changed"), // the guide's section updated in place
		anthropicText("other model"),      // --model
		anthropicText("fewer tokens"),     // max_tokens in config
		anthropicText("The user asked things."), anthropicText("after compaction"),
		anthropicText("on a branch"),
	)
	h.env["ANTHROPIC_API_KEY"] = "k"
	exts := []string{"--extension", filepath.Join(pluginDir, "tools"), "--extension", filepath.Join(pluginDir, "guide"),
		"--extension", filepath.Join(pluginDir, "sysprompt")}
	run := func(args ...string) result {
		return h.ok(append(append([]string{"--session", log, "--provider", "anthropic", "--base-url", fake.srv.URL}, exts...), args...)...)
	}
	run("-p", "take a note")
	run("-p", "/system-append Be brief.")
	run("-p", "and now?")
	h.env["PANTO_TEST_GUIDANCE"] = "Use note for every note."
	run("-p", "guidance?")
	run("--model", "claude-other", "-p", "which model?")
	h.write(filepath.Join(h.userDir(), "config.toml"), "max_tokens = 1000\ncompaction_keep_tokens = 10\n")
	run("--model", "claude-other", "-p", "shorter?")
	run("--model", "claude-other", "-p", "/compact")
	run("--model", "claude-other", "-p", "after?")
	first := replyIDs(t, log)[1]
	run("--model", "claude-other", "--from", first, "-p", "again from there")

	var sent [][]byte
	for i := range fake.count() {
		body := fake.request(t, i).body
		if !strings.Contains(string(body), `"You summarise a conversation`) {
			sent = append(sent, body)
		}
	}
	ids := replyIDs(t, log)
	require.Len(t, ids, len(sent), "one reply per request, the summary's aside")
	settings := entriesOfType(t, log, "request_settings")
	require.GreaterOrEqual(t, len(settings), 3, "recorded when they changed: the first request, the model, max_tokens")
	require.Less(t, len(settings), len(ids), "not before every request")
	for i, id := range ids {
		got := h.ok("request", "--session", log, "--at", id).stdout
		require.Equal(t, string(sent[i])+"\n", got, "reply %d (%s)", i+1, id)
	}
	var last struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Tools     []struct{ Name string }
	}
	require.NoError(t, json.Unmarshal(sent[len(sent)-1], &last))
	require.Equal(t, "claude-other", last.Model)
	require.Equal(t, 1000, last.MaxTokens)
	var names []string
	for _, tl := range last.Tools {
		names = append(names, tl.Name)
	}
	require.Contains(t, names, "note")
	require.Contains(t, names, "bash")

	// The short prefix and a message number name a reply too.
	require.Equal(t, string(sent[0])+"\n", h.ok("request", "--session", log, "--at", ids[0][:8]).stdout)
	r := h.run("", "request", "--session", log, "--at", "1")
	require.NotZero(t, r.code)
	require.Contains(t, r.stderr, "is a system message, not a reply")
}

// A log written before panto recorded request settings says so.
func TestRequestAtInAnOldLogSaysWhatItCannotRebuild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	log := filepath.Join(h.root, "old.jsonl")
	h.write(log, `{"type":"session","version":1,"id":"old","created":"2026-01-01T00:00:00Z","cwd":"/p"}
{"type":"message","id":"0000000000000001","parent_id":"","time":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}
{"type":"message","id":"0000000000000002","parent_id":"0000000000000001","time":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]}}
`)
	r := h.run("", "request", "--session", log, "--at", "0000000000000002")
	require.NotZero(t, r.code)
	require.Contains(t, r.stderr, "does not record this request's settings")
	require.Contains(t, r.stderr, log)
}

// echo sends no body; --wire shows what a wire would carry, and --next
// what continuing would send now.
func TestRequestOfAnEchoSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	log := filepath.Join(h.root, "e.jsonl")
	h.ok("--session", log, "--provider", "echo", "-p", "hello there")
	id := replyIDs(t, log)[0]
	r := h.run("", "request", "--session", log, "--at", id)
	require.NotZero(t, r.code)
	require.Contains(t, r.stderr, "--wire anthropic")
	var body struct {
		Model    string            `json:"model"`
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("request", "--session", log, "--at", id, "--wire", "anthropic").stdout), &body))
	require.Len(t, body.Messages, 1)
	require.Contains(t, string(body.Messages[0]), "hello there")

	next := h.ok("request", "--session", log, "--next", "--wire", "openai").stdout
	require.Contains(t, next, `"hello there"`)
	require.Contains(t, next, `"role":"assistant"`, "the conversation up to its end, the reply included")

	// --next from an earlier point: the conversation up to there, the
	// later turn left out; the log itself is only read.
	h.ok("--session", log, "--provider", "echo", "-p", "second question")
	before, err := os.ReadFile(log)
	require.NoError(t, err)
	next = h.ok("request", "--session", log, "--at", id, "--next", "--wire", "openai").stdout
	require.Contains(t, next, `"hello there"`)
	require.NotContains(t, next, "second question")
	after, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "the move is made on a copy")
	require.Contains(t, h.ok("request", "--session", log, "--next", "--wire", "openai").stdout, "second question")
}
