package conversation

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// What the user typed is kept apart from what panto added to their
// message (a USER_PROMPT.md, marked added): Typed gives it back, from a
// message written with the marker and from one written before it.
func TestTyped(t *testing.T) {
	t.Parallel()
	up := AddedText("Answer in one paragraph.\n", "project /p/.panto/USER_PROMPT.md")
	png := Image("image/png", "AA==")
	for _, tc := range []struct {
		name string
		msg  Message
		want string
	}{
		{"typed only", UserText("fix the bug"), "fix the bug"},
		{"after a USER_PROMPT.md", Message{Role: RoleUser, Content: []Block{up, AddedText("Be kind.", "user /u/USER_PROMPT.md"), Text("fix the bug")}}, "fix the bug"},
		{"the marks decide, not the order", Message{Role: RoleUser, Content: []Block{Text("a"), up, Text("b")}}, "ab"},
		{"only what panto added", Message{Role: RoleUser, Content: []Block{up}}, ""},
		{"typed nothing", Message{Role: RoleUser, Content: []Block{up, Text("")}}, ""},
		{"an image is not text", Message{Role: RoleUser, Content: []Block{up, Text("see"), png}}, "see"},
		// Written before the marker: panto put each USER_PROMPT.md first
		// and what was typed last, one block each.
		{"old log", Message{Role: RoleUser, Content: []Block{Text("Answer in one paragraph.\n"), Text("fix the bug")}}, "fix the bug"},
		{"old log, an image after", Message{Role: RoleUser, Content: []Block{Text("rules"), Text("see"), png}}, "see"},
		{"no text", Message{Role: RoleUser, Content: []Block{png}}, ""},
		{"empty", Message{Role: RoleUser}, ""},
	} {
		require.Equal(t, tc.want, tc.msg.Typed(), tc.name)
		require.NoError(t, tc.msg.Validate(), tc.name)
	}
	// What is sent is every block, as before.
	m := Message{Role: RoleUser, Content: []Block{up, Text("fix the bug")}}
	require.Equal(t, "Answer in one paragraph.\nfix the bug", m.Text())
	require.Equal(t, Block{Type: TypeText, Added: "panto", Text: "x"}, AddedText("x", ""))
}

// Only a text block of a user message may be marked added.
func TestAddedOnlyOnUserText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg  Message
		want string
	}{
		{Message{Role: RoleAssistant, Content: []Block{AddedText("x", "s")}}, "invalid message: assistant message content[0]: only a text block of a user message may be marked added"},
		{Message{Role: RoleUser, Content: []Block{{Type: TypeImage, MediaType: "image/png", Data: "AA==", Added: "s"}}}, "invalid message: user message content[0]: image block: only a text block of a user message may be marked added"},
		{Message{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "x", Added: "s"}}}, "invalid message: system message content[0]: system block: only a text block of a user message may be marked added"},
		{Message{Role: RoleTool, Content: []Block{{Type: TypeToolResult, ToolUseID: "t", Content: []Block{AddedText("x", "s")}}}}, "invalid message: tool message content[0]: tool_result block t: content[0]: only a text block of a user message may be marked added"},
	} {
		require.EqualError(t, tc.msg.Validate(), tc.want)
	}
}

// The marker's JSON: "added" before the text, only when set; read back
// as written; on a system message's block an error.
func TestAddedJSON(t *testing.T) {
	t.Parallel()
	m := Message{Role: RoleUser, Content: []Block{AddedText("rules", "project /p/.panto/USER_PROMPT.md"), Text("hi")}}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	require.Equal(t, `{"role":"user","content":[{"type":"text","added":"project /p/.panto/USER_PROMPT.md","text":"rules"},{"type":"text","text":"hi"}]}`, string(out))
	var back Message
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, m, back)
	all, err := UnmarshalMessages([]byte("[" + string(out) + "]"))
	require.NoError(t, err)
	require.Equal(t, []Message{m}, all)

	var sys Message
	require.EqualError(t, json.Unmarshal([]byte(`{"role":"system","mode":"append","content":[{"type":"text","added":"x","text":"rules"}]}`), &sys),
		"system message content[0] is marked added: only a text block of a user message may be")
	_, err = json.Marshal(Message{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "x", Added: "s"}}})
	require.ErrorContains(t, err, "system message content[0] is marked added")
}
