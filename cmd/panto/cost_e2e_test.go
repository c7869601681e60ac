package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// anthropicUsage is a reply of model that reports a prompt-cache read and
// write as Anthropic does.
func anthropicUsage(model, text string, in, cacheRead, cacheWrite, out int) reply {
	q, _ := json.Marshal(text)
	return reply{headers: map[string]string{"content-type": "text/event-stream"}, body: sse(
		"message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[],"stop_reason":null,"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d,"output_tokens":1}}}`, model, in, cacheRead, cacheWrite),
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(q)+`}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, out),
		"message_stop", `{"type":"message_stop"}`,
	)}
}

// usageOf is the usage line of a --mode json run.
func usageOf(t *testing.T, stdout string) *jUsage {
	t.Helper()
	for _, ev := range decodeJSONStream(t, stdout) {
		if u, ok := ev.(*jUsage); ok {
			return u
		}
	}
	t.Fatalf("no usage line in %s", stdout)
	return nil
}

// Issue 21: the usage event's cost_usd from the built-in table (a dated
// snapshot priced as its model), from config's [prices] over it, and
// absent for a model without a price; the reply's usage in the log; the
// session's tokens and cost in session list --json.
func TestCostEverywhere(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env["ANTHROPIC_API_KEY"] = "k"
	fake := newFake(t,
		anthropicUsage("claude-haiku-4-5-20251001", "one", 1000, 9000, 500, 200),
		anthropicUsage("claude-haiku-4-5-20251001", "two", 1000, 9000, 500, 200),
		anthropicUsage("mystery-model", "three", 10, 0, 0, 5),
	)
	run := func(args ...string) *jUsage {
		r := h.run("", append([]string{"--mode", "json", "--provider", "anthropic", "--base-url", fake.srv.URL, "--no-extensions"}, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		return usageOf(t, r.stdout)
	}

	// Built in: Haiku 4.5 at $1 in, $5 out, $0.10 cache read, $1.25
	// cache write a million tokens.
	u := run("-p", "hi", "--model", "claude-haiku-4-5")
	require.Equal(t, "claude-haiku-4-5-20251001", u.Model)
	require.Equal(t, 9000, u.CacheReadTokens)
	require.Equal(t, 500, u.CacheWriteTokens)
	require.NotNil(t, u.CostUSD, "a built-in price")
	builtin := (1000*1 + 200*5 + 9000*0.1 + 500*1.25) / 1e6
	require.InDelta(t, builtin, *u.CostUSD, 1e-12)

	// [prices] overrides the table, for the snapshots of the name too.
	h.write(filepath.Join(h.userDir(), "config.toml"), "[prices.\"claude-haiku-4-5\"]\ninput = 2\noutput = 10\ncache_read = 0.2\ncache_write = 2.5\n")
	u = run("-p", "again", "-c", "--model", "claude-haiku-4-5")
	require.NotNil(t, u.CostUSD)
	over := (1000*2 + 200*10 + 9000*0.2 + 500*2.5) / 1e6
	require.InDelta(t, over, *u.CostUSD, 1e-12)

	// No price known for what answered nor for what was asked: no
	// cost_usd at all (not 0).
	r := h.run("", "--mode", "json", "--provider", "anthropic", "--base-url", fake.srv.URL, "--no-extensions", "-p", "third", "-c", "--model", "mystery-model")
	require.Equal(t, 0, r.code, r.stderr)
	line := ""
	for l := range strings.SplitSeq(r.stdout, "\n") {
		if strings.Contains(l, `"type":"usage"`) {
			line = l
		}
	}
	require.NotEmpty(t, line, r.stdout)
	require.NotContains(t, line, "cost_usd")

	// The log records each reply's usage on its message entry.
	files := h.sessionFiles()
	require.Len(t, files, 1)
	var usages []map[string]any
	for _, l := range logLines(t, files[0]) {
		if u, ok := l["usage"].(map[string]any); ok {
			require.Equal(t, "message", l["type"])
			require.Equal(t, "assistant", l["message"].(map[string]any)["role"])
			usages = append(usages, u)
		}
	}
	require.Len(t, usages, 3)
	require.Equal(t, map[string]any{"input_tokens": 1000.0, "output_tokens": 200.0, "cache_read_tokens": 9000.0, "cache_write_tokens": 500.0}, usages[0])

	// session list --json sums them; with a model of no price there is
	// no cost.
	list := h.ok("session", "list", "--json")
	var rows []struct {
		Tokens  map[string]int `json:"tokens"`
		CostUSD *float64       `json:"cost_usd"`
	}
	require.NoError(t, json.Unmarshal([]byte(list.stdout), &rows), list.stdout)
	require.Len(t, rows, 1)
	require.Equal(t, map[string]int{"input_tokens": 2010, "output_tokens": 405, "cache_read_tokens": 18000, "cache_write_tokens": 1000}, rows[0].Tokens)
	require.Nil(t, rows[0].CostUSD, list.stdout)

	// Priced, it has the cost, by the model recorded at each reply (the
	// price of now: config's).
	h.write(filepath.Join(h.userDir(), "config.toml"), "[prices.\"claude-haiku-4-5\"]\ninput = 2\noutput = 10\ncache_read = 0.2\ncache_write = 2.5\n[prices.mystery-model]\ninput = 1000\n")
	list = h.ok("session", "list", "--json")
	require.NoError(t, json.Unmarshal([]byte(list.stdout), &rows), list.stdout)
	require.NotNil(t, rows[0].CostUSD, list.stdout)
	require.InDelta(t, 2*over+10*1000/1e6, *rows[0].CostUSD, 1e-9)
}
