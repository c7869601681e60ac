package openai

import (
	"encoding/json"
	"github.com/panto-dev/panto/internal/golden"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	c "github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// streamFixtures lists every testdata/streams/*.sse file. A success
// fixture has a golden <name>.golden.json holding the Reply and the Deltas;
// the SDK cross-check (sdk_test.go) finds success fixtures by that file.
var streamFixtures = []struct {
	name    string
	wantErr func(t *testing.T, err error) // nil: success
}{
	{name: "text"},
	{name: "usage"},
	{name: "parallel_tools"},
	{name: "reasoning_content"},
	{name: "reasoning_field"},
	{name: "error_after_content", wantErr: func(t *testing.T, err error) {
		var apiErr *serializers.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, &serializers.APIError{Status: 200, Type: "rate_limit_exceeded",
			Message: "Rate limit reached for gpt-4o-mini."}, apiErr)
		require.ErrorContains(t, err, "openai: decode stream: line 5: provider error (HTTP 200, rate_limit_exceeded)")
	}},
	{name: "truncated", wantErr: func(t *testing.T, err error) {
		require.ErrorIs(t, err, serializers.ErrTruncated)
		require.ErrorContains(t, err, "no data: [DONE]; last event at line 5")
	}},
	{name: "cut_mid_line", wantErr: func(t *testing.T, err error) {
		require.ErrorIs(t, err, serializers.ErrTruncated)
		require.ErrorContains(t, err, "line 5:")
		require.ErrorContains(t, err, "cut inside a chunk")
	}},
}

// streamGolden is what a success fixture's golden file holds.
type streamGolden struct {
	Reply  serializers.Reply
	Deltas []serializers.Delta
}

func decodeFixture(t *testing.T, name string) (serializers.Reply, []serializers.Delta, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "streams", name+".sse"))
	require.NoError(t, err)
	defer f.Close()
	var deltas []serializers.Delta
	reply, err := DecodeStream(f, func(d serializers.Delta) { deltas = append(deltas, d) })
	return reply, deltas, err
}

func TestDecodeStreamFixtures(t *testing.T) {
	t.Parallel()
	for _, tt := range streamFixtures {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reply, deltas, err := decodeFixture(t, tt.name)
			if tt.wantErr != nil {
				require.Error(t, err)
				require.Equal(t, serializers.Reply{}, reply, "no Reply with an error")
				tt.wantErr(t, err)
				return
			}
			require.NoError(t, err)
			require.NoError(t, reply.Message.Validate(), "the reply must be a valid conversation message")
			got, err := json.MarshalIndent(streamGolden{reply, deltas}, "", "  ")
			require.NoError(t, err)
			golden.Check(t, filepath.Join("testdata", "streams", tt.name+".golden.json"), append(got, '\n'))

			// The deltas add up to the reply.
			var text, thinking string
			args := map[int]string{}
			for _, d := range deltas {
				switch d.Kind {
				case serializers.DeltaText:
					text += d.Text
				case serializers.DeltaThinking:
					thinking += d.Text
				case serializers.DeltaToolInput:
					args[d.Index] += d.Text
				}
			}
			require.Equal(t, reply.Message.Text(), text)
			calls := 0
			for _, b := range reply.Message.Content {
				switch b.Type {
				case c.TypeThinking:
					require.Equal(t, b.Thinking, thinking)
				case c.TypeToolUse: // the fixtures number their calls 0, 1, ...
					want := args[calls]
					if want == "" {
						want = "{}"
					}
					require.Equal(t, want, string(b.Input))
					calls++
				}
			}
		})
	}
}

func TestStreamFixturesListed(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	require.NoError(t, err)
	var onDisk, listed []string
	for _, f := range files {
		onDisk = append(onDisk, strings.TrimSuffix(filepath.Base(f), ".sse"))
	}
	for _, f := range streamFixtures {
		listed = append(listed, f.name)
		if golden.Updating() {
			continue // the goldens are being written in parallel
		}
		_, err := os.Stat(filepath.Join("testdata", "streams", f.name+".golden.json"))
		require.Equal(t, f.wantErr == nil, err == nil, "%s: a golden file exactly for success fixtures", f.name)
	}
	slices.Sort(onDisk)
	slices.Sort(listed)
	require.Equal(t, onDisk, listed)
}

