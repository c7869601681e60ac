package openai

import (
	"encoding/json"
	"github.com/panto-dev/panto/internal/golden"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	c "github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

func ptr[T any](v T) *T { return &v }

func msg(role c.Role, blocks ...c.Block) c.Message { return c.Message{Role: role, Content: blocks} }

// section is a keyed system message (a section) with a source, which must
// never reach the wire (the exact bodies of the section cases show it).
func section(key, text string) c.Message {
	return c.KeyedSystemMessage(key, text).WithSource("extension " + key)
}

var (
	sysA = c.SystemMessage("You are panto, a coding agent.\n", c.ModeAppend)
	sysB = c.SystemMessage("Project rule: use tabs.", c.ModeAppend)
	sysC = c.SystemMessage("Current git branch: main", c.ModeAppend)

	weatherTool = serializers.Tool{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}
	timeTool = serializers.Tool{Name: "get_time"} // no description, default parameters

	toolRound = []c.Message{
		sysA,
		c.UserText("Weather in Paris and the time in Rome?"),
		msg(c.RoleAssistant,
			c.Thinking("Two independent calls.", "sig-1"),
			c.RedactedThinking("opaque"),
			c.Text("Checking both."),
			c.ToolUse("call_a", "get_weather", json.RawMessage(`{"city": "Paris"}`)),
			c.ToolUse("call_b", "get_time", nil),
		),
		msg(c.RoleTool,
			c.ToolResult("call_a", "18°C, <clear> & dry", false),
			c.ToolResult("call_b", "unknown time zone", true),
		),
		msg(c.RoleAssistant, c.ToolUse("call_c", "get_time", json.RawMessage(`{"tz":"Europe/Rome"}`))),
		msg(c.RoleTool, c.ToolResult("call_c", "21:04", false)),
		c.AssistantText("Paris: 18°C and clear. Rome: 21:04."),
	}
)

// requestCases are encoded to testdata/requests/<name>.json. The spec's
// examples (design doc §1.3, §1.4) also carry their expected body inline,
// so a wrong golden file cannot hide a broken rule.
var requestCases = []struct {
	name string
	req  serializers.Request
	opts Options
	want string // when set, the exact body
}{
	{
		name: "system_several_blocks",
		req:  serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{sysA, sysB, sysC, c.UserText("hi")}},
		want: `{"model":"gpt-4o-mini","messages":[` +
			`{"role":"system","content":"You are panto, a coding agent.\n"},` +
			`{"role":"system","content":"Project rule: use tabs."},` +
			`{"role":"system","content":"Current git branch: main"},` +
			`{"role":"user","content":"hi"}]}`,
	},
	{
		name: "system_replace",
		req: serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{
			sysA, sysB, c.UserText("hi"), c.AssistantText("hello"),
			c.SystemMessage("You are a reviewer now.", c.ModeReplace), sysC,
			c.UserText("review this"),
		}},
		want: `{"model":"gpt-4o-mini","messages":[` +
			`{"role":"system","content":"You are a reviewer now."},` +
			`{"role":"system","content":"Current git branch: main"},` +
			`{"role":"user","content":"hi"},` +
			`{"role":"assistant","content":"hello"},` +
			`{"role":"user","content":"review this"}]}`,
	},
	{
		name: "system_interleaved",
		req: serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{
			c.UserText("u1"), sysA, c.AssistantText("a1"), c.UserText("u2"), sysB,
			c.AssistantText("a2"), sysC, c.UserText("u3"),
		}},
		want: `{"model":"gpt-4o-mini","messages":[` +
			`{"role":"system","content":"You are panto, a coding agent.\n"},` +
			`{"role":"system","content":"Project rule: use tabs."},` +
			`{"role":"system","content":"Current git branch: main"},` +
			`{"role":"user","content":"u1"},{"role":"assistant","content":"a1"},` +
			`{"role":"user","content":"u2"},{"role":"assistant","content":"a2"},` +
			`{"role":"user","content":"u3"}]}`,
	},
	{
		name: "sections_updated_in_place",
		req: serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{
			sysA, section("tools", "Tools: read."), sysB, c.UserText("hi"), c.AssistantText("hello"),
			section("tools", "Tools: read, bash."), c.UserText("again"),
		}},
		want: `{"model":"gpt-4o-mini","messages":[` +
			`{"role":"system","content":"You are panto, a coding agent.\n"},` +
			`{"role":"system","content":"Tools: read, bash."},` +
			`{"role":"system","content":"Project rule: use tabs."},` +
			`{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"again"}]}`,
	},
	{
		name: "sections_removed_by_empty_text",
		req: serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{
			sysA, section("env", "cwd: /home/u/project"), section("tools", "Tools: read."), c.UserText("hi"),
			section("env", ""),
		}},
		want: `{"model":"gpt-4o-mini","messages":[` +
			`{"role":"system","content":"You are panto, a coding agent.\n"},` +
			`{"role":"system","content":"Tools: read."},` +
			`{"role":"user","content":"hi"}]}`,
	},
	{
		name: "sections_wiped_by_replace",
		req: serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{
			sysA, section("tools", "Tools: read."), section("env", "cwd: /home/u/project"), c.UserText("hi"),
			c.SystemMessage("You are a reviewer now.", c.ModeReplace), section("tools", ""), sysC,
		}},
		want: `{"model":"gpt-4o-mini","messages":[` +
			`{"role":"system","content":"You are a reviewer now."},` +
			`{"role":"system","content":"Current git branch: main"},` +
			`{"role":"user","content":"hi"}]}`,
	},
	{
		name: "sections_updated_after_replace",
		req: serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{
			sysA, section("tools", "Tools v1."), c.UserText("hi"),
			c.SystemMessage("Reseeded.", c.ModeReplace), section("tools", "Tools v2."), sysB,
			c.AssistantText("hello"), section("tools", "Tools v3."), c.UserText("again"),
		}},
		want: `{"model":"gpt-4o-mini","messages":[` +
			`{"role":"system","content":"Reseeded."},` +
			`{"role":"system","content":"Tools v3."},` +
			`{"role":"system","content":"Project rule: use tabs."},` +
			`{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"again"}]}`,
	},
	{
		name: "no_system",
		req:  serializers.Request{Model: "llama3.2", Messages: []c.Message{c.UserText("hi")}},
		want: `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}`,
	},
	{
		// prefix_at_4 is prefixConversation[:4]: the replace at 5 has not
		// happened yet.
		name: "prefix_at_4",
		req:  serializers.Request{Model: "gpt-4o-mini", Messages: prefixConversation[:4]},
		want: `{"model":"gpt-4o-mini","messages":[` +
			`{"role":"system","content":"You are panto, a coding agent.\n"},` +
			`{"role":"system","content":"Project rule: use tabs."},` +
			`{"role":"user","content":"u1"},{"role":"assistant","content":"a1"}]}`,
	},
	{
		name: "prefix_at_7",
		req:  serializers.Request{Model: "gpt-4o-mini", Messages: prefixConversation[:7]},
		want: `{"model":"gpt-4o-mini","messages":[` +
			`{"role":"system","content":"Replaced."},` +
			`{"role":"system","content":"Current git branch: main"},` +
			`{"role":"user","content":"u1"},{"role":"assistant","content":"a1"},{"role":"user","content":"u2"}]}`,
	},
	{
		name: "tool_round",
		req: serializers.Request{Model: "gpt-4o", Messages: toolRound,
			Tools: []serializers.Tool{weatherTool, timeTool}, ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceAuto}},
	},
	{
		name: "user_tool_results",
		req: serializers.Request{Model: "gpt-4o", Messages: []c.Message{
			c.UserText("weather?"),
			msg(c.RoleAssistant, c.ToolUse("call_1", "get_weather", json.RawMessage(`{"city":"Oslo"}`))),
			msg(c.RoleUser, c.ToolResult("call_1", "-3°C", false), c.Text("And now in Fahrenheit.")),
		}},
	},
	{
		name: "tool_result_image",
		req: serializers.Request{Model: "gpt-4o", Messages: []c.Message{
			c.UserText("screenshot please"),
			msg(c.RoleAssistant, c.ToolUse("call_1", "screenshot", nil)),
			msg(c.RoleTool, c.Block{Type: c.TypeToolResult, ToolUseID: "call_1", Content: []c.Block{
				c.Text("Here it is:"), c.Image("image/png", "iVBORw0KGgo="),
			}}),
		}},
	},
	{
		name: "tool_results_images",
		req: serializers.Request{Model: "gpt-4o", Messages: []c.Message{
			c.UserText("compare the two screenshots"),
			msg(c.RoleAssistant, c.ToolUse("call_1", "read", json.RawMessage(`{"path":"a.png"}`)),
				c.ToolUse("call_2", "read", json.RawMessage(`{"path":"b.txt"}`)), c.ToolUse("call_3", "read", json.RawMessage(`{"path":"c.jpg"}`))),
			msg(c.RoleTool,
				c.Block{Type: c.TypeToolResult, ToolUseID: "call_1", Content: []c.Block{c.Text("a.png: PNG image, 8 bytes, 1×1 px"), c.Image("image/png", "iVBORw0KGgo=")}},
				c.ToolResult("call_2", "     1\tno image here", false),
				c.Block{Type: c.TypeToolResult, ToolUseID: "call_3", Content: []c.Block{c.Image("image/jpeg", "/9j/4AAQ"), c.Image("image/webp", "UklGRg==")}}),
			c.AssistantText("They differ."),
			msg(c.RoleAssistant, c.ToolUse("call_4", "read", json.RawMessage(`{"path":"d.gif"}`))),
			msg(c.RoleUser, c.Block{Type: c.TypeToolResult, ToolUseID: "call_4", Content: []c.Block{c.Image("image/gif", "R0lGODlh")}}, c.Text("And this one?")),
		}},
	},
	{
		name: "images",
		req: serializers.Request{Model: "gpt-4o", Messages: []c.Message{
			msg(c.RoleUser, c.Text("What is in this picture?"), c.Image("image/png", "iVBORw0KGgo=")),
			c.AssistantText("A cat."),
			msg(c.RoleUser, c.Text("First part. "), c.Text("Second part.")),
		}},
	},
	{
		name: "tool_choice_named",
		req: serializers.Request{Model: "gpt-4o", Messages: []c.Message{c.UserText("weather in Oslo")},
			Tools:      []serializers.Tool{weatherTool, timeTool},
			ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceTool, Name: "get_weather", DisableParallel: true}},
		want: `{"model":"gpt-4o","messages":[{"role":"user","content":"weather in Oslo"}],"tools":[` +
			`{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.",` +
			`"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},` +
			`{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}],` +
			`"tool_choice":{"type":"function","function":{"name":"get_weather"}},"parallel_tool_calls":false}`,
	},
	{
		name: "tool_choice_required",
		req: serializers.Request{Model: "gpt-4o", Messages: []c.Message{c.UserText("hi")},
			Tools: []serializers.Tool{timeTool}, ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceAny}},
	},
	{
		name: "tool_choice_none",
		req: serializers.Request{Model: "gpt-4o", Messages: []c.Message{c.UserText("hi")},
			Tools: []serializers.Tool{timeTool}, ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceNone}},
	},
	{
		// Without tools, tool_choice and parallel_tool_calls are left out.
		name: "tool_choice_without_tools",
		req: serializers.Request{Model: "gpt-4o", Messages: []c.Message{c.UserText("hi")},
			ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceAny, DisableParallel: true}},
		want: `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`,
	},
	{
		name: "streaming",
		req: serializers.Request{Model: "gpt-4o-mini", Messages: []c.Message{sysA, c.UserText("hi")},
			Stream: true, MaxTokens: 256},
		want: `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are panto, a coding agent.\n"},` +
			`{"role":"user","content":"hi"}],"max_tokens":256,"stream":true,"stream_options":{"include_usage":true}}`,
	},
	{
		name: "max_completion_tokens",
		req:  serializers.Request{Model: "o3", Messages: []c.Message{c.UserText("hi")}, MaxTokens: 1024, ThinkingBudget: 8000},
		opts: Options{MaxTokensField: FieldMaxCompletionTokens},
		want: `{"model":"o3","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":1024,"reasoning_effort":"medium"}`,
	},
	{
		name: "max_tokens_temperature",
		req: serializers.Request{Model: "qwen3", Messages: []c.Message{c.UserText("<b>&</b>")}, MaxTokens: 512,
			Temperature: ptr(0.0), ThinkingBudget: 1024},
		want: `{"model":"qwen3","messages":[{"role":"user","content":"<b>&</b>"}],"max_tokens":512,"temperature":0,"reasoning_effort":"low"}`,
	},
	{
		// The session id routes the session's requests to one cache; the
		// marks of Cache have no place on this wire.
		name: "prompt_cache_key",
		req: serializers.Request{Model: "gpt-4.1", Messages: []c.Message{sysA, c.UserText("hi")}, Stream: true,
			Cache: serializers.Cache{Mark: true, Key: "0b6f6c2e-7a53-4f5e-9d0c-3c1f2a9e8d71"}},
		opts: Options{PromptCacheKey: true},
		want: `{"model":"gpt-4.1","messages":[{"role":"system","content":"You are panto, a coding agent.\n"},` +
			`{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},` +
			`"prompt_cache_key":"0b6f6c2e-7a53-4f5e-9d0c-3c1f2a9e8d71"}`,
	},
	{
		// A server that does not take the field gets the same request
		// without it.
		name: "prompt_cache_key_not_taken",
		req: serializers.Request{Model: "qwen3", Messages: []c.Message{sysA, c.UserText("hi")},
			Cache: serializers.Cache{Mark: true, Key: "0b6f6c2e-7a53-4f5e-9d0c-3c1f2a9e8d71"}},
		want: `{"model":"qwen3","messages":[{"role":"system","content":"You are panto, a coding agent.\n"},` +
			`{"role":"user","content":"hi"}]}`,
	},
	{
		// No key (caching off): nothing, whatever the server takes.
		name: "prompt_cache_off",
		req:  serializers.Request{Model: "gpt-4.1", Messages: []c.Message{c.UserText("hi")}},
		opts: Options{PromptCacheKey: true},
		want: `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}`,
	},
	{
		name: "assistant_thinking_only",
		req: serializers.Request{Model: "deepseek-reasoner", Messages: []c.Message{
			c.UserText("hi"), msg(c.RoleAssistant, c.Thinking("hmm", "")), c.UserText("well?"),
		}, ThinkingBudget: 32000, Temperature: ptr(0.7)},
	},
}

