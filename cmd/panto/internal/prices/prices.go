// Package prices is what models cost: a built-in table of the models
// panto names by default and the common current Anthropic and OpenAI
// ones, which config's [prices."MODEL"] tables override, and the cost of
// a request's tokens. Every front end (the status line, --mode json,
// ACP, session list, /session, the export) prices tokens through it, so
// they agree.
//
// Not here: what a request used (the provider reports it; host.Usage and
// sessionlog.Usage carry it).
package prices

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/panto-dev/panto/sessionlog"
)

// Taken is when the built-in table was taken from the providers'
// published prices. A model's price may have changed since: config's
// [prices."MODEL"] overrides the table.
const Taken = "2026-12-03"

// Price is what a model costs, in dollars per million tokens: of input
// sent (not read from the cache), output (reasoning included), input read
// from the provider's prompt cache, and input written to it.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Tokens are one request's tokens, as the provider counted them.
// InputTokens excludes the cache reads and writes (as panto's serializers
// give them: the Anthropic count, and OpenAI's prompt tokens less the
// cached ones); OutputTokens includes reasoning.
type Tokens struct {
	Input, Output, CacheRead, CacheWrite int
}

// Reported is Tokens from a provider's own counts: OpenAI's input count
// includes the tokens read from the cache, Anthropic's (and Tokens')
// does not.
func Reported(provider string, input, output, cacheRead, cacheWrite int) Tokens {
	if provider == "openai" {
		input = max(input-cacheRead, 0)
	}
	return Tokens{Input: input, Output: output, CacheRead: cacheRead, CacheWrite: cacheWrite}
}

// OfUsage is Reported of a usage recorded in a session log.
func OfUsage(provider string, u sessionlog.Usage) Tokens {
	return Reported(provider, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens)
}

// HitShare is the share of t's input read from the cache, in percent:
// CacheRead / (Input + CacheRead + CacheWrite); false without input.
func (t Tokens) HitShare() (int, bool) {
	all := t.Input + t.CacheRead + t.CacheWrite
	if all <= 0 {
		return 0, false
	}
	return t.CacheRead * 100 / all, true
}

// Cost is what t cost at p, in dollars.
func (p Price) Cost(t Tokens) float64 {
	return (float64(t.Input)*p.Input + float64(t.Output)*p.Output +
		float64(t.CacheRead)*p.CacheRead + float64(t.CacheWrite)*p.CacheWrite) / 1e6
}

// anthropic is an Anthropic model's price from its input and output
// prices: a cache write (5-minute) costs 1.25 times the input, a cache
// read 0.1 times.
func anthropic(in, out float64) Price {
	return Price{Input: in, Output: out, CacheRead: in / 10, CacheWrite: in * 1.25}
}

// openai is an OpenAI model's price: input, cached input, output. OpenAI
// charges nothing extra for writing its cache.
func openai(in, cached, out float64) Price {
	return Price{Input: in, Output: out, CacheRead: cached, CacheWrite: in}
}

// builtin is the table as taken on Taken, by the model's base name. The
// Anthropic prices are those of a request of at most 200k input tokens
// (a longer one to Sonnet 4 and 4.5 costs more).
var builtin = map[string]Price{
	// Anthropic.
	"claude-opus-4-6":   anthropic(5, 25),
	"claude-opus-4-5":   anthropic(5, 25),
	"claude-opus-4-1":   anthropic(15, 75),
	"claude-opus-4-0":   anthropic(15, 75),
	"claude-opus-4":     anthropic(15, 75),
	"claude-sonnet-4-6": anthropic(3, 15),
	"claude-sonnet-4-5": anthropic(3, 15), // panto's default for anthropic
	"claude-sonnet-4-0": anthropic(3, 15),
	"claude-sonnet-4":   anthropic(3, 15),
	"claude-3-7-sonnet": anthropic(3, 15),
	"claude-3-5-sonnet": anthropic(3, 15),
	"claude-haiku-4-5":  anthropic(1, 5),
	"claude-3-5-haiku":  anthropic(0.8, 4),
	"claude-3-haiku":    anthropic(0.25, 1.25),
	"claude-3-opus":     anthropic(15, 75),

	// OpenAI.
	"gpt-4.1":      openai(2, 0.5, 8), // panto's default for openai
	"gpt-4.1-mini": openai(0.4, 0.1, 1.6),
	"gpt-4.1-nano": openai(0.1, 0.025, 0.4),
	"gpt-4o":       openai(2.5, 1.25, 10),
	"gpt-4o-mini":  openai(0.15, 0.075, 0.6),
	"gpt-5":        openai(1.25, 0.125, 10),
	"gpt-5-mini":   openai(0.25, 0.025, 2),
	"gpt-5-nano":   openai(0.05, 0.005, 0.4),
	"gpt-5.1":      openai(1.25, 0.125, 10),
	"gpt-5.2":      openai(1.75, 0.175, 14),
	"gpt-5.4":      openai(2.5, 0.25, 15),
	"gpt-5.4-mini": openai(0.75, 0.075, 4.5),
	"gpt-5.4-nano": openai(0.2, 0.02, 1.25),
	"gpt-5.5":      openai(5, 0.5, 30),
	"o3":           openai(2, 0.5, 8),
	"o4-mini":      openai(1.1, 0.275, 4.4),
}

