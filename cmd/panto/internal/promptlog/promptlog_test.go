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
	require.Equal(t, anthropic.SystemSeparator, separator)
	blocks := []conversation.SystemText{{Text: "a\n\n"}, {Text: ""}, {Text: "b\r\n", Key: "k"}}
	require.Equal(t, "a"+anthropic.SystemSeparator+"b\n", Render(blocks))
	require.Equal(t, "", Render(nil))
}

func TestFirstChanged(t *testing.T) {
	t.Parallel()
	a := []conversation.SystemText{{Text: "x"}, {Text: "y", Key: "k"}}
	require.Equal(t, 2, FirstChanged(a, append(a[:2:2], conversation.SystemText{Text: "z"})))
	require.Equal(t, 1, FirstChanged(a, []conversation.SystemText{{Text: "x"}, {Text: "y2", Key: "k"}}))
	require.Equal(t, 0, FirstChanged(a, []conversation.SystemText{{Text: "new"}}))
	require.Equal(t, 2, FirstChanged(a, a))
}

func msg(id, parent string, m conversation.Message) sessionlog.Entry {
	return sessionlog.Entry{Type: sessionlog.TypeMessage, ID: id, ParentID: parent, Message: &m}
}

// A change after a reply invalidates the prompt from its first changed
// block on and the request's messages — after a compaction, its summary
// and the messages it kept.
func TestPathEstimatesTheInvalidatedCache(t *testing.T) {
	t.Parallel()
	user, reply := conversation.UserText("0123456789abcdef"), conversation.AssistantText("ok")
	entries := []sessionlog.Entry{
		msg("s1", "", conversation.SystemMessage("seed", conversation.ModeAppend).WithSource("built-in default")),
		{Type: sessionlog.TypeModelChange, ID: "m", ParentID: "s1", ModelChange: &sessionlog.ModelChange{Provider: Anthropic, Model: "x"}},
		msg("u1", "m", user),
		msg("r1", "u1", reply),
		msg("s2", "r1", conversation.KeyedSystemMessage("env:cwd", "cwd: /a")),
		msg("u2", "s2", user),
		msg("r2", "u2", reply),
		{Type: sessionlog.TypeCompaction, ID: "c", ParentID: "r2", Compaction: &sessionlog.Compaction{Summary: "sum", FirstKeptID: "u2"}},
		msg("s3", "c", conversation.KeyedSystemMessage("env:cwd", "cwd: /b")),
	}
	cs := Path(entries)
	require.Len(t, cs, 3)
	require.Equal(t, Anthropic, cs[0].Provider) // the first model_change, recorded after the seed
	require.True(t, cs[0].Cached)
	require.Equal(t, 0, cs[0].Invalidated) // nothing sent yet
	require.Equal(t, [2]int{1, 0}, [2]int{cs[0].Added, cs[0].Removed})

	// An append at the end: only the conversation is invalidated.
	require.Equal(t, "env:cwd", cs[1].Key)
	require.Equal(t, [2]int{4, 0}, [2]int{cs[1].Added, cs[1].Removed})
	require.Equal(t, tokensOf(user)+tokensOf(reply), cs[1].Invalidated)

	// An update in place: the section and the compacted conversation.
	require.Equal(t, [2]int{1, 1}, [2]int{cs[2].Added, cs[2].Removed})
	want := 2 /* "cwd: /a\n" */ + tokensOf(conversation.UserText(summaryPrefix+"sum")) + tokensOf(user) + tokensOf(reply)
	require.Equal(t, want, cs[2].Invalidated)
}

func tokensOf(m conversation.Message) int { return tokens.Message(m) }
