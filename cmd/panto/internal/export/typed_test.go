package export

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// typedLog is a session recorded with a USER_PROMPT.md: the block panto
// put before what was typed is marked added.
func typedLog(t *testing.T) *sessionlog.Log {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	_, err = w.Append(
		sessionlog.MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend)),
		sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{
			conversation.AddedText("Answer in one <paragraph>.", "project /p/.panto/USER_PROMPT.md"),
			conversation.Text("fix the lexer bug"),
		}}),
		sessionlog.MessageEntry(conversation.AssistantText("done")),
	)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	l, err := sessionlog.Read(path)
	require.NoError(t, err)
	return l
}

// The export shows what was typed as the message, and what panto added
// as the full record has it, folded and said to be panto's, with its
// file.
func TestExportShowsWhatWasTyped(t *testing.T) {
	t.Parallel()
	l := typedLog(t)
	page := string(exportHTML(t, l, Options{}))
	require.Contains(t, page, `<div class="t">fix the lexer bug</div>`)
	require.Contains(t, page, `<details class="added"><summary>added by panto, not typed: <span class="src">project /p/.panto/USER_PROMPT.md</span></summary><div class="t">Answer in one &lt;paragraph&gt;.</div></details>`)
	require.Equal(t, 1, strings.Count(page, "Answer in one"), "panto's block is shown once, folded as panto's")
	parseHTML(t, []byte(page))

	md := string(exportMarkdown(t, l, Options{}))
	require.Contains(t, md, "\nfix the lexer bug\n")
	require.Contains(t, md, "> _added by panto, not typed:_ **project /p/.panto/USER_PROMPT.md**\n>\n> ```text\n> Answer in one <paragraph>.\n> ```")
	require.NotContains(t, md, "\nAnswer in one")

	p, err := newPlan(l, Options{})
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(p.describe(1), `: “fix the lexer bug”`), p.describe(1))
}