// TestDecodeStreamParallelTools spells out what the golden file of the
// parallel fixture must say, so that -update cannot bless a regression.
func TestDecodeStreamParallelTools(t *testing.T) {
	t.Parallel()
	reply, deltas, err := decodeFixture(t, "parallel_tools")
	require.NoError(t, err)
	require.Equal(t, []c.Block{
		c.ToolUse("call_a1", "get_weather", json.RawMessage(`{"city": "Paris, \"FR\""}`)),
		c.ToolUse("call_b2", "get_time", json.RawMessage(`{"tz":"Europe/Rome"}`)),
		c.ToolUse("call_c3", "list_files", json.RawMessage(`{}`)),
	}, reply.Message.Content)
	require.Equal(t, serializers.StopToolUse, reply.StopReason)
	require.Equal(t, "tool_calls", reply.RawStopReason)
	require.Equal(t, serializers.Usage{InputTokens: 310, OutputTokens: 64}, reply.Usage)
	require.Equal(t, "chatcmpl-tools1", reply.ID)
	require.Equal(t, "gpt-4o-2024-08-06", reply.Model)

	var starts []serializers.Delta
	for _, d := range deltas {
		if d.Kind == serializers.DeltaToolStart {
			starts = append(starts, d)
		}
	}
	require.Equal(t, []serializers.Delta{
		{Kind: serializers.DeltaToolStart, Index: 0, ToolID: "call_a1", ToolName: "get_weather"},
		{Kind: serializers.DeltaToolStart, Index: 1, ToolID: "call_b2", ToolName: "get_time"},
		{Kind: serializers.DeltaToolStart, Index: 2, ToolID: "call_c3", ToolName: "list_files"},
	}, starts)
	require.Equal(t, serializers.Delta{Kind: serializers.DeltaToolInput, Index: 1, Text: `{"tz":`}, deltas[3],
		"fragments arrive interleaved, each with its call's index")
}

func TestDecodeStreamReasoning(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]struct{ thinking, text string }{
		"reasoning_content": {"The user asks 2+2. That is 4.", "2 + 2 = 4."},
		"reasoning_field":   {"Okay, greeting.", "Hi there!"},
	} {
		reply, _, err := decodeFixture(t, name)
		require.NoError(t, err)
		require.Equal(t, []c.Block{c.Thinking(want.thinking, ""), c.Text(want.text)}, reply.Message.Content, name)
		require.Equal(t, serializers.StopEndTurn, reply.StopReason)
	}
	reply, _, err := decodeFixture(t, "reasoning_content")
	require.NoError(t, err)
	require.Equal(t, serializers.Usage{InputTokens: 12, OutputTokens: 40, ReasoningTokens: 31}, reply.Usage)
	reply, _, err = decodeFixture(t, "usage")
	require.NoError(t, err)
	require.Equal(t, serializers.Usage{InputTokens: 1200, OutputTokens: 2, CacheReadTokens: 1024}, reply.Usage)
	require.Equal(t, serializers.StopMaxTokens, reply.StopReason)
}

// sseOf makes a stream of data events from chunks, ended by [DONE].
func sseOf(chunks ...string) string {
	var b strings.Builder
	for _, ch := range chunks {
		b.WriteString("data: " + ch + "\n\n")
	}
	return b.String() + "data: [DONE]\n\n"
}

func TestDecodeStreamCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []c.Block
		stop    serializers.StopReason
		wantErr string
	}{
		{
			name: "tool calls without index (Gemini)",
			in: sseOf(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","type":"function","function":{"name":"g","arguments":"{"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"}"}}]},"finish_reason":"tool_calls"}]}`),
			want: []c.Block{c.ToolUse("a", "f", json.RawMessage(`{"x":1}`)), c.ToolUse("b", "g", json.RawMessage(`{}`))},
			stop: serializers.StopToolUse,
		},
		{
			name: "index -1 means the one call; missing id is made up",
			in:   sseOf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"name":"f","arguments":""}}]},"finish_reason":"tool_calls"}]}`),
			want: []c.Block{c.ToolUse("panto_call_0", "f", json.RawMessage(`{}`))},
			stop: serializers.StopToolUse,
		},
		{
			name: "a later fragment repeating id and name does not double them",
			in: sseOf(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"a\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":":2}"}}]}}]}`),
			want: []c.Block{c.ToolUse("a", "f", json.RawMessage(`{"a":2}`))},
			stop: serializers.StopOther,
		},
		{
			name: "a name split across fragments is joined",
			in: sseOf(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"re","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"ad","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`),
			want: []c.Block{c.ToolUse("a", "read", json.RawMessage(`{}`))},
			stop: serializers.StopToolUse,
		},
		{
			name: "a name repeated as it grows is taken whole",
			in: sseOf(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"ba","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"bash","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`),
			want: []c.Block{c.ToolUse("a", "bash", json.RawMessage(`{}`))},
			stop: serializers.StopToolUse,
		},
		{
			name: "other choices are ignored",
			in:   sseOf(`{"choices":[{"index":1,"delta":{"content":"B"},"finish_reason":"length"},{"index":0,"delta":{"content":"A"},"finish_reason":"stop"}]}`),
			want: []c.Block{c.Text("A")},
			stop: serializers.StopEndTurn,
		},
		{
			name: "refusal",
			in:   sseOf(`{"choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":"stop"}]}`),
			want: []c.Block{c.Text("I can't help with that.")},
			stop: serializers.StopRefusal,
		},
		{
			name: "what follows [DONE] is not read",
			in:   sseOf(`{"choices":[{"index":0,"delta":{"content":"A"},"finish_reason":"stop"}]}`) + "data: {not json\n\n",
			want: []c.Block{c.Text("A")},
			stop: serializers.StopEndTurn,
		},
		{
			name: "[DONE] without its blank line",
			in:   "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"A\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]",
			want: []c.Block{c.Text("A")},
			stop: serializers.StopEndTurn,
		},
		{
			name: "empty stream with [DONE]",
			in:   "data: [DONE]\n\n",
			want: []c.Block{},
			stop: serializers.StopOther,
		},
		{
			name:    "invalid arguments name the tool call",
			in:      sseOf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_9","function":{"name":"grep","arguments":"{\"q\":"}}]},"finish_reason":"tool_calls"}]}`),
			wantErr: `openai: decode stream: tool call 0 (grep, id call_9): arguments are not valid JSON: {"q":`,
		},
		{
			name:    "arguments not an object",
			in:      sseOf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_9","function":{"name":"grep","arguments":"[1]"}}]}}]}`),
			wantErr: `openai: decode stream: tool call 0 (grep, id call_9): arguments are not a JSON object: [1]`,
		},
		{
			name:    "tool call without a name",
			in:      sseOf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"id":"call_9","function":{"arguments":"{}"}}]}}]}`),
			wantErr: `openai: decode stream: tool call 3 (id call_9): no function name`,
		},
		{
			name:    "negative index",
			in:      sseOf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-2}]}}]}`),
			wantErr: `openai: decode stream: line 1: tool call index -2`,
		},
		{
			name:    "invalid chunk mid-stream is not truncation",
			in:      sseOf(`{"choices":[`, `{}`),
			wantErr: `openai: decode stream: line 1: invalid chunk: unexpected end of JSON input`,
		},
		{
			name:    "error event",
			in:      "event: error\ndata: {\"message\":\"overloaded\",\"type\":\"server_error\"}\n\n",
			wantErr: `openai: decode stream: line 1: provider error (HTTP 200, server_error): overloaded`,
		},
		{
			name:    "error event that is not JSON",
			in:      "event: error\ndata: overloaded\n\n",
			wantErr: `openai: decode stream: line 1: provider error (HTTP 200): overloaded`,
		},
		{
			name:    "bare error string",
			in:      sseOf(`{"error":"model is loading"}`),
			wantErr: `openai: decode stream: line 1: provider error (HTTP 200): model is loading`,
		},
		{
			name:    "empty input",
			in:      "",
			wantErr: `openai: decode stream: stream ended before the reply was complete (empty stream)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reply, err := DecodeStream(strings.NewReader(tt.in), nil)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, reply.Message.Content)
			require.Equal(t, c.RoleAssistant, reply.Message.Role)
			require.Equal(t, tt.stop, reply.StopReason)
		})
	}
}

func TestDecodeStreamTruncatedErrors(t *testing.T) {
	t.Parallel()
	full, err := os.ReadFile(filepath.Join("testdata", "streams", "parallel_tools.sse"))
	require.NoError(t, err)
	end := strings.LastIndex(string(full), "data: [DONE]")
	// Every cut before [DONE] is complete is truncation, never a Reply.
	for n := 0; n < end+len("data: [DO"); n += 7 {
		reply, err := DecodeStream(strings.NewReader(string(full[:n])), nil)
		require.ErrorIs(t, err, serializers.ErrTruncated, "cut at %d", n)
		require.Equal(t, serializers.Reply{}, reply)
	}
	_, err = DecodeStream(strings.NewReader(string(full)), nil)
	require.NoError(t, err)
}

// A connection closed in the middle of the body reads as io's
// unexpected EOF, not as the end of the stream: that is truncation too
// (the front ends mark the half reply cut; it read as another error).
func TestDecodeStreamCutConnectionIsTruncation(t *testing.T) {
	t.Parallel()
	full, err := os.ReadFile(filepath.Join("testdata", "streams", "parallel_tools.sse"))
	require.NoError(t, err)
	r := io.MultiReader(strings.NewReader(string(full[:len(full)/2])), iotest.ErrReader(io.ErrUnexpectedEOF))
	_, err = DecodeStream(r, nil)
	require.ErrorIs(t, err, serializers.ErrTruncated)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}