// prefixConversation has system changes at 0, 1, 5 (replace) and 6.
var prefixConversation = []c.Message{
	sysA, sysB, c.UserText("u1"), c.AssistantText("a1"), c.UserText("u2"),
	c.SystemMessage("Replaced.", c.ModeReplace), sysC, c.AssistantText("a2"),
}

func TestEncodeRequestGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range requestCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := EncodeRequest(tt.req, tt.opts)
			require.NoError(t, err)
			require.True(t, json.Valid(got))
			if tt.want != "" {
				require.Equal(t, tt.want, string(got))
			}
			golden.Check(t, filepath.Join("testdata", "requests", tt.name+".json"), got)

			again, err := EncodeRequest(tt.req, tt.opts)
			require.NoError(t, err)
			require.Equal(t, got, again, "not deterministic")
		})
	}
}

// wireMsgs decodes an encoded body's messages.
func wireMsgs(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var v struct{ Messages []map[string]any }
	require.NoError(t, json.Unmarshal(body, &v))
	return v.Messages
}

// TestEncodePrefixDerivation checks the /tree property on every prefix:
// the system messages of msgs[:n] are EffectiveSystem(msgs[:n]) and the
// rest are the non-system messages of msgs[:n], in order.
func TestEncodePrefixDerivation(t *testing.T) {
	t.Parallel()
	conv := c.Conversation{Messages: prefixConversation}
	wantSystems := [][]string{
		{}, {"You are panto, a coding agent.\n"},
		{"You are panto, a coding agent.\n", "Project rule: use tabs."},
		{"You are panto, a coding agent.\n", "Project rule: use tabs."},
		{"You are panto, a coding agent.\n", "Project rule: use tabs."},
		{"You are panto, a coding agent.\n", "Project rule: use tabs."},
		{"Replaced."}, {"Replaced.", "Current git branch: main"}, {"Replaced.", "Current git branch: main"},
	}
	for n := 0; n <= len(prefixConversation); n++ {
		body, err := EncodeRequest(serializers.Request{Model: "m", Messages: prefixConversation[:n]}, Options{})
		require.NoError(t, err)
		var systems, others []string
		for _, m := range wireMsgs(t, body) {
			if m["role"] == "system" {
				require.Empty(t, others, "n=%d: a system message after a non-system one", n)
				systems = append(systems, m["content"].(string))
				continue
			}
			others = append(others, m["content"].(string))
		}
		require.Equal(t, wantSystems[n], append([]string{}, systems...), "n=%d", n)
		require.Equal(t, c.Texts(c.EffectiveSystem(conv.Messages[:n])), append([]string{}, systems...), "n=%d", n)
		var wantOthers []string
		for _, m := range prefixConversation[:n] {
			if m.Role == c.RoleSystem {
				continue
			}
			wantOthers = append(wantOthers, m.Text())
		}
		require.Equal(t, wantOthers, others, "n=%d", n)
	}
}

