package anthropic_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
)

// streamFixture is one testdata/streams/<name>.sse file and what decoding
// it must give: the golden reply (and deltas) when wantErr is empty, an
// error containing wantErr otherwise.
type streamFixture struct {
	name      string
	wantErr   string
	truncated bool                  // the error wraps serializers.ErrTruncated
	apiErr    *serializers.APIError // the error is this APIError
	check     func(t *testing.T, r serializers.Reply, deltas []serializers.Delta)
}

var streamFixtures = []streamFixture{
	{name: "text_only", check: func(t *testing.T, r serializers.Reply, deltas []serializers.Delta) {
		require.Equal(t, "Hello, world! \"quoted\" é", r.Message.Text())
		require.Equal(t, serializers.StopEndTurn, r.StopReason)
		require.Equal(t, serializers.Usage{InputTokens: 25, OutputTokens: 15}, r.Usage, "output_tokens of message_delta replaces the placeholder")
		require.Equal(t, "msg_01TextOnly", r.ID)
		require.Len(t, deltas, 2)
	}},
	{name: "thinking_text_tool", check: func(t *testing.T, r serializers.Reply, deltas []serializers.Delta) {
		require.Equal(t, []conversation.BlockType{conversation.TypeThinking, conversation.TypeText, conversation.TypeToolUse}, blockTypes(r))
		require.Equal(t, "The user wants the weather.\nI will call get_weather.", r.Message.Content[0].Thinking)
		require.Equal(t, "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxx/+sig==", r.Message.Content[0].Signature)
		require.JSONEq(t, `{"city":"Paris","unit":"celsius"}`, string(r.Message.Content[2].Input))
		require.Equal(t, serializers.StopToolUse, r.StopReason)
		require.Equal(t, serializers.Usage{InputTokens: 472, OutputTokens: 89, CacheWriteTokens: 120, CacheReadTokens: 2048}, r.Usage,
			"cumulative usage: latest values win, a null keeps the earlier value")
		require.Contains(t, deltas, serializers.Delta{Kind: serializers.DeltaToolStart, Index: 2, ToolID: "toolu_01WeatherParis", ToolName: "get_weather"})
		var input strings.Builder
		for _, d := range deltas {
			if d.Kind == serializers.DeltaToolInput {
				require.NotEmpty(t, d.Text, "empty fragments are not passed on")
				input.WriteString(d.Text)
			}
		}
		require.Equal(t, string(r.Message.Content[2].Input), input.String())
	}},
	{name: "two_tools", check: func(t *testing.T, r serializers.Reply, _ []serializers.Delta) {
		uses := r.Message.ToolUses()
		require.Len(t, uses, 2)
		require.Equal(t, `{}`, string(uses[0].Input), "no fragments: the empty object")
		require.Equal(t, `{"path":"go.mod"}`, string(uses[1].Input))
	}},
	{name: "pings_anywhere", check: func(t *testing.T, r serializers.Reply, _ []serializers.Delta) {
		require.Equal(t, "pong", r.Message.Text())
		require.Equal(t, serializers.StopMaxTokens, r.StopReason)
	}},
	{name: "unknown_event", check: func(t *testing.T, r serializers.Reply, _ []serializers.Delta) {
		require.Equal(t, []conversation.BlockType{conversation.TypeText}, blockTypes(r), "server blocks are skipped")
		require.Equal(t, "panto is an agent host.", r.Message.Text())
		require.Equal(t, serializers.StopOther, r.StopReason)
		require.Equal(t, "something_new", r.RawStopReason)
	}},
	{name: "redacted_thinking", check: func(t *testing.T, r serializers.Reply, _ []serializers.Delta) {
		require.Equal(t, conversation.RedactedThinking("EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabSyKg=="), r.Message.Content[0])
		require.Equal(t, serializers.StopRefusal, r.StopReason)
	}},
	{name: "error_after_content", wantErr: "overloaded_error",
		apiErr: &serializers.APIError{Status: 200, Type: "overloaded_error", Message: "Overloaded"}},
	{name: "truncated", wantErr: "no message_stop", truncated: true},
	{name: "cut_mid_line", wantErr: "line 10: stream ended before the reply was complete: content_block_delta event cut short", truncated: true},
	{name: "delta_before_start", wantErr: "line 4: content_block_delta: block 0 was never started"},
	{name: "bad_tool_json", wantErr: "content_block_stop: block 1: tool_use toolu_01Bad: input: not valid JSON"},
}

