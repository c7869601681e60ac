package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	c "github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

func TestDecodeResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		want    serializers.Reply
		wantErr string
	}{
		{
			name: "text with full usage",
			body: `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini",
				"choices":[{"index":0,"message":{"role":"assistant","content":"Hello!","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],
				"usage":{"prompt_tokens":19,"completion_tokens":3,"total_tokens":22,
					"prompt_tokens_details":{"cached_tokens":8,"audio_tokens":0},
					"completion_tokens_details":{"reasoning_tokens":1,"audio_tokens":0}},
				"service_tier":"default","system_fingerprint":"fp_1"}`,
			want: serializers.Reply{
				Message:    c.Message{Role: c.RoleAssistant, Content: []c.Block{c.Text("Hello!")}},
				StopReason: serializers.StopEndTurn, RawStopReason: "stop",
				Usage: serializers.Usage{InputTokens: 19, OutputTokens: 3, CacheReadTokens: 8, ReasoningTokens: 1},
				ID:    "chatcmpl-1", Model: "gpt-4o-mini",
			},
		},
		{
			name: "tool calls, content null, null usage details",
			body: `{"id":"x","model":"llama3.2","choices":[{"index":0,"message":{"role":"assistant","content":null,
				"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},
				              {"id":"","type":"function","function":{"name":"g","arguments":""}}]},"finish_reason":"tool_calls"}],
				"usage":{"prompt_tokens":5,"completion_tokens":null,"prompt_tokens_details":null,"completion_tokens_details":null}}`,
			want: serializers.Reply{
				Message: c.Message{Role: c.RoleAssistant, Content: []c.Block{
					c.ToolUse("call_1", "f", json.RawMessage(`{"a":1}`)),
					c.ToolUse("panto_call_1", "g", nil), // the missing id is made from the index
				}},
				StopReason: serializers.StopToolUse, RawStopReason: "tool_calls",
				Usage: serializers.Usage{InputTokens: 5}, ID: "x", Model: "llama3.2",
			},
		},
		{
			name: "reasoning content first, then text; other choices ignored",
			body: `{"choices":[{"index":1,"message":{"content":"other"},"finish_reason":"stop"},
				{"index":0,"message":{"role":"assistant","content":"4","reasoning_content":"2+2"},"finish_reason":"length"}]}`,
			want: serializers.Reply{
				Message:    c.Message{Role: c.RoleAssistant, Content: []c.Block{c.Thinking("2+2", ""), c.Text("4")}},
				StopReason: serializers.StopMaxTokens, RawStopReason: "length",
			},
		},
		{
			name: "refusal",
			body: `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't."},"finish_reason":"stop"}]}`,
			want: serializers.Reply{
				Message:    c.Message{Role: c.RoleAssistant, Content: []c.Block{c.Text("I can't.")}},
				StopReason: serializers.StopRefusal, RawStopReason: "stop",
			},
		},
		{
			name: "no usage, unknown finish reason",
			body: `{"choices":[{"index":0,"message":{"content":"x"},"finish_reason":"eos"}],"usage":null}`,
			want: serializers.Reply{
				Message:    c.Message{Role: c.RoleAssistant, Content: []c.Block{c.Text("x")}},
				StopReason: serializers.StopOther, RawStopReason: "eos",
			},
		},
		{name: "not JSON", body: `<html>`, wantErr: "openai: decode response: invalid character '<' looking for beginning of value"},
		{name: "no choices", body: `{"choices":[]}`, wantErr: "openai: decode response: no choice with index 0"},
		{
			name:    "invalid arguments",
			body:    `{"choices":[{"index":0,"message":{"tool_calls":[{"id":"call_1","function":{"name":"f","arguments":"{oops"}}]}}]}`,
			wantErr: "openai: decode response: tool call 0 (f, id call_1): arguments are not valid JSON: {oops",
		},
		{
			name:    "error body with 200",
			body:    `{"error":{"message":"bad things","type":"server_error","param":null,"code":null}}`,
			wantErr: "openai: decode response: provider error (HTTP 200, server_error): bad things",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeResponse([]byte(tt.body))
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				require.Equal(t, serializers.Reply{}, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.NoError(t, got.Message.Validate())
		})
	}
}

func TestStopReason(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]serializers.StopReason{
		"stop": serializers.StopEndTurn, "tool_calls": serializers.StopToolUse, "function_call": serializers.StopToolUse,
		"length": serializers.StopMaxTokens, "content_filter": serializers.StopRefusal,
		"": serializers.StopOther, "eos": serializers.StopOther,
	} {
		require.Equal(t, want, stopReason(raw), raw)
	}
}

func TestDecodeError(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 400)
	tests := []struct {
		name   string
		status int
		body   string
		want   serializers.APIError
	}{
		{"openai with string code", 429,
			`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			serializers.APIError{Status: 429, Type: "rate_limit_exceeded", Message: "Rate limit reached", RequestID: "req_1"}},
		{"openai with null code", 400,
			`{"error":{"message":"Invalid value for 'tool_choice'.","type":"invalid_request_error","param":"tool_choice","code":null}}`,
			serializers.APIError{Status: 400, Type: "invalid_request_error", Message: "Invalid value for 'tool_choice'.", RequestID: "req_1"}},
		{"numeric code", 500, `{"error":{"message":"boom","type":"api_error","code":500}}`,
			serializers.APIError{Status: 500, Type: "api_error", Message: "boom", RequestID: "req_1"}},
		{"bare error string (Ollama)", 404, `{"error":"model \"llama9\" not found, try pulling it first"}`,
			serializers.APIError{Status: 404, Message: `model "llama9" not found, try pulling it first`, RequestID: "req_1"}},
		{"vLLM top level", 400, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`,
			serializers.APIError{Status: 400, Type: "BadRequestError", Message: "max_tokens is too large", RequestID: "req_1"}},
		{"type without message", 503, `{"error":{"type":"overloaded"}}`,
			serializers.APIError{Status: 503, Type: "overloaded", Message: `{"error":{"type":"overloaded"}}`, RequestID: "req_1"}},
		{"html", 502, "<html>\n  <body>\n\n<h1>502 Bad Gateway</h1></body>\n</html>\n",
			serializers.APIError{Status: 502, Message: "<html> <body> <h1>502 Bad Gateway</h1></body> </html>", RequestID: "req_1"}},
		{"empty", 500, "", serializers.APIError{Status: 500, Message: "empty error body", RequestID: "req_1"}},
		{"JSON without error", 500, `{"ok":false}`, serializers.APIError{Status: 500, Message: `{"ok":false}`, RequestID: "req_1"}},
		{"long body is cut on a rune boundary", 500, long,
			serializers.APIError{Status: 500, Message: long[:snippetMax] + "…", RequestID: "req_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := DecodeError(tt.status, []byte(tt.body), "req_1")
			require.Equal(t, &tt.want, got)
		})
	}
}