func TestEncodeToolRoundShape(t *testing.T) {
	t.Parallel()
	body, err := EncodeRequest(serializers.Request{Model: "m", Messages: toolRound}, Options{})
	require.NoError(t, err)
	msgs := wireMsgs(t, body)
	roles := make([]string, len(msgs))
	for i, m := range msgs {
		roles[i] = m["role"].(string)
	}
	require.Equal(t, []string{"system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"}, roles)

	first := msgs[2]
	require.Equal(t, "Checking both.", first["content"], "thinking must not leak into content")
	calls := first["tool_calls"].([]any)
	require.Len(t, calls, 2)
	fn := calls[0].(map[string]any)["function"].(map[string]any)
	require.Equal(t, `{"city": "Paris"}`, fn["arguments"], "arguments are the input JSON as a string")
	require.Equal(t, "{}", calls[1].(map[string]any)["function"].(map[string]any)["arguments"])

	require.Equal(t, map[string]any{"role": "tool", "tool_call_id": "call_a", "content": "18°C, <clear> & dry"}, msgs[3])
	require.Equal(t, "Error: unknown time zone", msgs[4]["content"])
	require.Contains(t, msgs[5], "content")
	require.Nil(t, msgs[5]["content"], "an assistant message with only tool calls has content null")
	require.NotContains(t, string(body), "Two independent calls", "thinking is not sent")
	require.NotContains(t, string(body), "opaque", "redacted thinking is not sent")
}

