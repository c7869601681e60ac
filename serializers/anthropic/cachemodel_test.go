package anthropic_test

// A fake Anthropic's accounting of cached prefixes, for the figures in
// docs/system-prompt.md: how much of a long session's input is billed at
// the cache-read price, with panto's marks and without.
//
//	go test ./serializers/anthropic/ -run TestCacheModel -v
//
// (without -race: under the race detector it models 40 turns, not 200).

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/tokens"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
)

// The fake's rules, as Anthropic documents its prompt cache:
//   - the prefix runs tools, system, messages, block by block;
//   - a request reads the longest prefix that ends at one of its
//     breakpoints, or at one of the lookback blocks before one, and that
//     an earlier request wrote;
//   - it writes the prefix at each of its breakpoints beyond what it read
//     (only prefixes of minCacheTokens or more are cached), the tokens
//     from the read prefix to its last breakpoint billed once, at the
//     write price;
//   - the rest is billed at the base price.
//
// Entries never expire here: the turns are taken to follow each other
// within the cache's five minutes, each read renewing it.
const (
	lookback       = 20
	minCacheTokens = 1024
)

// unit is one block of a request's prefix.
type unit struct {
	hash   [32]byte // of the prefix up to and with this block, marks aside
	tokens int      // of the prefix up to and with this block
	mark   bool
	// rolling is mark as a two-mark scheme would send it: only the
	// system mark and the last message mark.
	rolling bool
}