// Builtin returns a copy of the built-in table, by base model name.
func Builtin() map[string]Price {
	out := make(map[string]Price, len(builtin))
	for m, p := range builtin {
		out[m] = p
	}
	return out
}

// Names returns the built-in table's model names, sorted.
func Names() []string {
	names := make([]string, 0, len(builtin))
	for m := range builtin {
		names = append(names, m)
	}
	slices.Sort(names)
	return names
}

// Table is the built-in table with config's prices over it. The zero
// Table is the built-in one.
type Table struct {
	over map[string]Price // by lower-case name
}

// New returns the built-in table with over (config's [prices."MODEL"],
// by model name) taking precedence. Names are compared without regard
// to case; of two names in over that differ only in case, the one that
// sorts last wins.
func New(over map[string]Price) Table {
	t := Table{over: make(map[string]Price, len(over))}
	for _, name := range slices.Sorted(maps.Keys(over)) {
		t.over[strings.ToLower(name)] = over[name]
	}
	return t
}

// snapshot is a dated snapshot's suffix: Anthropic's -20250929, OpenAI's
// -2025-04-14, or an alias's -latest.
var snapshot = regexp.MustCompile(`-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// Base is model without a dated snapshot's suffix:
// claude-sonnet-4-5-20250929 and claude-sonnet-4-5-latest are
// claude-sonnet-4-5, gpt-4.1-2025-04-14 is gpt-4.1.
func Base(model string) string { return snapshot.ReplaceAllString(model, "") }

// Lookup returns model's price, and false when none is known. It tries,
// in order: config's price of the exact name, config's of its base name
// (Base), the built-in price of the exact name, the built-in of the base
// name; names are compared without regard to case. A price of all zeros
// in config is a price (the model is free).
func (t Table) Lookup(model string) (Price, bool) {
	if model == "" {
		return Price{}, false
	}
	m := strings.ToLower(model)
	base := Base(m)
	for _, tab := range []map[string]Price{t.over, builtin} {
		if p, ok := tab[m]; ok {
			return p, true
		}
		if p, ok := tab[base]; ok {
			return p, true
		}
	}
	return Price{}, false
}

// Cost is what t cost on model, and false when its price is not known.
func (t Table) Cost(model string, tok Tokens) (float64, bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return p.Cost(tok), true
}

// Sum is the tokens a session's replies used, and what they cost.
type Sum struct {
	Usage sessionlog.Usage
	// CostUSD is the cost in dollars, when CostKnown: when every model
	// that used tokens has a known price (a partial sum would say less
	// than was spent).
	CostUSD   float64
	CostKnown bool
}

// Sum adds up the usage of a session's models (sessionlog.UsageByModel,
// Summary.Usage), each priced as its model's.
func (t Table) Sum(by []sessionlog.ModelUsage) Sum {
	var s Sum
	s.CostKnown = len(by) > 0
	for _, m := range by {
		s.Usage.Add(m.Usage)
		if m.Usage == (sessionlog.Usage{}) {
			continue
		}
		c, ok := t.Cost(m.Model, OfUsage(m.Provider, m.Usage))
		s.CostUSD += c
		s.CostKnown = s.CostKnown && ok
	}
	if !s.CostKnown {
		s.CostUSD = 0
	}
	return s
}
