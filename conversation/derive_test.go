package conversation

import (
	"fmt"
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
		require.Equal(t, w, Texts(EffectiveSystem(c.Messages[:n])), "prompt as of message %d", n)
	}
	require.Equal(t, want[len(want)-1], Texts(c.EffectiveSystem()))
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

// keyed returns a keyed system message with a source.
func keyed(key, text string) Message { return KeyedSystemMessage(key, text).WithSource("ext " + key) }

func TestEffectiveSystemKeyed(t *testing.T) {
	t.Parallel()
	seed, note := SystemMessage("seed", ModeAppend), SystemMessage("note", ModeAppend)
	keyedReplace := func(key, text string) Message {
		m := SystemMessage(text, ModeReplace)
		m.Content[0].Key = key
		return m
	}
	tests := []struct {
		name string
		msgs []Message
		want []SystemText
	}{
		{"a new key is added at the end", []Message{seed, keyed("tools", "t1"), note},
			[]SystemText{{Text: "seed", Index: 0}, {Text: "t1", Key: "tools", Source: "ext tools", Index: 1}, {Text: "note", Index: 2}}},
		{"an update keeps the position, takes the text, source and index", []Message{
			seed, keyed("tools", "t1"), note, UserText("u"), KeyedSystemMessage("tools", "t2").WithSource("other"),
		}, []SystemText{{Text: "seed", Index: 0}, {Text: "t2", Key: "tools", Source: "other", Index: 4}, {Text: "note", Index: 2}}},
		{"an empty text removes the block", []Message{seed, keyed("tools", "t1"), note, keyed("tools", "")},
			[]SystemText{{Text: "seed", Index: 0}, {Text: "note", Index: 2}}},
		{"a removed key comes back at the end", []Message{keyed("tools", "t1"), note, keyed("tools", ""), keyed("tools", "t2")},
			[]SystemText{{Text: "note", Index: 1}, {Text: "t2", Key: "tools", Source: "ext tools", Index: 3}}},
		{"a new key with an empty text adds nothing", []Message{seed, keyed("tools", "")},
			[]SystemText{{Text: "seed", Index: 0}}},
		{"an unkeyed empty append is kept, as before keys", []Message{seed, SystemMessage("", ModeAppend)},
			[]SystemText{{Text: "seed", Index: 0}, {Text: "", Index: 1}}},
		{"two keys are two sections", []Message{keyed("a", "1"), keyed("b", "2"), keyed("a", "3"), keyed("B", "4")},
			[]SystemText{{Text: "3", Key: "a", Source: "ext a", Index: 2}, {Text: "2", Key: "b", Source: "ext b", Index: 1}, {Text: "4", Key: "B", Source: "ext B", Index: 3}}},
		{"a replace wipes keyed blocks too", []Message{seed, keyed("tools", "t1"), SystemMessage("persona", ModeReplace), keyed("tools", "t2")},
			[]SystemText{{Text: "persona", Index: 2}, {Text: "t2", Key: "tools", Source: "ext tools", Index: 3}}},
		{"a keyed replace starts the list with its section", []Message{
			seed, keyed("tools", "t1"), keyedReplace("base", "b1"), note, keyed("base", "b2"),
		}, []SystemText{{Text: "b2", Key: "base", Source: "ext base", Index: 4}, {Text: "note", Index: 3}}},
		{"a keyed replace with an empty text leaves nothing", []Message{seed, keyed("tools", "t1"), keyedReplace("base", "")}, nil},
		{"an unkeyed append does not touch sections", []Message{keyed("tools", "t1"), SystemMessage("t1", ModeAppend)},
			[]SystemText{{Text: "t1", Key: "tools", Source: "ext tools", Index: 0}, {Text: "t1", Index: 1}}},
		{"a section is one block of a message of several", []Message{
			{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "k1", Key: "k"}, System("rest", ModeAppend)}},
			keyed("k", "k2"),
		}, []SystemText{{Text: "k2", Key: "k", Source: "ext k", Index: 1}, {Text: "rest", Index: 0}}},
		{"a key on another role's block is ignored", []Message{
			seed, {Role: RoleUser, Content: []Block{{Type: TypeSystem, Text: "", Key: "k"}}},
		}, []SystemText{{Text: "seed", Index: 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := EffectiveSystem(tt.msgs)
			if tt.want == nil {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// TestEffectiveSystemManySections goes past mapFrom, where sections are
// found through a map: updates in place, removals, re-adds and a replace.
func TestEffectiveSystemManySections(t *testing.T) {
	t.Parallel()
	const n = 3 * mapFrom
	var msgs []Message
	var want []string
	for i := range n {
		msgs = append(msgs, keyed(fmt.Sprint("k", i), fmt.Sprint("v", i)), SystemMessage(fmt.Sprint("u", i), ModeAppend))
		want = append(want, fmt.Sprint("v", i), fmt.Sprint("u", i))
	}
	for i := n - 1; i >= 0; i -= 2 { // update the odd ones, remove the even ones
		msgs = append(msgs, keyed(fmt.Sprint("k", i), fmt.Sprint("w", i)), keyed(fmt.Sprint("k", i-1), ""))
		want[2*i] = fmt.Sprint("w", i)
		want = append(want[:2*(i-1)], want[2*(i-1)+1:]...)
	}
	msgs = append(msgs, keyed("k0", "again"))
	want = append(want, "again")
	require.Equal(t, want, Texts(EffectiveSystem(msgs)))

	msgs = append(msgs, SystemMessage("fresh", ModeReplace), keyed("k1", "x"), keyed("k0", ""))
	require.Equal(t, []SystemText{{Text: "fresh", Index: len(msgs) - 3}, {Text: "x", Key: "k1", Source: "ext k1", Index: len(msgs) - 2}}, EffectiveSystem(msgs))
}

func TestConversationSetSection(t *testing.T) {
	t.Parallel()
	var c Conversation
	c.AddSystemMessage("seed")
	c.SetSection("env", "cwd: /a")
	c.AddSystemMessage("note")
	c.SetSection("env", "cwd: /b")
	require.Equal(t, []string{"seed", "cwd: /b", "note"}, Texts(c.EffectiveSystem()))
	require.Equal(t, []string{"seed", "cwd: /a", "note"}, Texts(EffectiveSystem(c.Messages[:3])))
	c.SetSection("env", "")
	require.Equal(t, []string{"seed", "note"}, Texts(c.EffectiveSystem()))
	require.Equal(t, Message{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "", Mode: ModeAppend, Key: "env"}}}, c.Messages[4])
}

func TestWithSourceDoesNotChangeTheOriginal(t *testing.T) {
	t.Parallel()
	m := SystemMessage("x", ModeReplace)
	s := m.WithSource("--system-prompt")
	require.Equal(t, "", m.Content[0].Source)
	require.Equal(t, Block{Type: TypeSystem, Text: "x", Mode: ModeReplace, Source: "--system-prompt"}, s.Content[0])
	u := UserText("hi").WithSource("nobody")
	require.Equal(t, UserText("hi"), u, "only System blocks get a source")
}
