package sessionlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testgen"
)

// writeBigLog writes testgen.WriteLog's log with o to path.
func writeBigLog(tb testing.TB, path string, o testgen.LogOptions) testgen.LogInfo {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(tb, err)
	info, err := testgen.WriteLog(f, o)
	require.NoError(tb, err)
	require.NoError(tb, f.Close())
	return info
}

// TestGeneratedLog: a small log of testgen.WriteLog reads as it says,
// and Load agrees with Read on it.
func TestGeneratedLog(t *testing.T) {
	t.Parallel()
	for _, o := range []testgen.LogOptions{
		{Size: 8 << 20, Kept: 3000, Branches: 2},
		{Size: 4 << 20, Branches: 1},
	} {
		path := filepath.Join(t.TempDir(), "big.jsonl")
		info := writeBigLog(t, path, o)
		st, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, info.Bytes, st.Size())
		require.InDelta(t, o.Size, st.Size(), float64(o.Size)/5)
		log, err := Read(path)
		require.NoError(t, err)
		require.Empty(t, log.Warnings)
		require.Len(t, log.Entries, info.Entries)
		require.Equal(t, info.Leaf, log.Leaf().ID)
		msgs := log.Messages()
		require.Len(t, msgs, info.Messages)
		sys := 0
		for _, m := range msgs {
			if m.Role == conversation.RoleSystem {
				sys++
			}
		}
		require.Equal(t, info.System, sys)
		require.Len(t, log.Tree().Branches(), 1+o.Branches)
		ld, err := Load(path)
		require.NoError(t, err)
		require.Equal(t, info.FirstKept, ld.Cut)
		if o.Kept > 0 {
			require.Equal(t, o.Kept, ld.MessageCount-ld.Skipped-countSystem(ld, true))
		}
		checkAgainstRead(t, path)
	}
}

// countSystem counts the loaded system messages before the cut (before
// true) or all of them.
func countSystem(ld *Loaded, before bool) int {
	n := 0
	for _, e := range ld.Entries {
		if before && e.ID == ld.Cut {
			break
		}
		if e.Message != nil && e.Message.Role == conversation.RoleSystem {
			n++
		}
	}
	return n
}
