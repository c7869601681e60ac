package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// recordUsage puts a usage object on the log's last reply entry, as
// panto records the provider's counts of the request (the entry's
// "usage", serializers.Usage's JSON).
func recordUsage(t *testing.T, path, usage string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &e))
		if m, ok := e["message"].(map[string]any); ok && e["type"] == "message" && m["role"] == "assistant" {
			e["usage"] = json.RawMessage(usage)
			b, err := json.Marshal(e)
			require.NoError(t, err)
			lines[i] = string(b)
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
			return
		}
	}
	t.Fatal("no reply in the log")
}

// panto prompt --tokens: each block with its source and key, the tools
// of each extension, the conversation by role, the window; beside the
// provider's count of the last request once the log has one.
func TestPromptTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "Prefer small diffs.")
	tools := filepath.Join(pluginDir, "tools")

	// A fresh session's: nothing recorded, no request.
	r := h.ok("prompt", "--tokens", "--extension", tools)
	for _, want := range []string{"block 1", "built-in default", ".panto/APPEND_SYSTEM.md",
		"tools:guidance", "tools of 1 extension (schemas)", "conversation", "0 messages", "total",
		"no request recorded", "window: 200,000 tokens"} {
		require.Contains(t, r.stdout, want)
	}
	require.NotContains(t, r.stdout, "SHARE")

	h.ok("-p", "what is in go.mod?", "--provider", "echo", "--extension", tools)
	h.ok("-p", "and in main.go?", "--provider", "echo", "--extension", tools, "-c")
	log := h.sessionFiles()[0]
	r = h.ok("prompt", "--tokens", "-c", "--extension", tools)
	require.Contains(t, r.stdout, "user messages")
	require.Contains(t, r.stdout, "assistant replies")
	require.Contains(t, r.stdout, "input tokens as echo counted them", "the log records each reply's usage; echo counts too")
	require.Contains(t, r.stdout, "≈ SHARE OF THE REAL")

	// The usage of the last request, as recorded: Anthropic's counts
	// (the cache apart) add up to its input.
	recordUsage(t, log, `{"input_tokens":300,"output_tokens":20,"cache_read_tokens":1000,"cache_write_tokens":4}`)
	r = h.ok("prompt", "--tokens", "-c", "--extension", tools)
	require.Contains(t, r.stdout, "≈ SHARE OF THE REAL 1,304")
	require.Contains(t, r.stdout, "since the last request")
	require.Contains(t, r.stdout, "1,000 read from the cache")
	require.Contains(t, r.stdout, "as rebuilt from the log")

	var b struct {
		Parts []struct {
			Kind, Name, Source, Key string
			Estimate                int
			Share                   *int
		}
		Estimate    int
		Scaled      int
		Window      int
		Left        int
		LastRequest struct {
			Provider       string
			Real, Estimate int
			Rebuilt        bool
		} `json:"last_request"`
	}
	r = h.ok("prompt", "--tokens", "-c", "--json", "--extension", tools)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &b), r.stdout)
	require.Equal(t, 1304, b.LastRequest.Real)
	require.Equal(t, "echo", b.LastRequest.Provider, "the model_change before the reply names the provider")
	require.True(t, b.LastRequest.Rebuilt, "the last request is estimated as it was sent, rebuilt from the log")
	require.Positive(t, b.LastRequest.Estimate)
	shares, since, est := 0, 0, 0
	kinds := map[string]bool{}
	for _, p := range b.Parts {
		require.NotNil(t, p.Share, p.Name)
		kinds[p.Kind] = true
		est += p.Estimate
		if p.Kind == "since" {
			since = *p.Share
		} else {
			shares += *p.Share
		}
	}
	require.Equal(t, 1304, shares, "the shares of the last request add up to the provider's count")
	require.Equal(t, 1304+since, b.Scaled)
	require.Equal(t, est, b.Estimate)
	require.Equal(t, b.Window-b.Scaled, b.Left)
	for _, k := range []string{"system", "tools", "messages", "since"} {
		require.True(t, kinds[k], "a %s part", k)
	}

	// Names a contract: the other views are chosen apart.
	r = h.run("", "prompt", "--tokens", "--tools", "-c")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "--tokens")
	r = h.run("", "prompt", "--tokens", "-c", "--at", "1")
	require.Equal(t, 2, r.code, r.stderr)
}

// The line loop's /context: the breakdown panto prompt --tokens shows.
func TestLineLoopContext(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	vars := map[string]string{"HOME": root, "PANTO_LOG_LEVEL": "off"}
	var out, errb strings.Builder
	e := &env{
		stdin: strings.NewReader("/help\nhello\n/context\n/quit\n"), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return vars[k] }, cwd: root, terminal: true,
	}
	require.Equal(t, 0, run(context.Background(), e, []string{"--provider", "echo"}), errb.String())
	for _, want := range []string{"/context   where the next request's tokens go", "SOURCE · KEY", "built-in default",
		"user messages", "since the last request", "total", "input tokens as echo counted them"} {
		require.Contains(t, out.String(), want)
	}
}