func blockTypes(r serializers.Reply) []conversation.BlockType {
	var out []conversation.BlockType
	for _, b := range r.Message.Content {
		out = append(out, b.Type)
	}
	return out
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(streamsDir, name+".sse"))
	require.NoError(t, err)
	return b
}

// decodeFixture decodes a stream, collecting the deltas.
func decodeStream(in []byte) (serializers.Reply, []serializers.Delta, error) {
	var deltas []serializers.Delta
	r, err := anthropic.DecodeStream(bytes.NewReader(in), func(d serializers.Delta) { deltas = append(deltas, d) })
	return r, deltas, err
}

// replyGolden is what a success fixture's golden file holds.
type replyGolden struct {
	Reply  serializers.Reply   `json:"reply"`
	Deltas []serializers.Delta `json:"deltas,omitempty"`
}

func TestDecodeStreamFixtures(t *testing.T) {
	t.Parallel()
	for _, fx := range streamFixtures {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			in := readFixture(t, fx.name)
			reply, deltas, err := decodeStream(in)
			if fx.wantErr != "" {
				require.Error(t, err)
				require.Equal(t, serializers.Reply{}, reply, "an error never comes with a reply")
				require.Contains(t, err.Error(), fx.wantErr)
				require.Equal(t, fx.truncated, errors.Is(err, serializers.ErrTruncated), "wraps ErrTruncated: %v", err)
				if fx.apiErr != nil {
					var apiErr *serializers.APIError
					require.ErrorAs(t, err, &apiErr)
					require.Equal(t, fx.apiErr, apiErr)
				}
				return
			}
			require.NoError(t, err)
			checkGolden(t, filepath.Join(streamsDir, fx.name+".golden.json"), marshalGolden(t, replyGolden{reply, deltas}))
			fx.check(t, reply, deltas)

			// A nil DeltaFunc gives the same reply.
			again, err := anthropic.DecodeStream(bytes.NewReader(in), nil)
			require.NoError(t, err)
			require.Equal(t, reply, again)
		})
	}
}

// TestStreamFixturesHaveEntries fails on a fixture the table does not
// cover, and on a golden file without its fixture.
func TestStreamFixturesHaveEntries(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for _, fx := range streamFixtures {
		names[fx.name] = fx.wantErr == ""
	}
	for _, f := range goldenFiles(t, streamsDir, "*.sse") {
		_, ok := names[strings.TrimSuffix(filepath.Base(f), ".sse")]
		require.True(t, ok, "%s is not in streamFixtures", f)
	}
	for _, f := range goldenFiles(t, streamsDir, "*.golden.json") {
		success := names[strings.TrimSuffix(filepath.Base(f), ".golden.json")]
		require.True(t, success, "%s belongs to no success fixture: delete it", f)
	}
}

