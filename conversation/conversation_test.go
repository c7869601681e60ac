package conversation

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := []Message{
		SystemMessage("s", ModeReplace),
		UserText("hi"),
		{Role: RoleUser, Content: []Block{Text("look"), Image("image/png", "iVBORw0KGgo=")}},
		{Role: RoleAssistant, Content: []Block{Thinking("hmm", "sig"), RedactedThinking("xx"), Text("ok"), ToolUse("t1", "read", json.RawMessage(`{"path":"a"}`))}},
		{Role: RoleTool, Content: []Block{ToolResult("t1", "contents", false), ToolResult("t2", "boom", true)}},
		KeyedSystemMessage("tools/guidance", "use the tools").WithSource("extension tools"),
		KeyedSystemMessage("context:AGENTS.md", ""),
		SystemMessage("x", ModeAppend).WithSource("any text at all, even\nnewlines"),
	}
	for _, m := range ok {
		require.NoError(t, m.Validate(), "%+v", m)
	}
	bad := []struct {
		msg  Message
		want string
	}{
		{Message{Role: "robot"}, `unknown role "robot"`},
		{Message{Role: RoleSystem, Content: []Block{Text("x")}}, `a system message cannot hold a "text" block`},
		{Message{Role: RoleUser, Content: []Block{System("x", ModeAppend)}}, `a user message cannot hold a "system" block`},
		{Message{Role: RoleTool, Content: []Block{Text("x")}}, `a tool message cannot hold a "text" block`},
		{Message{Role: RoleAssistant, Content: []Block{ToolResult("x", "y", false)}}, `cannot hold a "tool_result" block`},
		{Message{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "x", Mode: "prepend"}}}, `unknown mode "prepend"`},
		{Message{Role: RoleAssistant, Content: []Block{{Type: TypeToolUse, Name: "x"}}}, "id and name are required"},
		{Message{Role: RoleAssistant, Content: []Block{{Type: TypeToolUse, ID: "1", Name: "x", Input: json.RawMessage(`[1]`)}}}, "input is not a JSON object"},
		{Message{Role: RoleTool, Content: []Block{{Type: TypeToolResult}}}, "tool_use_id is required"},
		{Message{Role: RoleTool, Content: []Block{{Type: TypeToolResult, ToolUseID: "1", Content: []Block{ToolUse("a", "b", nil)}}}}, `content[0] is "tool_use"`},
		{Message{Role: RoleUser, Content: []Block{{Type: TypeImage}}}, "media_type and data are required"},
		{Message{Role: RoleUser, Content: []Block{{Type: "video"}}}, `cannot hold a "video" block`},
		{KeyedSystemMessage("has space", "x"), `system block: invalid key "has space"`},
		{KeyedSystemMessage(strings.Repeat("k", MaxKeyLen+1), "x"), "invalid key"},
		{Message{Role: RoleUser, Content: []Block{{Type: TypeText, Text: "x", Key: "k"}}}, "text block: only a system block may have a key or a source"},
		{Message{Role: RoleAssistant, Content: []Block{{Type: TypeToolUse, ID: "1", Name: "x", Source: "s"}}}, "tool_use block: only a system block may have a key or a source"},
		{Message{Role: RoleTool, Content: []Block{{Type: TypeToolResult, ToolUseID: "1", Content: []Block{{Type: TypeText, Key: "k"}}}}}, "content[0]: text block: only a system block"},
	}
	for _, tt := range bad {
		err := tt.msg.Validate()
		require.ErrorIs(t, err, ErrInvalidMessage)
		require.ErrorContains(t, err, tt.want)
	}
}

func TestCloneIsDeep(t *testing.T) {
	t.Parallel()
	orig := Message{Role: RoleAssistant, Content: []Block{ToolUse("t1", "read", json.RawMessage(`{"a":1}`))}}
	res := Message{Role: RoleTool, Content: []Block{ToolResult("t1", "x", false)}}
	c1, c2 := orig.Clone(), res.Clone()
	c1.Content[0].Input[2] = 'b'
	c2.Content[0].Content[0].Text = "changed"
	require.JSONEq(t, `{"a":1}`, string(orig.Content[0].Input))
	require.Equal(t, "x", res.Content[0].ResultText())
}

func TestTextAndToolUses(t *testing.T) {
	t.Parallel()
	m := Message{Role: RoleAssistant, Content: []Block{Text("a"), Thinking("t", "s"), ToolUse("1", "x", nil), Text("b"), ToolUse("2", "y", nil)}}
	require.Equal(t, "ab", m.Text())
	uses := m.ToolUses()
	require.Len(t, uses, 2)
	require.Equal(t, "y", uses[1].Name)
	require.JSONEq(t, `{}`, string(uses[0].Input))
}

func FuzzValidText(f *testing.F) {
	f.Add("café")
	f.Add("caf\xe9")
	f.Add("\xf0\x9f\x98")
	f.Fuzz(func(t *testing.T, s string) {
		out := ValidText(s)
		if !utf8.ValidString(out) {
			t.Fatalf("ValidText(%q) = %q, not valid", s, out)
		}
		if utf8.ValidString(s) && out != s {
			t.Fatalf("ValidText changed valid %q to %q", s, out)
		}
	})
}

func TestValidTextShowsEachInvalidRun(t *testing.T) {
	t.Parallel()
	require.Equal(t, "caf\uFFFD and \uFFFDx", ValidText("caf\xe9 and \xff\xfex"))
}

func TestValidKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"a", "tools", "env/cwd", "context:AGENTS.md", "x_y-z.1/2:3", "A9", strings.Repeat("k", MaxKeyLen)} {
		require.True(t, ValidKey(k), "%q", k)
	}
	for _, k := range []string{"", " ", "a b", "tab\t", "new\nline", "caf\u00e9", "a,b", `"q"`, "a*", "#1", strings.Repeat("k", MaxKeyLen+1)} {
		require.False(t, ValidKey(k), "%q", k)
	}
}
