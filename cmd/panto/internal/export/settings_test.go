package export

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// What a request was sent with, and the permission policy, read as
// sentences in both exports, not as entries panto does not know.
func TestRequestSettingsAndPermissionsAreSaid(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	_, err = w.Append(
		sessionlog.PermissionsEntry(sessionlog.Permissions{Mode: "plan", Rules: []sessionlog.PermissionRule{}, Grants: []string{"bash(make)"}, Reason: "start"}),
		sessionlog.MessageEntry(conversation.UserText("hi")),
		sessionlog.RequestSettingsEntry(sessionlog.RequestSettings{Provider: "anthropic", Wire: "anthropic", Model: "claude-x", MaxTokens: 1000, Stream: true,
			Tools: []sessionlog.OfferedTool{{Owner: "tools", ToolDef: sessionlog.ToolDef{Name: "read"}}, {Owner: "guide", ToolDef: sessionlog.ToolDef{Name: "note"}}}}),
		sessionlog.MessageEntry(conversation.AssistantText("hello")),
	)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	l, err := sessionlog.Read(path)
	require.NoError(t, err)
	for _, out := range []string{string(exportMarkdown(t, l, Options{})), string(exportHTML(t, l, Options{}))} {
		require.Contains(t, out, "requests from here: claude-x (anthropic), max_tokens 1000, streamed, 2 tools: read, note")
		require.Contains(t, out, "permissions: mode plan, 0 rules, 1 grants (start)")
		require.NotContains(t, out, "not known to this panto")
	}
}
