package conversation

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEffectiveSystem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msgs []Message
		want []string
	}{
		{"empty", nil, nil},
		{"no system", []Message{UserText("hi"), AssistantText("hello")}, nil},
		{"appends in order", []Message{
			SystemMessage("seed", ModeAppend), SystemMessage("a1", ModeAppend), UserText("hi"), SystemMessage("a2", ModeAppend),
		}, []string{"seed", "a1", "a2"}},
		{"replace wipes everything before it", []Message{
			SystemMessage("seed", ModeAppend), SystemMessage("a1", ModeAppend), UserText("hi"),
			SystemMessage("new seed", ModeReplace), SystemMessage("b1", ModeAppend),
		}, []string{"new seed", "b1"}},
		{"replace as the last block", []Message{
			SystemMessage("seed", ModeAppend), SystemMessage("only", ModeReplace),
		}, []string{"only"}},
		{"empty mode means append", []Message{
			{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "x"}}},
			{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "y"}}},
		}, []string{"x", "y"}},
		{"non-system blocks and roles are ignored", []Message{
			{Role: RoleSystem, Content: []Block{Text("not a system block")}},
			{Role: RoleUser, Content: []Block{System("user cannot set the prompt", ModeReplace)}},
			SystemMessage("kept", ModeAppend),
		}, []string{"kept"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := EffectiveSystem(tt.msgs)
			if tt.want == nil {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tt.want, Texts(got))
		})
	}
}

func TestEffectiveSystemIndexNamesTheSourceMessage(t *testing.T) {
	t.Parallel()
	msgs := []Message{SystemMessage("a", ModeAppend), UserText("u"), SystemMessage("b", ModeReplace), SystemMessage("c", ModeAppend)}
	require.Equal(t, []SystemText{{Text: "b", Index: 2}, {Text: "c", Index: 3}}, EffectiveSystem(msgs))
}

func TestPromptAtEveryPrefix(t *testing.T) {
	t.Parallel()
	var c Conversation
	c.AddSystemMessage("seed")          // 1
	c.Append(UserText("q1"))            // 2
	c.AddSystemMessage("ext note")      // 3
	c.ReplaceSystemMessage("persona")   // 4
	c.Append(AssistantText("a1"))       // 5
	c.AddSystemMessage("after persona") // 6
	want := [][]string{
		{},
		{"seed"},
		{"seed"},
		{"seed", "ext note"},
		{"persona"},
		{"persona"},
		{"persona", "after persona"},
	}
	for n, w := range want {
		require.Equal(t, w, Texts(c.PromptAt(n)), "prompt as of message %d", n)
	}
	require.Equal(t, want[len(want)-1], Texts(c.EffectiveSystem()))
	require.Empty(t, c.PromptAt(-3))
	require.Equal(t, want[6], Texts(c.PromptAt(99)))
}

func TestConversationMethodsRecordMode(t *testing.T) {
	t.Parallel()
	var c Conversation
	c.AddSystemMessage("a")
	c.ReplaceSystemMessage("b")
	require.Equal(t, []Message{
		{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "a", Mode: ModeAppend}}},
		{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "b", Mode: ModeReplace}}},
	}, c.Messages)
}

func TestNonSystemKeepsOrder(t *testing.T) {
	t.Parallel()
	msgs := []Message{SystemMessage("s", ModeAppend), UserText("1"), SystemMessage("t", ModeReplace), AssistantText("2")}
	require.Equal(t, []Message{UserText("1"), AssistantText("2")}, NonSystem(msgs))
}
