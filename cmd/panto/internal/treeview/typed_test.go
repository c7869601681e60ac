package treeview

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// A user message's row, and a jump back to it, are what the user typed:
// not the USER_PROMPT.md blocks panto put before it, marked (a log
// written now) or not (one written before the marker).
func TestRowsAndJumpAreWhatWasTyped(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	up := conversation.AddedText("Answer in one paragraph.\nAlways.", "project /p/.panto/USER_PROMPT.md")
	es, err := w.Append(
		sessionlog.MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend)),
		sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{up, conversation.Text("fix the lexer bug\nplease")}}),
		sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{conversation.ToolUse("c1", "read", []byte(`{}`))}}),
		sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{conversation.ToolResult("c1", "ok", false)}}),
		sessionlog.MessageEntry(conversation.AssistantText("done")),
		sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{conversation.Text("Answer in one paragraph.\n"), conversation.Text("as before the marker")}}),
	)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	tree, err := sessionlog.Scan(path)
	require.NoError(t, err)
	rows, err := Build(tree, Options{})
	require.NoError(t, err)
	var users []string
	for _, r := range rows {
		if r.Kind == KindUser {
			users = append(users, r.Text)
		}
	}
	require.Equal(t, []string{"fix the lexer bug", "as before the marker"}, users)

	to, retype := Jump(tree, es[1].ID)
	require.Equal(t, es[0].ID, to, "a message of the user's is asked again: from before it")
	require.Equal(t, "fix the lexer bug\nplease", retype)
	to, retype = Jump(tree, es[5].ID)
	require.Equal(t, es[4].ID, to)
	require.Equal(t, "as before the marker", retype)
	to, retype = Jump(tree, es[2].ID)
	require.Equal(t, es[3].ID, to, "a reply that called tools: after its results")
	require.Empty(t, retype)
	to, retype = Jump(tree, es[0].ID)
	require.Equal(t, es[0].ID, to)
	require.Empty(t, retype)
}

// The log an older panto wrote with a USER_PROMPT.md
// (sessionlog/testdata/userprompt-old.jsonl): its rows are what was typed.
func TestRowsOfAnOldLog(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "sessionlog", "testdata", "userprompt-old.jsonl"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "old.jsonl")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	tree, err := sessionlog.Scan(path)
	require.NoError(t, err)
	rows, err := Build(tree, Options{})
	require.NoError(t, err)
	var users []string
	for _, r := range rows {
		if r.Kind == KindUser {
			users = append(users, r.Text)
		}
	}
	require.Equal(t, []string{"fix the lexer bug", "now the escapes"}, users)
}
