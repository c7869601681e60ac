package promptlog

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/tokens"
	"github.com/panto-dev/panto/serializers/anthropic"
	"github.com/panto-dev/panto/sessionlog"
)

// The prompt renders as the Anthropic request joins it.
func TestRenderIsTheRequestsSystem(t *testing.T) {
	t.Parallel()
	blocks := []conversation.SystemText{{Text: "a\n\n"}, {Text: ""}, {Text: "b\r\n", Key: "k"}}
	require.Equal(t, "a"+anthropic.SystemSeparator+"b\n", Render(blocks))
	require.Equal(t, "", Render(nil))
}

func msg(id, parent string, m conversation.Message) sessionlog.Entry {
	return sessionlog.Entry{Type: sessionlog.TypeMessage, ID: id, ParentID: parent, Message: &m}
}

// A change after a reply invalidates what the request before the reply
// cached: its tools, its system prompt and its messages; after a
// compaction (which broke the messages' cache itself) the tools and the
// prompt; a second change before the next request nothing more.
func TestPathEstimatesTheInvalidatedCache(t *testing.T) {
	t.Parallel()
	user, reply := conversation.UserText("0123456789abcdef"), conversation.AssistantText("ok")
	read := sessionlog.OfferedTool{Owner: "tools", ToolDef: sessionlog.ToolDef{Name: "read", Description: "Read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	entries := []sessionlog.Entry{
		msg("s1", "", conversation.SystemMessage("seed", conversation.ModeAppend).WithSource("built-in default")),
		{Type: sessionlog.TypeModelChange, ID: "m", ParentID: "s1", ModelChange: &sessionlog.ModelChange{Provider: Anthropic, Model: "x"}},
		{Type: sessionlog.TypeRequestSettings, ID: "q", ParentID: "m", RequestSettings: &sessionlog.RequestSettings{Provider: Anthropic, Wire: Anthropic, Tools: []sessionlog.OfferedTool{read}}},
		msg("u1", "q", user),
		msg("r1", "u1", reply),
		msg("s2", "r1", conversation.KeyedSystemMessage("env:cwd", "cwd: /a")),
		msg("u2", "s2", user),
		msg("r2", "u2", reply),
		{Type: sessionlog.TypeCompaction, ID: "c", ParentID: "r2", Compaction: &sessionlog.Compaction{Summary: "sum", FirstKeptID: "u2"}},
		msg("s3", "c", conversation.KeyedSystemMessage("env:cwd", "cwd: /b")),
		msg("s4", "s3", conversation.KeyedSystemMessage("env:cwd", "cwd: /c")),
	}
	tool := tokens.Tool(read.Name, read.Description, read.Parameters)
	cs := Path(entries)
	require.Len(t, cs, 4)
	require.Equal(t, Anthropic, cs[0].Provider) // the first model_change, recorded after the seed
	require.True(t, cs[0].Cached)
	require.Equal(t, 0, cs[0].Invalidated) // nothing sent yet
	require.Equal(t, [2]int{1, 0}, [2]int{cs[0].Added, cs[0].Removed})

	// An append at the end: what the request before r1 cached, all of
	// it (the system prompt goes as one block under one mark).
	require.Equal(t, "env:cwd", cs[1].Key)
	require.Equal(t, [2]int{4, 0}, [2]int{cs[1].Added, cs[1].Removed})
	require.Equal(t, tool+tokens.Text(Render(cs[1].Before))+tokensOf(user), cs[1].Invalidated)

	// An update in place after the compaction: the tools and the prompt.
	require.Equal(t, [2]int{1, 1}, [2]int{cs[2].Added, cs[2].Removed})
	require.Equal(t, tool+tokens.Text(Render(cs[2].Before)), cs[2].Invalidated)
	// Once more before a request: nothing was left to invalidate.
	require.Equal(t, [2]int{1, 1}, [2]int{cs[3].Added, cs[3].Removed})
	require.Equal(t, 0, cs[3].Invalidated)

	// Without the compaction, the update in place invalidates the
	// messages of the request before r2 too.
	cs = Path(append(entries[:8:8], msg("s3", "r2", conversation.KeyedSystemMessage("env:cwd", "cwd: /b"))))
	require.Equal(t, tool+tokens.Text(Render(cs[2].Before))+2*tokensOf(user)+tokensOf(reply), cs[2].Invalidated)

	// An update that leaves the prompt as it was invalidates nothing.
	cs = Path(append(entries[:8:8], msg("s3", "r2", conversation.KeyedSystemMessage("env:cwd", "cwd: /a"))))
	require.Equal(t, 0, cs[2].Invalidated)
}

func tokensOf(m conversation.Message) int { return tokens.Message(m) }