const (
	evStart     = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":1}}}\n\n"
	evTextStart = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	evToolStart = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"t\",\"input\":{}}}\n\n"
	evTextDelta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
	evStop0     = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	evMsgDelta  = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n"
	evMsgStop   = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

func jsonDelta(fragment string) string {
	return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" +
		string(mustMarshal(fragment)) + "}}\n\n"
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestDecodeStreamCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		wantErr   string // empty: success
		truncated bool
		wantText  string
		wantInput string
	}{
		{name: "complete", in: evStart + evTextStart + evTextDelta + evStop0 + evMsgDelta + evMsgStop, wantText: "hi"},
		{name: "message_stop without the closing blank line", in: evStart + evTextStart + evTextDelta + evStop0 + evMsgDelta +
			strings.TrimSuffix(evMsgStop, "\n\n"), wantText: "hi"},
		{name: "events without event names", in: strings.ReplaceAll(evStart+evTextStart+evTextDelta+evStop0+evMsgDelta+evMsgStop,
			"event: ", ": "), wantText: "hi"},
		{name: "empty input", in: "", wantErr: "no message_stop", truncated: true},
		{name: "only pings", in: "event: ping\ndata: {\"type\":\"ping\"}\n\n", wantErr: "no message_stop", truncated: true},
		{name: "message_stop cut inside its data", in: evStart + evMsgDelta + "event: message_stop\ndata: {\"type\":\"message_st",
			wantErr: "message_stop event cut short", truncated: true},
		{name: "event name cut", in: evStart + evMsgDelta + "event: message_st", wantErr: "no message_stop", truncated: true},
		{name: "malformed event mid-stream", in: evStart + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\n\n" + evMsgStop,
			wantErr: "line 4: content_block_start event: "},
		{name: "index of the wrong type", in: evStart + "data: {\"type\":\"content_block_start\",\"index\":\"0\",\"content_block\":{\"type\":\"text\"}}\n\n" + evMsgStop,
			wantErr: "content_block_start event: json: cannot unmarshal string"},
		{name: "content before message_start", in: evTextStart + evMsgStop, wantErr: "content_block_start: before message_start"},
		{name: "message_stop before message_start", in: evMsgStop, wantErr: "message_stop: before message_start"},
		{name: "second message_start", in: evStart + evStart + evMsgStop, wantErr: "a second message_start"},
		{name: "message_start without message", in: "data: {\"type\":\"message_start\"}\n\n" + evMsgStop, wantErr: "message_start: no message"},
		{name: "block index gap", in: evStart + strings.Replace(evTextStart, `"index":0`, `"index":1`, 1) + evMsgStop,
			wantErr: "block 1 started, want block 0"},
		{name: "block start without index", in: evStart + strings.Replace(evTextStart, `"index":0,`, ``, 1) + evMsgStop,
			wantErr: "content_block_start: no index"},
		{name: "negative index", in: evStart + evTextStart + strings.Replace(evTextDelta, `"index":0`, `"index":-1`, 1),
			wantErr: "block -1 was never started"},
		{name: "huge index", in: evStart + evTextStart + strings.Replace(evTextDelta, `"index":0`, `"index":99999999999`, 1),
			wantErr: "block 99999999999 was never started"},
		{name: "delta after stop", in: evStart + evTextStart + evStop0 + evTextDelta + evMsgStop, wantErr: "block 0 was already stopped"},
		{name: "stop twice", in: evStart + evTextStart + evStop0 + evStop0 + evMsgStop, wantErr: "block 0 was already stopped"},
		{name: "stop of a block never started", in: evStart + evStop0 + evMsgStop, wantErr: "content_block_stop: block 0 was never started"},
		{name: "block never stopped", in: evStart + evTextStart + evTextDelta + evMsgDelta + evMsgStop, wantErr: "message_stop: block 0 was never stopped"},
		{name: "text delta for a tool block", in: evStart + evToolStart + evTextDelta + evMsgStop, wantErr: "block 0: a text_delta for a tool_use block"},
		{name: "tool input cut", in: evStart + evToolStart + jsonDelta(`{"a":`) + evStop0 + evMsgStop,
			wantErr: "block 0: tool_use toolu_1: input: not valid JSON"},
		{name: "tool input not an object", in: evStart + evToolStart + jsonDelta(`[1,2]`) + evStop0 + evMsgStop,
			wantErr: "block 0: tool_use toolu_1: input: not a JSON object"},
		{name: "tool input empty fragments", in: evStart + evToolStart + jsonDelta("") + jsonDelta("") + evStop0 + evMsgDelta + evMsgStop, wantInput: `{}`},
		{name: "tool input with spaces", in: evStart + evToolStart + jsonDelta(` {"a": [1, 2]} `) + evStop0 + evMsgDelta + evMsgStop, wantInput: `{"a": [1, 2]}`},
		{name: "tool_use without id", in: evStart + strings.Replace(evToolStart, `"id":"toolu_1",`, ``, 1) + evMsgStop,
			wantErr: "block 0: tool_use: id and name are required"},
		{name: "error event with a body that is not JSON", in: evStart + "event: error\ndata: upstream connect error\n\n",
			wantErr: "provider error (HTTP 200): response body: upstream connect error"},
		{name: "unknown delta for an unknown block", in: evStart + strings.Replace(evTextStart, `"type":"text"`, `"type":"mystery"`, 1) +
			strings.Replace(evTextDelta, `"text_delta"`, `"mystery_delta"`, 1) + evStop0 + evMsgDelta + evMsgStop},
		{name: "known delta for an unknown block", in: evStart + strings.Replace(evTextStart, `"type":"text"`, `"type":"mystery"`, 1) +
			evTextDelta + evStop0 + evMsgDelta + evMsgStop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reply, err := anthropic.DecodeStream(strings.NewReader(tt.in), nil)
			if tt.wantErr != "" {
				require.Error(t, err)
				require.Equal(t, serializers.Reply{}, reply)
				require.Contains(t, err.Error(), tt.wantErr)
				require.True(t, strings.HasPrefix(err.Error(), "anthropic: decode stream: ") || errors.As(err, new(*serializers.APIError)), err.Error())
				require.Equal(t, tt.truncated, errors.Is(err, serializers.ErrTruncated), "wraps ErrTruncated: %v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, conversation.RoleAssistant, reply.Message.Role)
			require.Equal(t, tt.wantText, reply.Message.Text())
			if tt.wantInput != "" {
				require.Equal(t, tt.wantInput, string(reply.Message.ToolUses()[0].Input))
			}
		})
	}
}

// TestDecodeStreamReadError: a connection that fails mid-stream is a
// truncated stream, and the cause is kept.
func TestDecodeStreamReadError(t *testing.T) {
	t.Parallel()
	cause := errors.New("connection reset by peer")
	r := io.MultiReader(strings.NewReader(evStart+evTextStart), iotest.ErrReader(cause))
	reply, err := anthropic.DecodeStream(r, nil)
	require.Equal(t, serializers.Reply{}, reply)
	require.ErrorIs(t, err, serializers.ErrTruncated)
	require.ErrorIs(t, err, cause)
}

// TestDecodeStreamReadErrorInsideEvent: a connection that fails in the
// middle of an event's data is a truncated stream too, not a malformed
// event.
func TestDecodeStreamReadErrorInsideEvent(t *testing.T) {
	t.Parallel()
	cause := errors.New("connection reset by peer")
	r := io.MultiReader(strings.NewReader(evStart+"event: content_block_start\ndata: {\"type\":\"content_block_st"), iotest.ErrReader(cause))
	_, err := anthropic.DecodeStream(r, nil)
	require.ErrorIs(t, err, serializers.ErrTruncated)
	require.ErrorIs(t, err, cause)
}

// TestDecodeStreamStopsAtMessageStop: nothing after message_stop is read.
func TestDecodeStreamStopsAtMessageStop(t *testing.T) {
	t.Parallel()
	r := io.MultiReader(strings.NewReader(evStart+evMsgDelta+evMsgStop), iotest.ErrReader(errors.New("must not be read")))
	_, err := anthropic.DecodeStream(r, nil)
	require.NoError(t, err)
}
