package contextview

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/golden"
	"github.com/panto-dev/panto/internal/tokens"
	"github.com/panto-dev/panto/sessionlog"
)

// fixture is a recorded request and what the provider counted for it
// (testdata/*.json; each says in "about" where it comes from).
type fixture struct {
	About    string  `json:"about"`
	Provider string  `json:"provider"`
	Model    string  `json:"model"`
	Usage    *Counts `json:"usage"`
	Window   int     `json:"window"`
	System   []struct{ Text, Source, Key string }
	Tools    []sessionlog.Tools     `json:"tools"`
	Messages []conversation.Message `json:"messages"`
}

func load(t *testing.T, name string) Request {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var f fixture
	require.NoError(t, json.Unmarshal(data, &f))
	r := Request{Provider: f.Provider, Window: f.Window, Tools: f.Tools, Messages: f.Messages}
	for i, s := range f.System {
		r.System = append(r.System, conversation.SystemText{Text: s.Text, Source: s.Source, Key: s.Key, Index: i})
	}
	if f.Usage != nil {
		r.Last = &Usage{Provider: f.Provider, Model: f.Model, Counts: *f.Usage}
	}
	return r
}

// TestSharesSumToTheProvidersCountOnRecordedRequests takes requests whose
// real input count a provider reported (published, with the request
// whole; see each fixture's "about"): the parts' shares of the last
// request add up to that count exactly, by construction, and the raw
// estimate is as far from it as measured below.
//
// On Anthropic's two published counts the estimate is within 2%: the
// first (14 tokens) set its framing (4 a message, 3 the reply's start,
// nothing for the system field), the second (403, with a tool) then
// came out at -0.5% with nothing fitted to it. On OpenAI's, the framing
// is the cookbook's and the error is the text's: a token or two on each
// short sentence (+5.0% on 101 tokens); the forum's request was counted
// by gpt-3.5-turbo-0301, which took a token more a message than the
// framing of today's models panto estimates (-7.1%, 5 tokens on 70).
func TestSharesSumToTheProvidersCountOnRecordedRequests(t *testing.T) {
	for _, c := range []struct {
		file string
		real int
		// off is how far the raw estimate is from the real count, as
		// measured (so a change of the estimator shows here).
		off float64
	}{
		{"anthropic-docs-system.json", 14, 0},
		{"anthropic-docs-tools.json", 403, -0.005},
		{"openai-cookbook-tools.json", 101, 0.050},
		{"openai-community-chatml.json", 70, -0.071},
	} {
		t.Run(c.file, func(t *testing.T) {
			b := Compute(load(t, c.file))
			require.NotNil(t, b.Last)
			require.Equal(t, c.real, b.Last.Real)
			sum := 0
			for _, p := range b.Parts {
				require.NotNil(t, p.Share, "every part has its share: %s", p.Name)
				if p.Kind != Since {
					sum += *p.Share
				}
			}
			assert.Equal(t, c.real, sum, "the shares of the last request add up to the provider's count")
			var since int
			for _, p := range b.Parts {
				if p.Kind == Since {
					since = *p.Share
				}
			}
			assert.Equal(t, c.real+since, b.Scaled)
			got := float64(b.Last.Estimate-c.real) / float64(c.real)
			t.Logf("%s: estimated %d for a request the provider counted %d: %+.1f%%", c.file, b.Last.Estimate, c.real, got*100)
			assert.InDelta(t, c.off, got, 0.003, "the raw estimate moved: measure it again and say why")
			if strings.HasPrefix(c.file, "anthropic-") {
				assert.InDelta(t, 0, got, 0.02, "within 2%% of Anthropic's count")
			}
		})
	}
}

