package anthropic_test

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
)

const model = "claude-sonnet-4-5"

var (
	sys     = conversation.SystemMessage
	user    = conversation.UserText
	asst    = conversation.AssistantText
	appendM = conversation.ModeAppend
	replace = conversation.ModeReplace
)

// section is a keyed system message (a section) from the extension named
// after its key: the source must never reach the wire.
func section(key, text string) conversation.Message {
	return conversation.KeyedSystemMessage(key, text).WithSource("extension " + key)
}

// noSources checks that no section's source was sent.
func noSources(t *testing.T, b body) {
	t.Helper()
	require.NotContains(t, string(mustJSON(t, b)), "extension ")
}

func msg(role conversation.Role, blocks ...conversation.Block) conversation.Message {
	return conversation.Message{Role: role, Content: blocks}
}

func temp(v float64) *float64 { return &v }

// body is a request body decoded for the explicit checks of a case.
type body map[string]any

func decodeBody(t *testing.T, b []byte) body {
	t.Helper()
	var out body
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// system returns the body's system string; ok is false when the field is
// absent.
func (b body) system(t *testing.T) (string, bool) {
	t.Helper()
	v, ok := b["system"]
	if !ok {
		return "", false
	}
	s, isString := v.(string)
	require.True(t, isString, "system is %T, want a string", v)
	return s, true
}

// roles returns the role of each wire message.
func (b body) roles() []string {
	var out []string
	for _, m := range b["messages"].([]any) {
		out = append(out, m.(map[string]any)["role"].(string))
	}
	return out
}

// blockTypes returns the block types of wire message i.
func (b body) blockTypes(i int) []string {
	var out []string
	for _, c := range b["messages"].([]any)[i].(map[string]any)["content"].([]any) {
		out = append(out, c.(map[string]any)["type"].(string))
	}
	return out
}

// block returns block j of wire message i.
func (b body) block(i, j int) map[string]any {
	return b["messages"].([]any)[i].(map[string]any)["content"].([]any)[j].(map[string]any)
}

// prefixConversation exercises the "prompt as of message N" property.
var prefixConversation = []conversation.Message{
	sys("Seed prompt.\n", appendM),  // 0
	user("q1"),                      // 1
	sys("Extension note.", appendM), // 2
	asst("a1"),                      // 3
	sys("Reseeded.\n\n", replace),   // 4
	user("q2"),                      // 5
	sys("Late note.\r\n", appendM),  // 6
	asst("a2"),                      // 7
	user("q3"),                      // 8
}

// prefixSystem is the system string expected for prefixConversation[:N].
var prefixSystem = []string{
	0: "",
	1: "Seed prompt.",
	2: "Seed prompt.",
	3: "Seed prompt.\n\n---\n\nExtension note.",
	4: "Seed prompt.\n\n---\n\nExtension note.",
	5: "Reseeded.",
	6: "Reseeded.",
	7: "Reseeded.\n\n---\n\nLate note.",
	8: "Reseeded.\n\n---\n\nLate note.",
	9: "Reseeded.\n\n---\n\nLate note.",
}

var weatherTool = serializers.Tool{
	Name:        "get_weather",
	Description: "Current weather for a city.",
	Parameters:  json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`),
}

var readTool = serializers.Tool{Name: "read_file", Description: "Read a file."}

const pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// requestCase is one golden request body. check makes the property the
// case is about explicit, so that -update cannot bless a regression.
type requestCase struct {
	name  string
	req   serializers.Request
	opts  anthropic.Options
	check func(t *testing.T, b body)
}

func requestCases() []requestCase {
	cases := []requestCase{
		{
			name: "system_append_joined",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("You are panto, a coding agent.\n", appendM),
				sys("Project rules:\n- be terse\n- run the tests\n\n", appendM),
				sys("User preference: British spelling.\r\n", appendM),
				user("Hello"),
			}},
			check: func(t *testing.T, b body) {
				s, ok := b.system(t)
				require.True(t, ok)
				require.Equal(t, "You are panto, a coding agent.\n\n---\n\nProject rules:\n- be terse\n- run the tests\n\n---\n\nUser preference: British spelling.", s)
				require.Equal(t, []string{"user"}, b.roles())
			},
		},
		{
			name: "system_replace_wipes_earlier",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("Old seed.", appendM),
				sys("Old append.", appendM),
				sys("New seed.\n", replace),
				sys("New append.", appendM),
				user("Hello"),
			}},
			check: func(t *testing.T, b body) {
				s, _ := b.system(t)
				require.Equal(t, "New seed.\n\n---\n\nNew append.", s)
			},
		},
		{
			name: "system_interleaved_mid_conversation",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("Seed.", appendM),
				user("First question"),
				asst("First answer"),
				sys("Branch is main.", appendM),
				user("Second question"),
				sys("Replaced by an extension.", replace),
				asst("Second answer"),
				sys("Extra.", appendM),
				user("Third question"),
			}},
			check: func(t *testing.T, b body) {
				s, _ := b.system(t)
				require.Equal(t, "Replaced by an extension.\n\n---\n\nExtra.", s)
				require.Equal(t, []string{"user", "assistant", "user", "assistant", "user"}, b.roles())
				require.NotContains(t, string(mustJSON(t, b["messages"])), `"system"`)
			},
		},
		{
			name: "system_between_user_messages_merges",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				user("Before"),
				sys("Note.", appendM),
				user("After"),
			}},
			check: func(t *testing.T, b body) {
				require.Equal(t, []string{"user"}, b.roles())
				require.Equal(t, []string{"text", "text"}, b.blockTypes(0))
			},
		},
		{
			name: "no_system",
			req:  serializers.Request{Model: model, Messages: []conversation.Message{user("Hello")}},
			check: func(t *testing.T, b body) {
				_, ok := b.system(t)
				require.False(t, ok, "no system message: the field must be absent")
				require.EqualValues(t, anthropic.DefaultMaxTokens, b["max_tokens"])
			},
		},
		{
			name: "system_empty_blocks_skipped",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("", appendM),
				sys("Kept.\n", appendM),
				sys("\n\r\n", appendM),
				sys("Also kept.", appendM),
				user("Hello"),
			}},
			check: func(t *testing.T, b body) {
				s, _ := b.system(t)
				require.Equal(t, "Kept.\n\n---\n\nAlso kept.", s)
			},
		},
		{
			name: "system_replaced_by_empty",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("Seed.", appendM),
				sys("", replace),
				user("Hello"),
			}},
			check: func(t *testing.T, b body) {
				_, ok := b.system(t)
				require.False(t, ok, "an empty effective prompt leaves the field out")
			},
		},
		{
			name: "sections_updated_in_place",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("Seed.\n", appendM),
				section("tools", "Tools: read."),
				sys("Project rules.", appendM),
				user("Hello"),
				asst("Hi"),
				section("tools", "Tools: read, bash.\n"),
				user("Again"),
			}},
			check: func(t *testing.T, b body) {
				s, _ := b.system(t)
				require.Equal(t, "Seed.\n\n---\n\nTools: read, bash.\n\n---\n\nProject rules.", s, "the update takes the section's place")
				require.Equal(t, []string{"user", "assistant", "user"}, b.roles())
				noSources(t, b)
			},
		},
		{
			name: "sections_removed_by_empty_text",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("Seed.", appendM),
				section("env", "cwd: /home/u/project"),
				section("tools", "Tools: read."),
				user("Hello"),
				section("env", ""),
			}},
			check: func(t *testing.T, b body) {
				s, _ := b.system(t)
				require.Equal(t, "Seed.\n\n---\n\nTools: read.", s)
				require.NotContains(t, s, "cwd")
				noSources(t, b)
			},
		},
		{
			name: "sections_wiped_by_replace",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("Seed.", appendM),
				section("tools", "Tools: read."),
				section("env", "cwd: /home/u/project"),
				user("Hello"),
				sys("Persona.", replace),
				section("tools", ""),
				sys("After.", appendM),
			}},
			check: func(t *testing.T, b body) {
				s, _ := b.system(t)
				require.Equal(t, "Persona.\n\n---\n\nAfter.", s, "the replace wiped the sections; removing one that is gone adds nothing")
				noSources(t, b)
			},
		},
		{
			name: "sections_updated_after_replace",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("Seed.", appendM),
				section("tools", "Tools v1."),
				user("Hello"),
				sys("Reseeded.", replace),
				section("tools", "Tools v2."),
				sys("Note.", appendM),
				asst("Hi"),
				section("tools", "Tools v3."),
				user("Again"),
			}},
			check: func(t *testing.T, b body) {
				s, _ := b.system(t)
				require.Equal(t, "Reseeded.\n\n---\n\nTools v3.\n\n---\n\nNote.", s)
				noSources(t, b)
			},
		},
		{
			name: "tool_round",
			req: serializers.Request{Model: model, Tools: []serializers.Tool{weatherTool}, Messages: []conversation.Message{
				sys("Use tools when useful.", appendM),
				user("Weather in Paris and Rome?"),
				msg(conversation.RoleAssistant,
					conversation.Text("Checking both."),
					conversation.ToolUse("toolu_01", "get_weather", json.RawMessage(`{"city": "Paris"}`)),
					conversation.ToolUse("toolu_02", "get_weather", json.RawMessage(`{"city":"Rome"}`))),
				msg(conversation.RoleTool,
					conversation.ToolResult("toolu_01", "18C, cloudy", false),
					conversation.ToolResult("toolu_02", "city not found", true)),
				asst("Paris is 18C; Rome failed."),
			}},
			check: func(t *testing.T, b body) {
				require.Equal(t, []string{"user", "assistant", "user", "assistant"}, b.roles())
				require.Equal(t, []string{"tool_result", "tool_result"}, b.blockTypes(2))
				require.Equal(t, "18C, cloudy", b.block(2, 0)["content"], "one text block travels as a string")
				require.NotContains(t, b.block(2, 0), "is_error", "is_error only when true")
				require.Equal(t, true, b.block(2, 1)["is_error"])
				require.Equal(t, map[string]any{"city": "Paris"}, b.block(1, 1)["input"])
			},
		},
		{
			name: "thinking_signature_verbatim",
			req: serializers.Request{Model: model, MaxTokens: 16000, ThinkingBudget: 4096, Tools: []serializers.Tool{readTool}, Messages: []conversation.Message{
				user("What is in go.mod?"),
				msg(conversation.RoleAssistant,
					conversation.Thinking("The user wants go.mod.\nI should read it.", "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxx/+sig=="),
					conversation.ToolUse("toolu_01", "read_file", json.RawMessage(`{"path":"go.mod"}`))),
				msg(conversation.RoleTool, conversation.ToolResult("toolu_01", "module example.com/x\n", false)),
				msg(conversation.RoleAssistant,
					conversation.Thinking("", "EmptyThinkingStillHasASignature=="),
					conversation.Text("It declares module example.com/x.")),
			}},
			check: func(t *testing.T, b body) {
				th := b.block(1, 0)
				require.Equal(t, "thinking", th["type"])
				require.Equal(t, "The user wants go.mod.\nI should read it.", th["thinking"])
				require.Equal(t, "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxx/+sig==", th["signature"])
				require.Contains(t, b.block(3, 0), "thinking", "an empty thinking text is still sent")
				require.Equal(t, map[string]any{"type": "enabled", "budget_tokens": float64(4096)}, b["thinking"])
			},
		},
		{
			name: "redacted_thinking",
			req: serializers.Request{Model: model, MaxTokens: 4096, ThinkingBudget: 1024, Messages: []conversation.Message{
				user("Hi"),
				msg(conversation.RoleAssistant,
					conversation.RedactedThinking("EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabSyKg=="),
					conversation.Text("Hello!")),
				user("Again"),
			}},
			check: func(t *testing.T, b body) {
				require.Equal(t, []string{"redacted_thinking", "text"}, b.blockTypes(1))
				require.Equal(t, "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabSyKg==", b.block(1, 0)["data"])
			},
		},
		{
			name: "images",
			req: serializers.Request{Model: model, Tools: []serializers.Tool{readTool}, Messages: []conversation.Message{
				msg(conversation.RoleUser, conversation.Text("What is in this picture?"), conversation.Image("image/png", pngData)),
				msg(conversation.RoleAssistant, conversation.ToolUse("toolu_01", "read_file", json.RawMessage(`{"path":"b.webp"}`))),
				msg(conversation.RoleTool, conversation.Block{Type: conversation.TypeToolResult, ToolUseID: "toolu_01", Content: []conversation.Block{
					conversation.Text("b.webp:"),
					conversation.Image("image/webp", "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="),
				}}),
			}},
			check: func(t *testing.T, b body) {
				require.Equal(t, map[string]any{"type": "base64", "media_type": "image/png", "data": pngData}, b.block(0, 1)["source"])
				content := b.block(2, 0)["content"].([]any)
				require.Len(t, content, 2, "text + image travel as an array")
				require.Equal(t, "image", content[1].(map[string]any)["type"])
			},
		},
		{
			name: "merge_consecutive",
			req: serializers.Request{Model: model, Tools: []serializers.Tool{readTool}, Messages: []conversation.Message{
				user("First"),
				msg(conversation.RoleUser, conversation.Text(""), conversation.Text("Second")),
				msg(conversation.RoleAssistant, conversation.Text("Reading.")),
				msg(conversation.RoleAssistant, conversation.ToolUse("toolu_01", "read_file", nil)),
				msg(conversation.RoleTool, conversation.ToolResult("toolu_01", "contents", false)),
				user("And now?"),
				msg(conversation.RoleAssistant, conversation.Text("")),
				user("Hello?"),
				msg(conversation.RoleUser),
			}},
			check: func(t *testing.T, b body) {
				require.Equal(t, []string{"user", "assistant", "user"}, b.roles())
				require.Equal(t, []string{"text", "text"}, b.blockTypes(0), "empty text dropped, two user messages merged")
				require.Equal(t, []string{"text", "tool_use"}, b.blockTypes(1))
				require.Equal(t, map[string]any{}, b.block(1, 1)["input"], "no input means {}")
				require.Equal(t, []string{"tool_result", "text", "text"}, b.blockTypes(2),
					"tool result first; the empty assistant message between the users is dropped and they merge")
			},
		},
		{
			name: "tool_result_first_when_merged",
			req: serializers.Request{Model: model, Tools: []serializers.Tool{readTool}, Messages: []conversation.Message{
				user("Go"),
				msg(conversation.RoleAssistant, conversation.ToolUse("toolu_01", "read_file", json.RawMessage(`{}`))),
				user("(typed while the tool ran)"),
				msg(conversation.RoleTool, conversation.ToolResult("toolu_01", "done", false)),
			}},
			check: func(t *testing.T, b body) {
				require.Equal(t, []string{"tool_result", "text"}, b.blockTypes(2))
			},
		},
		{
			name: "tool_result_content_forms",
			req: serializers.Request{Model: model, Tools: []serializers.Tool{readTool}, Messages: []conversation.Message{
				user("Go"),
				msg(conversation.RoleAssistant,
					conversation.ToolUse("toolu_01", "read_file", nil),
					conversation.ToolUse("toolu_02", "read_file", nil),
					conversation.ToolUse("toolu_03", "read_file", nil)),
				msg(conversation.RoleTool,
					conversation.ToolResult("toolu_01", "", true),
					conversation.Block{Type: conversation.TypeToolResult, ToolUseID: "toolu_02", Content: []conversation.Block{
						conversation.Text("part one"), conversation.Text(""), conversation.Text("part two"),
					}},
					conversation.Block{Type: conversation.TypeToolResult, ToolUseID: "toolu_03", Content: []conversation.Block{
						conversation.Text(""), conversation.Text("only"),
					}}),
			}},
			check: func(t *testing.T, b body) {
				require.NotContains(t, b.block(2, 0), "content", "nothing to send: content left out")
				require.Equal(t, true, b.block(2, 0)["is_error"])
				require.Len(t, b.block(2, 1)["content"], 2, "two texts travel as an array")
				require.Equal(t, "only", b.block(2, 2)["content"], "one text left: a string")
			},
		},
		{
			name: "tools_choice_thinking",
			req: serializers.Request{
				Model: model, MaxTokens: 20000, ThinkingBudget: 10000, Temperature: temp(1),
				Tools:      []serializers.Tool{weatherTool, readTool},
				ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceAuto, DisableParallel: true},
				Messages:   []conversation.Message{user("Weather?")},
			},
			check: func(t *testing.T, b body) {
				tools := b["tools"].([]any)
				require.Len(t, tools, 2)
				require.Equal(t, map[string]any{"type": "object"}, tools[1].(map[string]any)["input_schema"], "default schema")
				require.Equal(t, map[string]any{"type": "auto", "disable_parallel_tool_use": true}, b["tool_choice"])
				require.EqualValues(t, 20000, b["max_tokens"])
				require.EqualValues(t, 1, b["temperature"])
			},
		},
		{
			name: "tool_choice_tool",
			req: serializers.Request{
				Model: model, Temperature: temp(0.25),
				Tools:      []serializers.Tool{weatherTool},
				ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceTool, Name: "get_weather"},
				Messages:   []conversation.Message{user("Weather in Oslo")},
			},
			check: func(t *testing.T, b body) {
				require.Equal(t, map[string]any{"type": "tool", "name": "get_weather"}, b["tool_choice"])
				require.EqualValues(t, 0.25, b["temperature"])
			},
		},
		{
			name: "tool_choice_any",
			req: serializers.Request{
				Model: model, Tools: []serializers.Tool{weatherTool},
				ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceAny, DisableParallel: true},
				Messages:   []conversation.Message{user("Weather?")},
			},
			check: func(t *testing.T, b body) {
				require.Equal(t, map[string]any{"type": "any", "disable_parallel_tool_use": true}, b["tool_choice"])
			},
		},
		{
			name: "tool_choice_none",
			req: serializers.Request{
				Model: model, Tools: []serializers.Tool{weatherTool},
				ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceNone, DisableParallel: true},
				Messages:   []conversation.Message{user("Just talk.")},
			},
			check: func(t *testing.T, b body) {
				require.Equal(t, map[string]any{"type": "none"}, b["tool_choice"], "none has no disable_parallel_tool_use")
			},
		},
		{
			name: "streaming",
			req:  serializers.Request{Model: model, MaxTokens: 1024, Stream: true, Messages: []conversation.Message{user("Stream please")}},
			check: func(t *testing.T, b body) {
				require.Equal(t, true, b["stream"])
			},
		},
		{
			name: "not_streaming_omits_stream",
			req:  serializers.Request{Model: model, MaxTokens: 1024, Messages: []conversation.Message{user("No stream")}},
			check: func(t *testing.T, b body) {
				require.NotContains(t, b, "stream")
				require.NotContains(t, b, "tools")
				require.NotContains(t, b, "tool_choice")
				require.NotContains(t, b, "thinking")
				require.NotContains(t, b, "temperature")
			},
		},
		{
			name: "version_2026_10_21",
			opts: anthropic.Options{Version: anthropic.Version20261021},
			req:  serializers.Request{Model: model, Stream: true, Messages: []conversation.Message{sys("Seed.", appendM), user("Hi")}},
			check: func(t *testing.T, b body) {
				require.NotContains(t, b, "temperature")
			},
		},
		{
			name: "escaping",
			req: serializers.Request{Model: model, Messages: []conversation.Message{
				sys("Quote \" backslash \\ tab \t bell \a <html> & é 日本 \u2028 end\n", appendM),
				user("line1\nline2\r\n\"quoted\" \x00 \x1f \xff ok 🙂"),
			}},
			check: func(t *testing.T, b body) {
				s, _ := b.system(t)
				require.Equal(t, "Quote \" backslash \\ tab \t bell \a <html> & é 日本 \u2028 end", s)
				require.Equal(t, "line1\nline2\r\n\"quoted\" \x00 \x1f \uFFFD ok 🙂", b.block(0, 0)["text"])
			},
		},
	}
	for n := 1; n <= len(prefixConversation); n++ {
		if n != 2 && n != 4 && n != 6 && n != len(prefixConversation) {
			continue
		}
		cases = append(cases, requestCase{
			name: "prefix_" + string(rune('0'+n)),
			req:  serializers.Request{Model: model, Messages: prefixConversation[:n]},
			check: func(t *testing.T, b body) {
				s, _ := b.system(t)
				require.Equal(t, prefixSystem[n], s)
			},
		})
	}
	return append(cases, cacheCases()...)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestEncodeRequestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range requestCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := anthropic.EncodeRequest(tc.req, tc.opts)
			require.NoError(t, err)
			require.True(t, json.Valid(out), "not JSON: %s", out)
			// The body is compact: indenting and compacting again gives the
			// same bytes.
			compacted := mustCompact(t, indent(t, out))
			require.Equal(t, string(compacted), string(out))
			checkGolden(t, filepath.Join(requestsDir, tc.name+".json"), indent(t, out))
			tc.check(t, decodeBody(t, out))
		})
	}
}

func mustCompact(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, b))
	return buf.Bytes()
}

// TestRequestGoldenFilesHaveCases fails on a golden file no case writes
// any more (it would still feed the cross-checks).
func TestRequestGoldenFilesHaveCases(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for _, tc := range requestCases() {
		require.False(t, names[tc.name], "duplicate case %s", tc.name)
		names[tc.name] = true
	}
	for _, f := range goldenFiles(t, requestsDir, "*.json") {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		require.True(t, names[name], "%s has no case in requestCases: delete it", f)
	}
}

// TestSystemPromptPrefix checks the /tree property: encoding the first N
// messages gives the system prompt as it was at N, for every N, and it is
// the join of the prompt as of message N.
func TestSystemPromptPrefix(t *testing.T) {
	t.Parallel()
	conv := conversation.Conversation{Messages: prefixConversation}
	require.Len(t, prefixSystem, len(prefixConversation)+1)
	for n := 0; n <= len(prefixConversation); n++ {
		out, err := anthropic.EncodeRequest(serializers.Request{Model: model, Messages: prefixConversation[:n]}, anthropic.Options{})
		require.NoError(t, err, "prefix %d", n)
		b := decodeBody(t, out)
		got, present := b.system(t)
		require.Equal(t, prefixSystem[n], got, "prefix %d", n)
		require.Equal(t, prefixSystem[n] != "", present, "prefix %d: system present only when non-empty", n)

		var want []string
		for _, s := range conversation.Texts(conversation.EffectiveSystem(conv.Messages[:n])) {
			want = append(want, strings.TrimRight(s, "\r\n"))
		}
		require.Equal(t, strings.Join(want, anthropic.SystemSeparator), got, "prefix %d", n)
	}
}

func TestTrailingNewlinesOnly(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"a\n", "a"},
		{"a\r\n", "a"},
		{"a\n\n\r\n\n", "a"},
		{"a\r", "a\r"}, // a lone CR is not a newline here
		{"a\n \n", "a\n "},
		{"\na", "\na"}, // leading newlines stay
	}
	for _, tt := range tests {
		out, err := anthropic.EncodeRequest(serializers.Request{Model: model, Messages: []conversation.Message{
			sys(tt.in, appendM), sys("b", appendM), user("x"),
		}}, anthropic.Options{})
		require.NoError(t, err)
		got, _ := decodeBody(t, out).system(t)
		require.Equal(t, tt.want+anthropic.SystemSeparator+"b", got, "input %q", tt.in)
	}
}

func TestEncodeRequestErrors(t *testing.T) {
	t.Parallel()
	ok := []conversation.Message{user("hi")}
	tests := []struct {
		name string
		req  serializers.Request
		opts anthropic.Options
		want string
	}{
		{"unknown version", serializers.Request{Model: model, Messages: ok}, anthropic.Options{Version: "2024-01-01"},
			`anthropic: encode request: unknown API version "2024-01-01"`},
		{"temperature under 2026-10-21", serializers.Request{Model: model, Messages: ok, Temperature: temp(0.5)},
			anthropic.Options{Version: anthropic.Version20261021}, "temperature is not accepted by API version 2026-10-21"},
		{"temperature out of range", serializers.Request{Model: model, Messages: ok, Temperature: temp(1.5)}, anthropic.Options{},
			"temperature is 1.5, want 0..1"},
		{"temperature NaN", serializers.Request{Model: model, Messages: ok, Temperature: temp(math.NaN())}, anthropic.Options{},
			"temperature is NaN"},
		{"no model", serializers.Request{Messages: ok}, anthropic.Options{}, "model is required"},
		{"negative max tokens", serializers.Request{Model: model, Messages: ok, MaxTokens: -1}, anthropic.Options{}, "max tokens is -1"},
		{"thinking budget too small", serializers.Request{Model: model, Messages: ok, ThinkingBudget: 1023}, anthropic.Options{},
			"thinking budget is 1023, want 0 (off) or at least 1024"},
		{"thinking budget negative", serializers.Request{Model: model, Messages: ok, ThinkingBudget: -5}, anthropic.Options{},
			"thinking budget is -5"},
		{"thinking budget not below max tokens", serializers.Request{Model: model, Messages: ok, MaxTokens: 2048, ThinkingBudget: 2048},
			anthropic.Options{}, "thinking budget 2048 must be less than max tokens 2048"},
		{"thinking budget not below default max tokens", serializers.Request{Model: model, Messages: ok, ThinkingBudget: anthropic.DefaultMaxTokens},
			anthropic.Options{}, "must be less than max tokens 8192"},
		{"block not allowed for role", serializers.Request{Model: model, Messages: []conversation.Message{
			user("hi"), msg(conversation.RoleAssistant, conversation.ToolResult("t", "x", false)),
		}}, anthropic.Options{}, `anthropic: encode request: message 1: invalid message: assistant message content[0]`},
		{"unknown role", serializers.Request{Model: model, Messages: []conversation.Message{{Role: "developer"}}},
			anthropic.Options{}, `message 0: invalid message: unknown role "developer"`},
		{"bad system mode", serializers.Request{Model: model, Messages: []conversation.Message{
			{Role: conversation.RoleSystem, Content: []conversation.Block{{Type: conversation.TypeSystem, Text: "x", Mode: "prepend"}}},
		}}, anthropic.Options{}, `message 0: invalid message: system message content[0]: system block: unknown mode "prepend"`},
		{"tool input not JSON", serializers.Request{Model: model, Messages: []conversation.Message{
			user("hi"), user("again"), asst("ok"),
			msg(conversation.RoleAssistant, conversation.Text("x"), conversation.ToolUse("toolu_9", "read_file", json.RawMessage(`{"path":`))),
		}}, anthropic.Options{}, "anthropic: encode request: message 3: content[1]: tool_use toolu_9: input: not valid JSON"},
		{"tool input with trailing garbage", serializers.Request{Model: model, Messages: []conversation.Message{
			user("hi"), msg(conversation.RoleAssistant, conversation.Block{Type: conversation.TypeToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{} x`)}),
		}}, anthropic.Options{}, "message 1: content[0]: tool_use t: input: not valid JSON"},
		{"tool input not an object", serializers.Request{Model: model, Messages: []conversation.Message{
			user("hi"), msg(conversation.RoleAssistant, conversation.Block{Type: conversation.TypeToolUse, ID: "t", Name: "n", Input: json.RawMessage(`[1]`)}),
		}}, anthropic.Options{}, "message 1: invalid message: assistant message content[0]: tool_use block t: input is not a JSON object"},
		{"image media type", serializers.Request{Model: model, Messages: []conversation.Message{
			msg(conversation.RoleUser, conversation.Image("image/bmp", "Qk0="))}}, anthropic.Options{},
			`message 0: content[0]: image media type "image/bmp" is not supported`},
		{"image in tool result", serializers.Request{Model: model, Messages: []conversation.Message{
			msg(conversation.RoleTool, conversation.Block{Type: conversation.TypeToolResult, ToolUseID: "t", Content: []conversation.Block{
				conversation.Text("a"), conversation.Image("image/tiff", "AA=="),
			}})}}, anthropic.Options{}, `message 0: content[0]: tool_result t: content[1]: image media type "image/tiff"`},
		{"tool name", serializers.Request{Model: model, Messages: ok, Tools: []serializers.Tool{{Name: "read file"}}}, anthropic.Options{},
			`tool 0: name "read file" must be 1 to 128 letters, digits, _ or -`},
		{"tool schema not JSON", serializers.Request{Model: model, Messages: ok, Tools: []serializers.Tool{{Name: "t", Parameters: json.RawMessage(`{`)}}},
			anthropic.Options{}, "tool t: input schema: not valid JSON"},
		{"tool schema not object", serializers.Request{Model: model, Messages: ok, Tools: []serializers.Tool{{Name: "t", Parameters: json.RawMessage(`[]`)}}},
			anthropic.Options{}, "tool t: input schema: not a JSON object"},
		{"tool choice without name", serializers.Request{Model: model, Messages: ok, Tools: []serializers.Tool{readTool},
			ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceTool}}, anthropic.Options{}, "tool choice tool: a tool name is required"},
		{"tool choice of a tool not offered", serializers.Request{Model: model, Messages: ok, Tools: []serializers.Tool{readTool},
			ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceTool, Name: "write_file"}}, anthropic.Options{},
			`tool choice tool: "write_file" is not among the tools offered`},
		{"tool choice name with auto", serializers.Request{Model: model, Messages: ok, Tools: []serializers.Tool{readTool},
			ToolChoice: serializers.ToolChoice{Mode: serializers.ToolChoiceAuto, Name: "read_file"}}, anthropic.Options{},
			`tool choice auto: a tool name ("read_file") is only for mode tool`},
		{"unknown tool choice", serializers.Request{Model: model, Messages: ok, ToolChoice: serializers.ToolChoice{Mode: "required"}},
			anthropic.Options{}, `unknown tool choice mode "required"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := anthropic.EncodeRequest(tt.req, tt.opts)
			require.Error(t, err)
			require.Nil(t, out)
			require.Contains(t, err.Error(), tt.want)
			require.True(t, strings.HasPrefix(err.Error(), "anthropic: encode request: "), err.Error())
		})
	}
}

// TestEncodeRequestDoesNotMutate guards the caller's conversation: the
// encoder only reads it.
func TestEncodeRequestDoesNotMutate(t *testing.T) {
	t.Parallel()
	for _, tc := range requestCases() {
		before := mustJSON(t, tc.req.Messages)
		_, err := anthropic.EncodeRequest(tc.req, tc.opts)
		require.NoError(t, err)
		require.JSONEq(t, string(before), string(mustJSON(t, tc.req.Messages)), tc.name)
	}
}
