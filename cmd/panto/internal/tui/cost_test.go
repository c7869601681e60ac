package tui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// The status line sums the host's costs and shows the last request's
// cache-hit share (pi's CH), which drops first when the line is narrow.
func TestStatusCostAndCacheHits(t *testing.T) {
	t.Parallel()
	th := theme.New(true, true)
	s := status{provider: "anthropic", model: "claude-sonnet-4-5"}
	s.addUsage(host.Usage{InputTokens: 1000, OutputTokens: 10}) // no price, no cache yet
	line := s.view(th, 200)
	require.NotContains(t, line, "$")
	require.NotContains(t, line, "CH", "no share before the provider caches at all")

	s.addUsage(host.Usage{InputTokens: 100, OutputTokens: 50, CacheReadTokens: 870, CacheWriteTokens: 30, CostUSD: 0.25, CostKnown: true})
	s.addUsage(host.Usage{InputTokens: 100, OutputTokens: 50, CacheReadTokens: 8700, CacheWriteTokens: 1200, CostUSD: 0.5, CostKnown: true})
	line = s.view(th, 200)
	require.Contains(t, line, "CH 87%")
	require.Contains(t, line, "$0.750")

	// A change early in the prompt: the next request reads nothing from
	// the cache.
	s.addUsage(host.Usage{InputTokens: 200, CacheWriteTokens: 9800})
	require.Contains(t, s.view(th, 200), "CH 0%")

	// OpenAI counts the cache reads in the input.
	o := status{provider: "openai", model: "gpt-4.1"}
	o.addUsage(host.Usage{InputTokens: 1000, CacheReadTokens: 500})
	require.Contains(t, o.view(th, 200), "CH 50%")

	// Narrow: CH goes before the cost and the tokens.
	width := ansi.StringWidth(s.view(th, 200)) - 3
	narrow := s.view(th, width)
	require.LessOrEqual(t, ansi.StringWidth(narrow), width)
	require.NotContains(t, narrow, "CH")
	require.Contains(t, narrow, "$0.750")
}

// /session shows the log's tokens and cost, summed over every branch and
// priced by the model recorded at each reply.
func TestSessionShowsTokensAndCost(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	_, err = w.Append(
		sessionlog.ModelChangeEntry("anthropic", "claude-sonnet-4-5"),
		sessionlog.MessageEntry(conversation.UserText("q")),
		sessionlog.ReplyEntry(conversation.AssistantText("a"), &sessionlog.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}),
		sessionlog.ModelChangeEntry("anthropic", "claude-haiku-4-5-20251001"),
		sessionlog.ReplyEntry(conversation.AssistantText("b"), &sessionlog.Usage{InputTokens: 1_000_000, CacheReadTokens: 1_000_000}),
	)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	f := newFake()
	f.info.Path = path
	h := newHarness(t, f, func(o *Options) { o.Prices = prices.New(nil) })
	h.typ("/session")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "cost") }, "the totals")
	s := h.screen()
	require.Contains(t, s, "tokens  2000000 in, 100000 out, 1000000 cache read, 0 cache write")
	// 3 + 1.5 at Sonnet's prices, 1 + 0.1 at Haiku's.
	require.Contains(t, s, "cost    $5.600")
}