func TestTheBreakdownHasEveryPart(t *testing.T) {
	params := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	r := Request{
		System: []conversation.SystemText{
			{Text: strings.Repeat("seed ", 80), Source: "built-in default"},
			{Text: "# Tools from the tools extension\n\n## read\n\nRead files whole.", Key: "tools:guidance", Source: "extension tools"},
		},
		Tools: []sessionlog.Tools{{Extension: "tools", Tools: []sessionlog.ToolDef{
			{Name: "read", Description: "Read a file", Parameters: params},
			{Name: "ls", Description: "List a folder", Parameters: params},
		}}},
		Messages: []conversation.Message{
			conversation.SystemMessage("a system message among the messages", conversation.ModeAppend),
			conversation.UserText("[Summary of the earlier conversation, written when it was compacted]\n\nThey read main.go."),
			conversation.UserText("and now?"),
			{Role: conversation.RoleAssistant, Content: []conversation.Block{conversation.ToolUse("c1", "read", []byte(`{"path":"go.mod"}`))}},
			{Role: conversation.RoleTool, Content: []conversation.Block{conversation.ToolResult("c1", "module x\n", false)}},
		},
		Window: 1000,
	}
	b := Compute(r)
	var kinds []string
	for _, p := range b.Parts {
		kinds = append(kinds, string(p.Kind)+":"+p.Name)
		assert.Nil(t, p.Share, "no real count, no shares")
	}
	assert.Equal(t, []string{"system:block 1", "system:block 2", "tools:tools", "framing:framing", "summary:compaction", "messages:user", "messages:assistant", "messages:tool"}, kinds)
	assert.Equal(t, tokens.WireOf("anthropic").Overhead(true), b.Parts[3].Estimate, "the reply's start and the tool-use preamble")
	assert.Equal(t, 2, b.Parts[2].Count)
	assert.Equal(t, b.Parts[1].Estimate, b.Parts[2].Guidance, "the guidance is the extension's block")
	total := 0
	for _, p := range b.Parts {
		total += p.Estimate
	}
	assert.Equal(t, total, b.Estimate)
	require.NotNil(t, b.Left)
	assert.Equal(t, 1000-total, *b.Left)
	assert.Nil(t, b.Last)

	// With the last request's count: its reply on is what came since.
	r.Last = &Usage{Provider: "anthropic", Counts: Counts{InputTokens: 100, CacheReadTokens: 400, CacheWriteTokens: 7}}
	b = Compute(r)
	assert.Equal(t, 507, b.Last.Real, "Anthropic's input leaves out the cache")
	last := b.Parts[len(b.Parts)-1]
	assert.Equal(t, Since, last.Kind)
	assert.Equal(t, 2, last.Count, "the reply and the tool's result")
	require.NotNil(t, last.Share)
	assert.Equal(t, int(math.Round(float64(last.Estimate)*507/float64(b.Last.Estimate))), *last.Share)
	assert.Equal(t, 507+*last.Share, b.Scaled)
	assert.Equal(t, 1000-b.Scaled, *b.Left)
	assert.False(t, b.Last.Rebuilt)

	// The last request as sent, rebuilt from the log: its own estimate
	// (here without the guidance block and one tool), the shares still
	// those of the parts before the reply.
	r.Sent = &Sent{Messages: append([]conversation.Message{conversation.SystemMessage(r.System[0].Text, conversation.ModeAppend)}, r.Messages[1:3]...),
		Tools: r.Tools[0].Tools[:1]}
	rebuilt := Compute(r)
	assert.True(t, rebuilt.Last.Rebuilt)
	assert.Less(t, rebuilt.Last.Estimate, b.Last.Estimate)
	assert.Equal(t, tokens.Text(r.System[0].Text)+tokens.Tool("read", "Read a file", params)+
		tokens.WireOf("anthropic").Overhead(true)+tokens.Messages(r.Messages[1:3]), rebuilt.Last.Estimate)
	sum := 0
	for _, p := range rebuilt.Parts {
		if p.Kind != Since {
			sum += *p.Share
		}
	}
	assert.Equal(t, 507, sum)
}

