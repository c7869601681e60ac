package sessionlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

func TestRequestSettingsRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{Version: Version, ID: "s", Created: t0, Cwd: "/p"})
	require.NoError(t, err)
	temp := 0.5
	rs := RequestSettings{Provider: "work", Wire: "openai", Options: map[string]string{"max_tokens_field": "max_completion_tokens"},
		Model: "gpt-x", MaxTokens: 4096, Temperature: &temp, Stream: true,
		ToolChoice: &ToolChoice{Mode: "auto", DisableParallel: true}, Cache: &RequestCache{Key: "s"},
		Tools: []OfferedTool{{Owner: "tools", ToolDef: ToolDef{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object"}`)}}}}
	es, err := w.Append(MessageEntry(conversation.UserText("hi")), RequestSettingsEntry(rs), MessageEntry(conversation.AssistantText("hello")))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	l, err := Load(path)
	require.NoError(t, err)
	var got *RequestSettings
	for _, e := range l.Entries {
		if e.RequestSettings != nil {
			got = e.RequestSettings
			require.Equal(t, es[1].ID, e.ID)
		}
	}
	require.Equal(t, &rs, got)
	require.True(t, got.Same(&rs))
	other := rs
	other.Tools = []OfferedTool{{Owner: "mcp:x", ToolDef: rs.Tools[0].ToolDef}}
	require.False(t, got.Same(&other), "a tool of another owner is another offer")
	other = rs
	other.Model = "gpt-y"
	require.False(t, got.Same(&other))

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"type":"request_settings"`)
	require.Contains(t, string(data), `"request":{"provider":"work","wire":"openai"`)
}

func TestRequestSettingsChecked(t *testing.T) {
	t.Parallel()
	w, err := Create(filepath.Join(t.TempDir(), "s.jsonl"), Header{Version: Version, ID: "s", Created: t0, Cwd: "/p"})
	require.NoError(t, err)
	defer w.Close()
	for _, r := range []RequestSettings{{}, {Wire: "anthropic"}, {Wire: "anthropic", Model: "m", Tools: []OfferedTool{{}}},
		{Wire: "anthropic", Model: "m", Tools: []OfferedTool{{ToolDef: ToolDef{Name: "x", Parameters: json.RawMessage("{")}}}}} {
		_, err := w.Append(RequestSettingsEntry(r))
		require.Error(t, err, "%+v", r)
	}
}

func TestATornRequestSettingsLineIsNamed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{Version: Version, ID: "s", Created: t0, Cwd: "/p"})
	require.NoError(t, err)
	es, err := w.Append(MessageEntry(conversation.UserText("hi")))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"request_settings","id":"0000000000000099","parent_id":"` + es[0].ID + `","time":"2026-01-01T00:00:00Z","request":{"wire":"anthropic"}}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = Load(path)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "without a model") && strings.Contains(err.Error(), "0000000000000099"), err.Error())
}
