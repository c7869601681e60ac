package sessionlog

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCrashDuringAppend kills a writer process in the middle of appending
// and checks that every entry it had been told was recorded survives, and
// that the log opens (repaired if a line was torn) and takes new entries.
func TestCrashDuringAppend(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a child process for a while")
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	for round, killAfter := range []int{1, 57, 230} {
		cmd, out := startHelper(t, "append", path)
		var acked []string
		for len(acked) < killAfter && out.Scan() {
			acked = append(acked, out.Text())
		}
		require.Len(t, acked, killAfter, "round %d: the helper stopped early", round)
		// Let it get into the next writes, then kill it mid-run.
		time.Sleep(time.Duration(round) * 3 * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		// Ids printed before the kill are acknowledged too.
		for out.Scan() {
			acked = append(acked, out.Text())
		}
		_ = cmd.Wait()

		w, log, err := Open(path)
		require.NoError(t, err, "round %d", round)
		for _, id := range acked {
			require.NotNil(t, log.Find(id), "round %d: acknowledged entry %s is missing", round, id)
		}
		for i := 1; i < len(log.Entries); i++ {
			require.Equal(t, log.Entries[i-1].ID, log.Entries[i].ParentID)
		}
		if len(log.Warnings) > 0 {
			t.Logf("round %d: %v", round, log.Warnings)
		}
		require.NoError(t, w.Close())
		again, err := Read(path)
		require.NoError(t, err)
		require.Empty(t, again.Warnings, "Open left a clean file")
		require.Len(t, again.Entries, len(log.Entries))
	}
}
