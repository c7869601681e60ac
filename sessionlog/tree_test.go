package sessionlog

import (
	"testing"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
)

// handLog builds a Log by hand, without the checks Read makes.
func handLog(entries ...Entry) *Log {
	return &Log{Path: "hand.jsonl", Entries: entries}
}

func msgEntry(id, parent string, m conversation.Message) Entry {
	return Entry{Type: TypeMessage, ID: id, ParentID: parent, Message: &m}
}

func TestTreeOfHandMadeLog(t *testing.T) {
	t.Parallel()
	l := handLog(
		msgEntry("a", "", conversation.UserText("")), // no text: not the title
		Entry{Type: TypeModelChange, ID: "b", ParentID: "a", ModelChange: &ModelChange{Provider: "p", Model: "m"}},
		msgEntry("c", "b", conversation.UserText("first")),
		msgEntry("d", "c", conversation.AssistantText("answer")),
		msgEntry("e", "b", conversation.UserText("other")), // a branch from b
		msgEntry("f", "e", conversation.AssistantText("other answer")),
	)
	require.Equal(t, []string{"", "other", "other answer"}, texts(l.Messages()))
	require.Equal(t, 3, l.MessageCount())
	require.Equal(t, "other", l.FirstUserText())
	at, err := l.MessagesAt("d")
	require.NoError(t, err)
	require.Equal(t, []string{"", "first", "answer"}, texts(at))
	branch, err := l.Branch("d")
	require.NoError(t, err)
	var ids []string
	for _, e := range branch {
		ids = append(ids, e.ID)
	}
	require.Equal(t, []string{"a", "b", "c", "d"}, ids)
	branch[0].ID = "changed"
	require.Equal(t, "a", l.Entries[0].ID, "Branch returns copies")

	for name, bad := range map[string]struct {
		log  *Log
		want string
	}{
		"missing parent": {handLog(msgEntry("a", "", conversation.UserText("x")), msgEntry("b", "zz", conversation.UserText("y"))),
			`session log hand.jsonl: entry b: parent_id "zz" names no entry`},
		"cycle": {handLog(msgEntry("a", "b", conversation.UserText("x")), msgEntry("b", "a", conversation.UserText("y"))),
			"session log hand.jsonl: the parents of entry b form a cycle"},
	} {
		require.Nil(t, bad.log.Messages(), name)
		require.Zero(t, bad.log.MessageCount(), name)
		require.Empty(t, bad.log.FirstUserText(), name)
		_, err := bad.log.Branch("b")
		require.EqualError(t, err, bad.want, name)
		_, err = bad.log.MessagesAt("b")
		require.EqualError(t, err, bad.want, name)
	}
}
