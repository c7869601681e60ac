package sessionlog

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// A session_info entry names the session: the latest in the file wins,
// in the summary (cached or not) and the tree; "" removes the name; Read
// decodes it.
func TestSessionName(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{ID: "s", Cwd: "/p"})
	require.NoError(t, err)
	_, err = w.Append(MessageEntry(conversation.UserText("hi")))
	require.NoError(t, err)
	_, err = w.Append(SessionInfoEntry("first name"))
	require.NoError(t, err)
	_, err = w.Append(SessionInfoEntry("the fix for count"))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	sum, err := Summarize(path)
	require.NoError(t, err)
	require.Equal(t, "the fix for count", sum.Name)
	require.Equal(t, 1, sum.Messages, "a name is no message")
	for range 2 { // computed, then from the sidecar
		sum, err = CachedSummary(path)
		require.NoError(t, err)
		require.Equal(t, "the fix for count", sum.Name)
	}
	log, err := Read(path)
	require.NoError(t, err)
	last := log.Entries[len(log.Entries)-1]
	require.Equal(t, TypeSessionInfo, last.Type)
	require.Equal(t, "the fix for count", last.SessionInfo.Name)
	require.Len(t, log.Messages(), 1)

	w, _, err = Open(path)
	require.NoError(t, err)
	_, err = w.Append(SessionInfoEntry(""))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	sum, err = CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, "", sum.Name)
}
