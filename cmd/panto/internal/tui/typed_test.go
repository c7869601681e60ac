package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/rules"
)

// typedSession opens a recorded host session at path with a
// USER_PROMPT.md, as panto's setup gives it.
func typedSession(t *testing.T, model host.Sender, path string) *host.Session {
	t.Helper()
	s, err := host.Open(context.Background(), host.Config{
		Log: host.Log{Path: path}, CWD: "/p", Provider: model, ProviderName: "parrot", Model: host.Model{Name: "m1"},
		Prompt: func(rules.Vars) (host.Prompt, error) {
			return host.Prompt{Blocks: []host.PromptBlock{{Text: "seed"}},
				UserPrompt: []host.PromptBlock{{Text: "Answer in one paragraph.\n", Source: "project /p/.panto/USER_PROMPT.md"}}}, nil
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// With a USER_PROMPT.md, the navigator's rows show what was typed, and
// Enter on a message of the user's hands back what was typed, not the
// USER_PROMPT.md glued to it.
func TestTreeJumpHandsBackWhatWasTyped(t *testing.T) {
	t.Parallel()
	s := typedSession(t, &parrot{}, filepath.Join(t.TempDir(), "s.jsonl"))
	runTurn(t, s, "fix the lexer bug")
	h := treeHarness(t, s)
	h.typ("/tree")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "as of ") }, "the pane")
	scr := h.screen()
	require.Contains(t, scr, "› fix the lexer bug")
	require.NotContains(t, scr, "Answer in one paragraph")
	h.key(key("up")) // › fix the lexer bug
	h.enter()
	h.idle()
	require.Equal(t, "fix the lexer bug", h.m.ed.value())
}

// A log written before panto marked what it added (a USER_PROMPT.md
// block and the typed text, nothing marked): the rows, the transcript
// and a jump take each message's last text block, what was typed.
func TestTreeJumpInAnOldLog(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "sessionlog", "testdata", "userprompt-old.jsonl"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "old.jsonl")
	require.NoError(t, os.WriteFile(path, old, 0o600))
	s := typedSession(t, &parrot{}, path)
	h := treeHarness(t, s)
	scr := h.screen()
	require.Contains(t, scr, "now the escapes")
	require.NotContains(t, scr, "Answer in one paragraph.\nnow", "the transcript shows what was typed")
	h.typ("/tree")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "as of ") }, "the pane")
	scr = h.screen()
	require.Contains(t, scr, "› fix the lexer bug")
	require.Contains(t, scr, "› now the escapes")
	require.NotContains(t, scr, "› Answer in one paragraph")
	h.key(key("up")) // the reply (the resume's re-seed is here)
	h.key(key("up")) // › now the escapes
	h.enter()
	h.idle()
	require.Equal(t, "now the escapes", h.m.ed.value())
}