func TestOpenAIsInputHoldsTheCachedPart(t *testing.T) {
	u := Counts{InputTokens: 1000, CacheReadTokens: 800}
	assert.Equal(t, 1000, Usage{Provider: "openai", Counts: u}.RealInput())
	assert.Equal(t, 1800, Usage{Provider: "anthropic", Counts: u}.RealInput())
}

func TestNoReplyLeftMeansNoShares(t *testing.T) {
	r := Request{
		System:   []conversation.SystemText{{Text: "seed", Source: "built-in default"}},
		Messages: []conversation.Message{conversation.UserText("[Summary of the earlier conversation, written when it was compacted]\n\nall of it")},
		Last:     &Usage{Provider: "anthropic", Counts: Counts{InputTokens: 50}},
	}
	b := Compute(r)
	assert.Equal(t, 50, b.Last.Real)
	assert.Zero(t, b.Last.Estimate)
	assert.Zero(t, b.Scaled)
	for _, p := range b.Parts {
		assert.Nil(t, p.Share)
	}
	var out bytes.Buffer
	Write(&out, b)
	assert.Contains(t, out.String(), "cannot be told apart")
}

func TestWriteGolden(t *testing.T) {
	for _, name := range []string{"anthropic-docs-tools", "openai-cookbook-tools", "openai-community-chatml"} {
		var out bytes.Buffer
		Write(&out, Compute(load(t, name+".json")))
		golden.Check(t, filepath.Join("testdata", name+".golden.txt"), out.Bytes())
	}
}

func TestLastUsageReadsTheReplysEntry(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	lines := []string{
		`{"type":"session","version":1,"id":"s","created":"2026-01-01T00:00:00Z","cwd":"/p"}`,
		`{"type":"message","id":"a1","time":"2026-01-01T00:00:00Z","message":{"role":"system","mode":"append","content":[{"type":"text","text":"seed"}]}}`,
		`{"type":"model_change","id":"a2","parent_id":"a1","time":"2026-01-01T00:00:00Z","provider":"anthropic","model":"claude-x"}`,
		`{"type":"message","id":"a3","parent_id":"a2","time":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`,
		`{"type":"message","id":"a4","parent_id":"a3","time":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]},"usage":{"input_tokens":12,"output_tokens":3,"cache_read_tokens":100}}`,
		`{"type":"message","id":"a5","parent_id":"a4","time":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"more"}]}}`,
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	tree, err := sessionlog.Scan(path)
	require.NoError(t, err)
	u, ok, err := LastUsage(path, tree, "")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, Usage{Provider: "anthropic", Model: "claude-x", Reply: "a4", Counts: Counts{InputTokens: 12, OutputTokens: 3, CacheReadTokens: 100}}, u)

	// Read from the end a block at a time: a reply far from it, on a
	// line across blocks, is found too.
	big := strings.Repeat("x", 3*readBlock/2)
	long := append([]string(nil), lines[:4]...)
	long[3] = strings.Replace(long[3], `"text":"hi"`, `"text":"`+big+`"`, 1)
	long = append(long, strings.Replace(lines[4], `"text":"hello"`, `"text":"`+big+`"`, 1),
		strings.Replace(lines[5], `"text":"more"`, `"text":"`+big+big+`"`, 1))
	longPath := filepath.Join(dir, "long.jsonl")
	require.NoError(t, os.WriteFile(longPath, []byte(strings.Join(long, "\n")+"\n"), 0o600))
	longTree, err := sessionlog.Scan(longPath)
	require.NoError(t, err)
	lu, ok, err := LastUsage(longPath, longTree, "")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, u, lu)

	// Before the reply: no request recorded.
	_, ok, err = LastUsage(path, tree, "a3")
	require.NoError(t, err)
	assert.False(t, ok)

	// A reply without usage (a log of before): none either.
	lines[4] = `{"type":"message","id":"a4","parent_id":"a3","time":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]}}`
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	tree, err = sessionlog.Scan(path)
	require.NoError(t, err)
	_, ok, err = LastUsage(path, tree, "")
	require.NoError(t, err)
	assert.False(t, ok)
}
