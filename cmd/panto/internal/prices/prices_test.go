package prices

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/sessionlog"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	tab := New(map[string]Price{
		"claude-sonnet-4-5":  {Input: 1, Output: 2, CacheRead: 0.5, CacheWrite: 1.5}, // over the built-in
		"My-Local":           {},                                                     // free, and a price
		"gpt-4.1-2025-04-14": {Input: 9},                                             // a snapshot of its own
	})
	for _, tc := range []struct {
		model string
		want  Price
		known bool
	}{
		// Built in.
		{"claude-opus-4-5", Price{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}, true},
		{"claude-haiku-4-5-20251001", Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}, true},
		{"gpt-4.1", Price{Input: 2, Output: 8, CacheRead: 0.5, CacheWrite: 2}, true},
		{"GPT-4o-mini-2024-07-18", Price{Input: 0.15, Output: 0.6, CacheRead: 0.075, CacheWrite: 0.15}, true},
		{"claude-3-7-sonnet-latest", Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, true},
		// Config over the table, also for the snapshots of its name.
		{"claude-sonnet-4-5", Price{Input: 1, Output: 2, CacheRead: 0.5, CacheWrite: 1.5}, true},
		{"claude-sonnet-4-5-20250929", Price{Input: 1, Output: 2, CacheRead: 0.5, CacheWrite: 1.5}, true},
		{"my-local", Price{}, true},
		{"gpt-4.1-2025-04-14", Price{Input: 9}, true},
		// Unknown.
		{"", Price{}, false},
		{"llama3", Price{}, false},
		{"claude-sonnet-4-5-x", Price{}, false},
		{"echo", Price{}, false},
	} {
		got, ok := tab.Lookup(tc.model)
		require.Equal(t, tc.known, ok, tc.model)
		require.InDeltaMapValues(t, map[string]float64{"in": tc.want.Input, "out": tc.want.Output, "r": tc.want.CacheRead, "w": tc.want.CacheWrite},
			map[string]float64{"in": got.Input, "out": got.Output, "r": got.CacheRead, "w": got.CacheWrite}, 1e-9, tc.model)
	}
	// The zero Table is the built-in one.
	p, ok := Table{}.Lookup("claude-sonnet-4-5-20250929")
	require.True(t, ok)
	require.Equal(t, 3.0, p.Input)
}

// The models panto names by default have a built-in price, and the
// table's date parses.
func TestDefaultsArePriced(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"anthropic", "openai"} {
		_, ok := Table{}.Lookup(config.DefaultModel(provider))
		require.True(t, ok, provider)
	}
	_, err := time.Parse(time.DateOnly, Taken)
	require.NoError(t, err)
	for _, name := range Names() {
		require.Equal(t, Base(name), name, "the table is by base name")
	}
}

func TestCost(t *testing.T) {
	t.Parallel()
	// Anthropic counts input without the cache; OpenAI with the reads.
	c, ok := Table{}.Cost("claude-sonnet-4-5", Reported("anthropic", 1000, 100, 10000, 2000))
	require.True(t, ok)
	require.InDelta(t, (1000*3+100*15+10000*0.3+2000*3.75)/1e6, c, 1e-12)
	c, ok = Table{}.Cost("gpt-4.1", Reported("openai", 11000, 100, 10000, 0))
	require.True(t, ok)
	require.InDelta(t, (1000*2+100*8+10000*0.5)/1e6, c, 1e-12)
	_, ok = Table{}.Cost("llama3", Tokens{Input: 5})
	require.False(t, ok)
}

func TestHitShare(t *testing.T) {
	t.Parallel()
	pct, ok := Reported("anthropic", 100, 5, 870, 30).HitShare()
	require.True(t, ok)
	require.Equal(t, 87, pct)
	pct, ok = Reported("openai", 1000, 5, 870, 0).HitShare()
	require.True(t, ok)
	require.Equal(t, 87, pct)
	_, ok = Tokens{Output: 5}.HitShare()
	require.False(t, ok)
}

func TestSum(t *testing.T) {
	t.Parallel()
	tab := New(map[string]Price{"m": {Input: 1, Output: 2}})
	s := tab.Sum([]sessionlog.ModelUsage{
		{Provider: "openai", Model: "m", Usage: sessionlog.Usage{InputTokens: 3_000_000, OutputTokens: 1_000_000, CacheReadTokens: 1_000_000}},
		{Provider: "anthropic", Model: "claude-haiku-4-5", Usage: sessionlog.Usage{InputTokens: 1_000_000}},
		{Provider: "x", Model: "unknown"}, // no tokens: no price needed
	})
	require.True(t, s.CostKnown)
	require.InDelta(t, 2+2+1, s.CostUSD, 1e-9)
	require.Equal(t, sessionlog.Usage{InputTokens: 4_000_000, OutputTokens: 1_000_000, CacheReadTokens: 1_000_000}, s.Usage)

	s = tab.Sum([]sessionlog.ModelUsage{{Model: "m", Usage: sessionlog.Usage{InputTokens: 1}}, {Model: "llama3", Usage: sessionlog.Usage{OutputTokens: 1}}})
	require.False(t, s.CostKnown, "a partial cost is no cost")
	require.Zero(t, s.CostUSD)
	require.Equal(t, 1, s.Usage.OutputTokens)
	require.False(t, tab.Sum(nil).CostKnown)
}
