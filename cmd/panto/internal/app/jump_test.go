package app

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// userPrompt is a USER_PROMPT.md block as panto puts it before what the
// user typed.
func userPrompt() conversation.Block {
	return conversation.AddedText("Answer in one paragraph.\nAlways.", "project /p/.panto/USER_PROMPT.md")
}

// typedMessage is a user message: the USER_PROMPT.md block panto added,
// then what the user typed.
func typedMessage(typed string) conversation.Message {
	return conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{userPrompt(), conversation.Text(typed)}}
}

// withID gives e the id id (16 hex digits, as a writer makes them), so a
// test can name a prefix two entries share.
func withID(e sessionlog.Entry, id, parent string) sessionlog.Entry {
	e.ID, e.ParentID = id, parent
	return e
}

// jumpTree is a log with two branches after a reply that called tools:
//
//	a000 system
//	a100 user  (USER_PROMPT.md + "fix the lexer bug\nplease")
//	a200 assistant: two tool calls
//	a300 tool results
//	a400 assistant "done"
//	├─ b500 user (USER_PROMPT.md + "now the " + "escapes")
//	│  b600 assistant "ok"
//	└─ c700 user "plain, from an old log" (nothing marked added)
func jumpTree(t *testing.T) *sessionlog.Tree {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	twoTyped := conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{
		userPrompt(), conversation.Text("now the "), conversation.Text("escapes"),
	}}
	old := conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{
		conversation.Text("Answer in one paragraph.\n"), conversation.Text("plain, from an old log"),
	}}
	_, err = w.Append(
		withID(sessionlog.MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend)), "a000000000000000", ""),
		withID(sessionlog.MessageEntry(typedMessage("fix the lexer bug\nplease")), "a100000000000000", "a000000000000000"),
		withID(sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
			conversation.Text("Reading."),
			conversation.ToolUse("c1", "read", []byte(`{"path":"lex.go"}`)),
			conversation.ToolUse("c2", "read", []byte(`{"path":"lex_test.go"}`)),
		}}), "a200000000000000", "a100000000000000"),
		withID(sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{
			conversation.ToolResult("c1", "package lex", false),
			conversation.ToolResult("c2", "package lex", false),
		}}), "a300000000000000", "a200000000000000"),
		withID(sessionlog.MessageEntry(conversation.AssistantText("done")), "a400000000000000", "a300000000000000"),
		withID(sessionlog.MessageEntry(twoTyped), "b500000000000000", "a400000000000000"),
		withID(sessionlog.MessageEntry(conversation.AssistantText("ok")), "b600000000000000", "b500000000000000"),
		withID(sessionlog.MessageEntry(old), "c700000000000000", "a400000000000000"),
	)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	tree, err := sessionlog.Scan(path)
	require.NoError(t, err)
	return tree
}

// A jump to a message of the user's goes to before it, handing back what
// the user typed in it, never the USER_PROMPT.md text panto added; a jump
// to a reply that called tools goes past their results; any other entry
// is gone to as it is, with nothing to retype. A unique prefix names an
// entry as its id does.
func TestJump(t *testing.T) {
	t.Parallel()
	tree := jumpTree(t)
	for _, tc := range []struct {
		ref, to, retype string
	}{
		{"a100000000000000", "a000000000000000", "fix the lexer bug\nplease"},
		{"a1", "a000000000000000", "fix the lexer bug\nplease"},
		{"b5", "a400000000000000", "now the escapes"},
		{"c7", "a400000000000000", "plain, from an old log"},
		{"a2", "a300000000000000", ""},
		{"a3", "a300000000000000", ""},
		{"a4", "a400000000000000", ""},
		{"b6", "b600000000000000", ""},
		{"a0", "a000000000000000", ""},
	} {
		to, retype, err := Jump(tree, tc.ref)
		require.NoErrorf(t, err, "jump to %s", tc.ref)
		require.Equalf(t, tc.to, to, "jump to %s goes to", tc.ref)
		require.Equalf(t, tc.retype, retype, "jump to %s hands back", tc.ref)
		require.NotContainsf(t, retype, "Answer in one paragraph", "jump to %s: never the USER_PROMPT.md text", tc.ref)
	}
}

// A ref that names no entry, or more than one, is an error that says so
// and goes nowhere.
func TestJumpUnknownOrAmbiguous(t *testing.T) {
	t.Parallel()
	tree := jumpTree(t)

	to, retype, err := Jump(tree, "a")
	require.Error(t, err)
	require.Contains(t, err.Error(), `"a" is ambiguous`)
	require.Contains(t, err.Error(), "give more of the id")
	require.Empty(t, to)
	require.Empty(t, retype)

	to, retype, err = Jump(tree, "d0")
	require.Error(t, err)
	require.Contains(t, err.Error(), `no entry "d0"`)
	require.Empty(t, to)
	require.Empty(t, retype)

	to, _, err = Jump(tree, "not-an-id")
	require.Error(t, err)
	require.Contains(t, err.Error(), "not-an-id")
	require.Empty(t, to)

	_, _, err = Jump(tree, "")
	require.Error(t, err, "no ref is no entry")
}
