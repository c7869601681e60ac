package host

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sessionlog"
)

// A turn records the USER_PROMPT.md blocks before what was typed, each
// marked added from its file, so the log keeps what the user typed apart;
// the request carries every block as before.
func TestTurnMarksWhatPantoAdded(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("ok")}}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := Open(context.Background(), Config{
		Log: Log{Path: path}, CWD: "/p", Provider: model, ProviderName: "script", Model: Model{Name: "m1"},
		Prompt: func(rules.Vars) (Prompt, error) {
			return Prompt{Blocks: []PromptBlock{{Text: "seed"}}, UserPrompt: []PromptBlock{
				{Text: "Answer in one paragraph.\n", Source: "project /p/.panto/USER_PROMPT.md"},
				{Text: "Be kind.", Source: "user /u/panto/USER_PROMPT.md"},
			}}, nil
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	require.NoError(t, end(t, turn(context.Background(), s, "fix the lexer bug")).Err)

	require.Len(t, model.requests, 1)
	sent := model.requests[0].Messages
	require.Equal(t, "Answer in one paragraph.\nBe kind.fix the lexer bug", sent[len(sent)-1].Text(), "the request has every block")

	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	var user *conversation.Message
	for _, m := range log.Messages() {
		if m.Role == conversation.RoleUser {
			user = &m
		}
	}
	require.NotNil(t, user)
	require.Equal(t, []conversation.Block{
		conversation.AddedText("Answer in one paragraph.\n", "project /p/.panto/USER_PROMPT.md"),
		conversation.AddedText("Be kind.", "user /u/panto/USER_PROMPT.md"),
		conversation.Text("fix the lexer bug"),
	}, user.Content)
	require.Equal(t, "fix the lexer bug", user.Typed())
	require.Equal(t, "fix the lexer bug", log.FirstUserText())
}
