package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func compactions(t *testing.T, log string) []map[string]any {
	t.Helper()
	return entriesOfType(t, log, "compaction")
}

func TestCompactOnDemand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	h.write(filepath.Join(h.userDir(), "config.toml"), "compaction_keep_tokens = 10\ncompaction_model = \"claude-summariser\"\n")
	for _, q := range []string{"first question about the parser", "second question about the lexer", "third question"} {
		args := []string{"-p", q, "--provider", "echo"}
		if q != "first question about the parser" {
			args = append(args, "-c")
		}
		h.ok(args...)
	}
	log := h.sessionFiles()[0]
	promptBefore := h.ok("prompt", "-c", "--json").stdout

	fake := newFake(t, anthropicText("before"), anthropicText("The user asked about the parser and the lexer."),
		anthropicText("after"), anthropicText("resumed"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	h.ok("-p", "q4", "-c", "--provider", "anthropic", "--base-url", fake.srv.URL)
	bodyBefore := fake.request(t, 0).body

	r := h.ok("-p", "/compact", "-c", "--provider", "anthropic", "--base-url", fake.srv.URL)
	require.Contains(t, r.stdout, "compacted: the next request sends")
	summarise := string(fake.request(t, 1).body)
	require.Contains(t, summarise, "first question about the parser", "the model is sent the transcript to summarise")
	var sreq struct{ System, Model string }
	require.NoError(t, json.Unmarshal([]byte(summarise), &sreq))
	require.Equal(t, "claude-summariser", sreq.Model, "compaction_model summarises")
	var treq struct{ Model string }
	require.NoError(t, json.Unmarshal(bodyBefore, &treq))
	require.NotEqual(t, "claude-summariser", treq.Model, "the turns keep the session's model")
	require.True(t, strings.HasPrefix(sreq.System, "You summarise a conversation"), "the summariser gets its own system prompt, not the session's")
	require.NotContains(t, summarise, "cache_control", "a summary is asked once: no cache marks")
	cs := compactions(t, log)
	require.Len(t, cs, 1)
	require.Equal(t, "The user asked about the parser and the lexer.", cs[0]["summary"])
	require.NotEmpty(t, cs[0]["first_kept_id"])

	// The prompt is the same as before, for the whole log and every prefix.
	require.Equal(t, promptBefore, h.ok("prompt", "-c", "--json").stdout)

	// The next request is smaller, carries the summary and the same system.
	h.ok("-p", "q5", "-c", "--provider", "anthropic", "--base-url", fake.srv.URL)
	bodyAfter := fake.request(t, 2).body
	require.Less(t, len(bodyAfter), len(bodyBefore))
	var before, after struct {
		System   json.RawMessage // with prompt caching, a marked block
		Messages []json.RawMessage
	}
	require.NoError(t, json.Unmarshal(bodyBefore, &before))
	require.NoError(t, json.Unmarshal(bodyAfter, &after))
	require.Equal(t, string(before.System), string(after.System))
	require.Contains(t, string(after.System), "cache_control", "the session's requests are marked")
	require.Contains(t, string(after.Messages[0]), "Summary of the earlier conversation")
	require.NotContains(t, string(bodyAfter), "second question about the lexer")

	// A resume after compaction sends the summary, not the old messages.
	h.ok("-p", "q6", "-c", "--provider", "anthropic", "--base-url", fake.srv.URL)
	require.Contains(t, string(fake.request(t, 3).body), "Summary of the earlier conversation")
	require.NotContains(t, string(fake.request(t, 3).body), "first question about the parser")

	// --at N still shows the exact prompt of every prefix of the full log.
	full := h.ok("prompt", "--session", log, "--at", "4", "--json").stdout
	require.Contains(t, full, "base append")
}

func TestCompactsAutomaticallyNearTheWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.userDir(), "config.toml"),
		"context_window = 900\ncompaction_threshold = 0.5\ncompaction_keep_tokens = 1\n")
	h.ok("-p", strings.Repeat("long question ", 40), "--provider", "echo")
	log := h.sessionFiles()[0]
	require.Empty(t, compactions(t, log))
	h.ok("-p", "next", "--provider", "echo", "-c")
	require.Len(t, compactions(t, log), 1, "the request would cross half the window: compacted first")

	r := h.run("", "-p", "/compact", "--provider", "echo", "-c")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "nothing to compact")
}
