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

// A change after a reply invalidates the cached prompt from its first
// changed block on and the messages of the request before the reply;
// after a compaction (which broke the messages' cache itself) only the
// prompt; a second change before the next request only what the first
// left valid.
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
		msg("s4", "s3", conversation.KeyedSystemMessage("env:cwd", "cwd: /c")),
	}
	cs := Path(entries)
	require.Len(t, cs, 4)
	require.Equal(t, Anthropic, cs[0].Provider) // the first model_change, recorded after the seed
	require.True(t, cs[0].Cached)
	require.Equal(t, 0, cs[0].Invalidated) // nothing sent yet
	require.Equal(t, [2]int{1, 0}, [2]int{cs[0].Added, cs[0].Removed})

	// An append at the end: only the conversation is invalidated, as
	// the request before r1 sent it.
	require.Equal(t, "env:cwd", cs[1].Key)
	require.Equal(t, [2]int{4, 0}, [2]int{cs[1].Added, cs[1].Removed})
	require.Equal(t, tokensOf(user), cs[1].Invalidated)

	// An update in place after the compaction: the section alone.
	require.Equal(t, [2]int{1, 1}, [2]int{cs[2].Added, cs[2].Removed})
	require.Equal(t, 2 /* "cwd: /a\n" */, cs[2].Invalidated)
	// Once more before a request: nothing was left to invalidate.
	require.Equal(t, [2]int{1, 1}, [2]int{cs[3].Added, cs[3].Removed})
	require.Equal(t, 0, cs[3].Invalidated)

	// Without the compaction, the update in place invalidates the
	// section and the messages of the request before r2.
	cs = Path(append(entries[:7:7], msg("s3", "r2", conversation.KeyedSystemMessage("env:cwd", "cwd: /b"))))
	require.Equal(t, 2+2*tokensOf(user)+tokensOf(reply), cs[2].Invalidated)
}

func tokensOf(m conversation.Message) int { return tokens.Message(m) }