func TestEncodeRequestErrors(t *testing.T) {
	t.Parallel()
	user := c.UserText("hi")
	tests := []struct {
		name string
		req  serializers.Request
		opts Options
		want string
	}{
		{"unknown role", serializers.Request{Messages: []c.Message{user, {Role: "robot"}}}, Options{},
			`openai: encode request: message 1: unknown role "robot"`},
		{"text in tool message", serializers.Request{Messages: []c.Message{user, msg(c.RoleTool, c.Text("x"))}}, Options{},
			`openai: encode request: message 1: content[0]: a tool message cannot hold a "text" block`},
		{"thinking in user message", serializers.Request{Messages: []c.Message{msg(c.RoleUser, c.Thinking("x", ""))}}, Options{},
			`openai: encode request: message 0: content[0]: a user message cannot hold a "thinking" block`},
		{"image in assistant message", serializers.Request{Messages: []c.Message{user, msg(c.RoleAssistant, c.Image("image/png", "x"))}}, Options{},
			`openai: encode request: message 1: content[0]: an assistant message cannot hold a "image" block`},
		{"tool use without id", serializers.Request{Messages: []c.Message{user, msg(c.RoleAssistant, c.ToolUse("", "f", nil))}}, Options{},
			`openai: encode request: message 1: content[0]: tool_use block: id and name are required`},
		{"tool input not JSON", serializers.Request{Messages: []c.Message{user, msg(c.RoleAssistant, c.ToolUse("call_1", "f", json.RawMessage(`{"a":`)))}}, Options{},
			`openai: encode request: message 1: content[0]: tool call call_1 (f): input is not a JSON object`},
		{"tool input not object", serializers.Request{Messages: []c.Message{user, msg(c.RoleAssistant, c.ToolUse("call_1", "f", json.RawMessage(`[1]`)))}}, Options{},
			`openai: encode request: message 1: content[0]: tool call call_1 (f): input is not a JSON object`},
		{"tool result without id", serializers.Request{Messages: []c.Message{user, msg(c.RoleTool, c.ToolResult("", "x", false))}}, Options{},
			`openai: encode request: message 1: content[0]: tool_result block: tool_use_id is required`},
		{"tool result holding a tool use", serializers.Request{Messages: []c.Message{user, msg(c.RoleTool, c.Block{Type: c.TypeToolResult, ToolUseID: "call_1", Content: []c.Block{c.ToolUse("x", "y", nil)}})}}, Options{},
			`openai: encode request: message 1: content[0]: tool result call_1: content[0] is "tool_use" (want text or image)`},
		{"image without data", serializers.Request{Messages: []c.Message{msg(c.RoleUser, c.Text("a"), c.Image("image/png", ""))}}, Options{},
			`openai: encode request: message 0: content[1]: image block: media_type and data are required`},
		{"unknown max tokens field", serializers.Request{Messages: []c.Message{user}}, Options{MaxTokensField: "max_output_tokens"},
			`openai: encode request: unknown MaxTokensField "max_output_tokens" (want "max_tokens" or "max_completion_tokens")`},
		{"prompt cache key too long", serializers.Request{Messages: []c.Message{user}, Cache: serializers.Cache{Key: strings.Repeat("k", 65)}}, Options{PromptCacheKey: true},
			`openai: encode request: prompt cache key is 65 bytes, want at most 64`},
		{"negative max tokens", serializers.Request{Messages: []c.Message{user}, MaxTokens: -1}, Options{},
			`openai: encode request: negative MaxTokens -1`},
		{"tool without name", serializers.Request{Messages: []c.Message{user}, Tools: []serializers.Tool{weatherTool, {}}}, Options{},
			`openai: encode request: tool 1: name is required`},
		{"tool parameters not an object", serializers.Request{Messages: []c.Message{user}, Tools: []serializers.Tool{{Name: "f", Parameters: json.RawMessage(`"x"`)}}}, Options{},
			`openai: encode request: tool 0: f: parameters are not a JSON object`},
		{"named tool choice without name", serializers.Request{Messages: []c.Message{user}, Tools: []serializers.Tool{timeTool}, ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceTool}}, Options{},
			`openai: encode request: tool choice: mode tool needs a Name`},
		{"unknown tool choice", serializers.Request{Messages: []c.Message{user}, Tools: []serializers.Tool{timeTool}, ToolChoice: serializers.ToolChoice{Mode: "sometimes"}}, Options{},
			`openai: encode request: tool choice: unknown mode "sometimes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := EncodeRequest(tt.req, tt.opts)
			require.EqualError(t, err, tt.want)
			require.Nil(t, got)
		})
	}
}

func TestReasoningEffort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		budget int
		want   string
	}{{0, ""}, {-5, ""}, {1, "low"}, {4095, "low"}, {4096, "medium"}, {16383, "medium"}, {16384, "high"}, {1 << 30, "high"}}
	for _, tt := range tests {
		require.Equal(t, tt.want, reasoningEffort(tt.budget), "budget %d", tt.budget)
	}
}
