package sessionlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

func TestCompactionEntryRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	recorded, err := w.Append(MessageEntry(conversation.UserText("a")), MessageEntry(conversation.AssistantText("b")),
		MessageEntry(conversation.UserText("c")))
	require.NoError(t, err)
	_, err = w.Append(CompactionEntry("they talked about a", recorded[2].ID, 1234))
	require.NoError(t, err)
	_, err = w.Append(CompactionEntry("", recorded[2].ID, 0))
	require.ErrorContains(t, err, "compaction entry without summary")
	require.NoError(t, w.Close())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"type":"compaction"`)
	require.Contains(t, string(data), `"first_kept_id":"`+recorded[2].ID+`"`)

	log, err := Read(path)
	require.NoError(t, err)
	last := log.Entries[len(log.Entries)-1]
	require.Equal(t, &Compaction{Summary: "they talked about a", FirstKeptID: recorded[2].ID, TokensBefore: 1234}, last.Compaction)
	require.Len(t, log.Messages(), 3, "the summarised messages stay in the log")

	// A compaction line without its required fields is an error naming the line.
	bad := strings.Replace(string(data), `"summary":"they talked about a",`, "", 1)
	_, err = Decode(strings.NewReader(bad), "bad.jsonl")
	require.ErrorContains(t, err, "bad.jsonl line 5")
}
