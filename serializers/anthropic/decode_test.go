package anthropic_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
)

// responseFixtures returns the response bodies under testdata/responses
// (the golden replies sit beside them as <name>.golden.json).
func responseFixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range goldenFiles(t, responsesDir, "*.json") {
		if !strings.HasSuffix(f, ".golden.json") {
			out = append(out, f)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func TestDecodeResponseFixtures(t *testing.T) {
	t.Parallel()
	checks := map[string]func(t *testing.T, r serializers.Reply){
		"text": func(t *testing.T, r serializers.Reply) {
			require.Equal(t, "Hello! How can I help?", r.Message.Text())
			require.Equal(t, serializers.StopEndTurn, r.StopReason)
			require.Equal(t, serializers.Usage{InputTokens: 12, OutputTokens: 9}, r.Usage)
			require.Equal(t, "msg_01XFDUDYJgAACzvnptvVoYEL", r.ID)
			require.Equal(t, "claude-sonnet-4-5", r.Model)
		},
		"thinking_tool_use": func(t *testing.T, r serializers.Reply) {
			require.Equal(t, []conversation.BlockType{conversation.TypeThinking, conversation.TypeRedactedThinking,
				conversation.TypeText, conversation.TypeToolUse}, blockTypes(r))
			require.Equal(t, "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxx/+sig==", r.Message.Content[0].Signature)
			require.Equal(t, `{"path": "go.mod", "lines": [1, 20]}`, string(r.Message.Content[3].Input), "input kept as sent")
			require.Equal(t, serializers.Usage{InputTokens: 2095, OutputTokens: 503, CacheWriteTokens: 1200, CacheReadTokens: 800}, r.Usage)
			require.NoError(t, r.Message.Validate())
		},
		"unknown_blocks": func(t *testing.T, r serializers.Reply) {
			require.Equal(t, []conversation.BlockType{conversation.TypeText}, blockTypes(r))
			require.Equal(t, serializers.StopContextLimit, r.StopReason)
			require.Equal(t, "model_context_window_exceeded", r.RawStopReason)
			require.Equal(t, serializers.Usage{OutputTokens: 40}, r.Usage, "null counts are 0")
		},
		"empty_tool_input": func(t *testing.T, r serializers.Reply) {
			require.Equal(t, `{}`, string(r.Message.ToolUses()[0].Input))
		},
	}
	for _, f := range responseFixtures(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			check, ok := checks[name]
			require.True(t, ok, "no check for %s", f)
			body, err := os.ReadFile(f)
			require.NoError(t, err)
			reply, err := anthropic.DecodeResponse(body)
			require.NoError(t, err)
			checkGolden(t, filepath.Join(responsesDir, name+".golden.json"), marshalGolden(t, replyGolden{Reply: reply}))
			check(t, reply)
		})
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"not JSON", `<html>`, "anthropic: decode response: invalid character"},
		{"empty", ``, "anthropic: decode response: unexpected end of JSON input"},
		{"not a message", `{"type":"completion"}`, `anthropic: decode response: type is "completion", want message`},
		{"no type", `{"content":[]}`, `type is "", want message`},
		{"wrong role", `{"type":"message","role":"user","content":[]}`, `role is "user", want assistant`},
		{"tool input not an object", `{"type":"message","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"n","input":[1]}]}`,
			"anthropic: decode response: content[1]: tool_use t: input: not a JSON object"},
		{"tool_use without name", `{"type":"message","content":[{"type":"tool_use","id":"t","input":{}}]}`,
			"content[0]: tool_use: id and name are required"},
		{"known block with a bad field", `{"type":"message","content":[{"type":"text","text":7}]}`, "content[0]: json: cannot unmarshal number"},
		{"usage not a number", `{"type":"message","content":[],"usage":{"input_tokens":"many"}}`, "anthropic: decode response: json: cannot unmarshal string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reply, err := anthropic.DecodeResponse([]byte(tt.body))
			require.Error(t, err)
			require.Equal(t, serializers.Reply{}, reply)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestDecodeResponseErrorBody(t *testing.T) {
	t.Parallel()
	_, err := anthropic.DecodeResponse([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`))
	var apiErr *serializers.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	require.Equal(t, &serializers.APIError{Status: 200, Type: "overloaded_error", Message: "Overloaded", RequestID: "req_1"}, apiErr)
}

func TestStopReasons(t *testing.T) {
	t.Parallel()
	tests := map[string]serializers.StopReason{
		"end_turn":                      serializers.StopEndTurn,
		"tool_use":                      serializers.StopToolUse,
		"max_tokens":                    serializers.StopMaxTokens,
		"stop_sequence":                 serializers.StopSequence,
		"refusal":                       serializers.StopRefusal,
		"pause_turn":                    serializers.StopPauseTurn,
		"model_context_window_exceeded": serializers.StopContextLimit,
		"compaction":                    serializers.StopOther,
		"":                              serializers.StopOther,
	}
	for raw, want := range tests {
		body := `{"type":"message","content":[],"stop_reason":` + string(mustMarshal(raw)) + `}`
		reply, err := anthropic.DecodeResponse([]byte(body))
		require.NoError(t, err)
		require.Equal(t, want, reply.StopReason, raw)
		require.Equal(t, raw, reply.RawStopReason)

		stream := evStart + strings.Replace(evMsgDelta, `"end_turn"`, string(mustMarshal(raw)), 1) + evMsgStop
		reply, err = anthropic.DecodeStream(strings.NewReader(stream), nil)
		require.NoError(t, err)
		require.Equal(t, want, reply.StopReason, raw)
		require.Equal(t, raw, reply.RawStopReason)
	}
	reply, err := anthropic.DecodeResponse([]byte(`{"type":"message","content":[],"stop_reason":null}`))
	require.NoError(t, err)
	require.Equal(t, serializers.StopOther, reply.StopReason)
}

func TestDecodeError(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 400)
	tests := []struct {
		name      string
		status    int
		body      string
		requestID string
		want      serializers.APIError
	}{
		{"error object", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_body"}`, "",
			serializers.APIError{Status: 529, Type: "overloaded_error", Message: "Overloaded", RequestID: "req_body"}},
		{"header request id wins", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"},"request_id":"req_body"}`, "req_header",
			serializers.APIError{Status: 429, Type: "rate_limit_error", Message: "Slow down", RequestID: "req_header"}},
		{"details ignored", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"Spend limit","details":{"error_code":"enforced_spend_limit_reached"}}}`, "",
			serializers.APIError{Status: 429, Type: "rate_limit_error", Message: "Spend limit"}},
		{"html page", 502, "<html>\n  <body>\n    <h1>502 Bad Gateway</h1>\n  </body>\n</html>\n", "req_x",
			serializers.APIError{Status: 502, Message: "response body: <html> <body> <h1>502 Bad Gateway</h1> </body> </html>", RequestID: "req_x"}},
		{"empty body", 500, "", "", serializers.APIError{Status: 500, Message: "empty response body"}},
		{"JSON of another shape", 400, `{"message":"bad"}`, "", serializers.APIError{Status: 400, Message: `response body: {"message":"bad"}`}},
		{"error of the wrong shape", 400, `{"type":"error","error":"bad"}`, "", serializers.APIError{Status: 400, Message: `response body: {"type":"error","error":"bad"}`}},
		{"invalid UTF-8", 500, "oops \xff\xfe", "", serializers.APIError{Status: 500, Message: "response body: oops \uFFFD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := anthropic.DecodeError(tt.status, []byte(tt.body), tt.requestID)
			require.Equal(t, &tt.want, got)
			require.NotEmpty(t, got.Error())
		})
	}
	t.Run("long body is cut at a rune boundary", func(t *testing.T) {
		t.Parallel()
		got := anthropic.DecodeError(503, []byte(long), "")
		require.True(t, utf8.ValidString(got.Message))
		require.True(t, strings.HasSuffix(got.Message, "…"))
		require.LessOrEqual(t, len(got.Message), len("response body: ")+300+len("…"))
		require.Contains(t, got.Error(), "HTTP 503")
	})
}
