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

// The tools an extension offers and the session's name are said in both
// formats, not shown as entries of an unknown type.
func TestToolsAndNameAreSaid(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, "/p")
	b.add("tools", "", map[string]any{"extension": "mcp", "reason": "the server's tools changed",
		"tools": []map[string]any{{"name": "docs_search"}, {"name": "docs_get"}}, "added": []string{"docs_get"}})
	b.add("tools", "", map[string]any{"extension": "gone", "tools": []map[string]any{}, "removed": []string{"x"}})
	b.add("session_info", "", map[string]any{"name": "heredoc fix"})
	b.add("session_info", "", map[string]any{"name": ""})
	l := b.mustLog()
	d := parseHTML(t, exportHTML(t, l, Options{}))
	checkSafe(t, d, false)
	require.Contains(t, oneLine(d.ids["e-1"]), "tools of extension mcp: docs_search, docs_get (added docs_get) · the server's tools changed")
	require.Contains(t, oneLine(d.ids["e-2"]), "tools of extension gone: none (removed x)")
	require.Contains(t, oneLine(d.ids["e-3"]), "named the session “heredoc fix”")
	require.Contains(t, oneLine(d.ids["e-4"]), "removed the session's name")
	md := string(exportMarkdown(t, l, Options{}))
	require.Contains(t, md, "tools of extension mcp: docs_search, docs_get (added docs_get) · the server's tools changed")
	require.Contains(t, md, "named the session “heredoc fix”")
	require.NotContains(t, md, "not known to this panto")
}