// prefixUnits cuts a request body into its prefix blocks.
func prefixUnits(t *testing.T, body []byte) []unit {
	t.Helper()
	var req struct {
		Tools    []map[string]any `json:"tools"`
		System   any              `json:"system"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	var out []unit
	h := sha256.New()
	total := 0
	add := func(kind string, v map[string]any) {
		_, marked := v["cache_control"]
		delete(v, "cache_control")
		b, err := json.Marshal(v)
		require.NoError(t, err)
		h.Write([]byte(kind))
		h.Write(b)
		total += tokens.Text(string(b))
		var u unit
		copy(u.hash[:], h.Sum(nil))
		u.tokens, u.mark = total, marked
		out = append(out, u)
	}
	for _, tool := range req.Tools {
		add("tool", tool)
	}
	switch s := req.System.(type) {
	case string:
		add("system", map[string]any{"type": "text", "text": s})
	case []any:
		for _, blk := range s {
			add("system", blk.(map[string]any))
		}
	}
	firstMessage := len(out)
	for i, m := range req.Messages {
		for j, blk := range m.Content {
			kind := "block"
			if j == 0 {
				kind = fmt.Sprintf("message %d %s", i, m.Role)
			}
			add(kind, blk)
		}
	}
	last := -1
	for i := range out {
		out[i].rolling = out[i].mark && i < firstMessage
		if i >= firstMessage && out[i].mark {
			last = i
		}
	}
	if last >= 0 {
		out[last].rolling = true
	}
	return out
}

// fakeCache is the provider's store of written prefixes and its bill.
type fakeCache struct {
	written                      map[[32]byte]bool
	read, write, base, marks, rq int
	maxMarks                     int
}

// request bills one request; with rolling the units' rolling marks
// count, else their marks.
func (c *fakeCache) request(units []unit, rolling bool) {
	if c.written == nil {
		c.written = map[[32]byte]bool{}
	}
	if rolling {
		units = slices.Clone(units)
		for i := range units {
			units[i].mark = units[i].rolling
		}
	}
	c.rq++
	hit, last := -1, -1
	n := 0
	for bp, u := range units {
		if !u.mark {
			continue
		}
		n++
		last = bp
		for k := bp; k >= 0 && k > bp-lookback; k-- {
			if c.written[units[k].hash] {
				hit = max(hit, k)
				break
			}
		}
	}
	c.marks += n
	c.maxMarks = max(c.maxMarks, n)
	tokensAt := func(i int) int {
		if i < 0 {
			return 0
		}
		return units[i].tokens
	}
	total := tokensAt(len(units) - 1)
	c.read += tokensAt(hit)
	if last > hit && tokensAt(last) >= minCacheTokens {
		c.write += tokensAt(last) - tokensAt(hit)
		for bp := hit + 1; bp <= last; bp++ {
			if units[bp].mark && units[bp].tokens >= minCacheTokens {
				c.written[units[bp].hash] = true
			}
		}
		c.base += total - tokensAt(last)
	} else {
		c.base += total - tokensAt(hit)
	}
}

func (c *fakeCache) input() int { return c.read + c.write + c.base }

// readShare is the share of input tokens billed at the cache-read price.
func (c *fakeCache) readShare() float64 { return float64(c.read) / float64(c.input()) }

// relativeCost is the input's cost against sending it all uncached, at
// Anthropic's multipliers: a read 0.1, a (five-minute) write 1.25.
func (c *fakeCache) relativeCost() float64 {
	return (0.1*float64(c.read) + 1.25*float64(c.write) + float64(c.base)) / float64(c.input())
}

// filler is n bytes of text that does not repeat within a session.
func filler(seed string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %d: the quick brown fox checks the build. ", seed, i)
	}
	return b.String()[:n]
}

// modelSession is the requests of a 200-turn session with a prefix
// (tools and system) of about 20k tokens: each turn a user message, zero
// to three tool steps (every tenth turn a step of twelve parallel calls,
// beyond the lookback), and a reply. Every step is one request. Where the
// conversation outgrows compactAt tokens (a 200k window less the prefix
// and room for the reply) it is compacted, as panto would.
func modelSession(turns int) (tools []serializers.Tool, system string, requests [][]conversation.Message, compactions int) {
	for i := range 12 {
		tools = append(tools, serializers.Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Description: filler(fmt.Sprintf("tool %d", i), 4000),
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		})
	}
	system = filler("system", 32000)
	msgs := []conversation.Message{sys(system, appendM)}
	for turn := range turns {
		if tokens.Messages(msgs) > compactAt {
			// Compaction: a summary in place of the history.
			msgs = []conversation.Message{sys(system, appendM),
				user(filler(fmt.Sprintf("summary %d", turn), 8000)), asst("Understood.")}
			compactions++
		}
		msgs = append(msgs, user(filler(fmt.Sprintf("ask %d", turn), 200+turn%5*150)))
		steps := turn % 4
		for step := range steps {
			requests = append(requests, msgs)
			calls := 1 + (turn+step)%3
			if turn%10 == 9 && step == 0 {
				calls = 12
			}
			var use, res []conversation.Block
			for c := range calls {
				id := fmt.Sprintf("toolu_%d_%d_%d", turn, step, c)
				use = append(use, conversation.ToolUse(id, "tool_01", json.RawMessage(`{"path":"x.go"}`)))
				res = append(res, conversation.ToolResult(id, filler(id, 1200+c*400), false))
			}
			msgs = append(msgs[:len(msgs):len(msgs)],
				msg(conversation.RoleAssistant, append([]conversation.Block{conversation.Text("Looking.")}, use...)...),
				msg(conversation.RoleTool, res...))
		}
		requests = append(requests, msgs)
		msgs = append(msgs[:len(msgs):len(msgs)], asst(filler(fmt.Sprintf("reply %d", turn), 800)))
	}
	return tools, system, requests, compactions
}

// compactAt is when modelSession compacts: 0.8 of a 200k window, less
// the prefix.
const compactAt = 160000 - 20000

func TestCacheModel(t *testing.T) {
	t.Parallel()
	turns := 200
	if raceEnabled {
		turns = 40 // the same checks, in a race run's time
	}
	tools, system, requests, compactions := modelSession(turns)
	prefix := 0
	for _, tool := range tools {
		prefix += tokens.Tool(tool.Name, tool.Description, tool.Parameters)
	}
	prefix += tokens.Text(system)

	var unmarked, twoMarks, panto fakeCache
	for _, msgs := range requests {
		req := serializers.Request{Model: model, Tools: tools, Messages: msgs, Cache: cached}
		marked, err := anthropic.EncodeRequest(req, anthropic.Options{})
		require.NoError(t, err)
		units := prefixUnits(t, marked)
		panto.request(units, false)
		twoMarks.request(units, true)
		// Unmarked, the body is the same blocks without a mark (as
		// TestCacheMarksOnlyAdd checks).
		req.Cache = serializers.Cache{}
		plain, err := anthropic.EncodeRequest(req, anthropic.Options{})
		require.NoError(t, err)
		require.NotContains(t, string(plain), "cache_control")
		for i := range units {
			units[i].mark = false
		}
		unmarked.request(units, false)
	}
	t.Logf("%d turns, %d requests, %d compactions, prefix (tools+system) ~%d tokens, %d input tokens", turns, len(requests), compactions, prefix, panto.input())
	for _, r := range []struct {
		name string
		c    *fakeCache
	}{{"no marks", &unmarked}, {"system + rolling (2 marks)", &twoMarks}, {"panto (system, rolling, previous when far)", &panto}} {
		t.Logf("%-44s read %5.1f%%  write %5.1f%%  base %5.1f%%  cost %5.1f%% of uncached  marks/request %.2f (max %d)",
			r.name, 100*r.c.readShare(), 100*float64(r.c.write)/float64(r.c.input()), 100*float64(r.c.base)/float64(r.c.input()),
			100*r.c.relativeCost(), float64(r.c.marks)/float64(r.c.rq), r.c.maxMarks)
	}
	require.InDelta(t, 20000, prefix, 2000, "the model's prefix should be about 20k tokens")
	require.Zero(t, unmarked.read, "Anthropic caches only what a request marks")
	require.Greater(t, panto.readShare(), 0.9)
	require.Greater(t, panto.read, twoMarks.read, "the previous request's mark must pay for itself")
	require.LessOrEqual(t, panto.maxMarks, 3)
}
