package sessionlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// A reply's usage is written as the entry's "usage" object, after the
// message, and read back the same by Read, the fast decoder and the
// summary.
func TestUsageRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	u1 := Usage{InputTokens: 1200, OutputTokens: 30, CacheReadTokens: 9000, CacheWriteTokens: 400, ReasoningTokens: 7}
	u2 := Usage{InputTokens: 5, OutputTokens: 1}
	// A tool call whose input has a "usage" object of its own, last in
	// the message: not the entry's.
	call := conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
		conversation.ToolUse("c1", "t", []byte(`{"usage":{"input_tokens":99}}`))}}
	got, err := w.Append(
		ModelChangeEntry("anthropic", "claude-sonnet-4-5"),
		MessageEntry(conversation.UserText("q")),
		ReplyEntry(conversation.AssistantText("a"), &u1),
		ReplyEntry(call, nil),
		ReplyEntry(conversation.AssistantText("b"), &Usage{}), // nothing known: none written
		ModelChangeEntry("anthropic", "claude-haiku-4-5"),
		ReplyEntry(conversation.AssistantText("c"), &u2),
	)
	require.NoError(t, err)
	// Back before the switch: a branch on the first model.
	_, err = w.Append(ReplyEntry(conversation.AssistantText("d"), &u2).WithParent(got[1].ID))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	require.True(t, strings.HasSuffix(lines[3], `,"usage":{"input_tokens":1200,"output_tokens":30,"cache_read_tokens":9000,"cache_write_tokens":400,"reasoning_tokens":7}}`), lines[3])
	require.NotContains(t, lines[5], `"usage":{}`)

	log, err := Read(path)
	require.NoError(t, err)
	require.Equal(t, &u1, log.Entries[2].Usage)
	require.Nil(t, log.Entries[3].Usage)
	require.Nil(t, log.Entries[4].Usage)
	require.Equal(t, &u2, log.Entries[6].Usage)
	first := u1
	first.Add(u2)
	want := []ModelUsage{{"anthropic", "claude-sonnet-4-5", first}, {"anthropic", "claude-haiku-4-5", u2}}
	require.Equal(t, want, UsageByModel(log.Entries))

	sum, err := Summarize(path)
	require.NoError(t, err)
	require.Equal(t, want, sum.Usage)
	sum, err = CachedSummary(path) // written
	require.NoError(t, err)
	require.Equal(t, want, sum.Usage)
	sum, err = CachedSummary(path) // read from the sidecar
	require.NoError(t, err)
	require.Equal(t, want, sum.Usage)
}

// The fast decoder reads a usage as encoding/json does, and leaves what
// it does not take to it.
func TestFastDecodeUsage(t *testing.T) {
	t.Parallel()
	msg := `{"role":"assistant","content":[{"type":"text","text":"a"}]}`
	for _, tc := range []struct {
		usage string
		fast  bool
		want  *Usage
	}{
		{`{"input_tokens":3,"output_tokens":4}`, true, &Usage{InputTokens: 3, OutputTokens: 4}},
		{`{ "cache_read_tokens" : 0 , "reasoning_tokens":12 }`, true, &Usage{ReasoningTokens: 12}},
		{`{}`, true, nil},
		{`{"input_tokens":-3}`, false, &Usage{InputTokens: -3}},
		{`{"input_tokens":1e3}`, false, nil},
		{`{"input_tokens":012}`, false, nil},
		{`{"Input_Tokens":5}`, false, &Usage{InputTokens: 5}},
		{`{"input_tokens":1,"input_tokens":2}`, false, &Usage{InputTokens: 2}},
		{`{"other":1}`, false, nil},
		{`null`, false, nil},
	} {
		l := line("e1", "", msg)
		l = l[:len(l)-1] + `,"usage":` + tc.usage + `}`
		var fd fastDecoder
		var w wireEntry
		require.Equal(t, tc.fast, fd.entry([]byte(l), &w), tc.usage)
		var e Entry
		err := decodeEntry(new(fastDecoder), []byte(l), &e, new(conversation.Message))
		if tc.want == nil && (strings.Contains(tc.usage, "1e3") || strings.Contains(tc.usage, "012")) {
			require.Error(t, err, tc.usage)
			continue
		}
		require.NoError(t, err, tc.usage)
		require.Equal(t, tc.want, e.Usage, tc.usage)
	}
}
