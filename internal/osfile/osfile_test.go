package osfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/panto-dev/panto/internal/osfile"
	"github.com/stretchr/testify/require"
)

func TestTryLockIsExclusiveUntilClose(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "lock")
	a, err := osfile.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	b, err := osfile.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	defer b.Close()

	require.NoError(t, osfile.TryLock(a))
	require.ErrorIs(t, osfile.TryLock(b), osfile.ErrLocked, "a second open file takes a held lock")
	// The holder's content stays readable by others.
	_, err = a.WriteString("holder\n")
	require.NoError(t, err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "holder\n", string(got))

	require.NoError(t, a.Close())
	require.NoError(t, osfile.TryLock(b), "the lock goes with the holder's close")
}

func TestNoFollowRefusesALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("secret"), 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))

	f, err := os.OpenFile(link, os.O_RDONLY|osfile.NoFollow, 0)
	if err == nil {
		// Windows opens the link itself: it must not read as the target.
		fi, serr := f.Stat()
		f.Close()
		require.NoError(t, serr)
		require.False(t, fi.Mode().IsRegular(), "a link opened with NoFollow is the target")
		return
	}
	require.False(t, errors.Is(err, os.ErrNotExist), "unexpected error %v", err)
}

func TestOpenFileMayBeRemovedWhileOpen(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "f")
	f, err := osfile.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL|osfile.NoFollow, 0o600)
	require.NoError(t, err)
	defer f.Close()
	_, err = osfile.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	require.ErrorIs(t, err, os.ErrExist)
	require.NoError(t, os.Rename(p, p+".2"), "rename while open")
	require.NoError(t, os.Remove(p+".2"), "remove while open")
}

func TestSyncDir(t *testing.T) {
	t.Parallel()
	require.NoError(t, osfile.SyncDir(t.TempDir()))
	err := osfile.SyncDir(filepath.Join(t.TempDir(), "missing"))
	if err != nil { // Windows does nothing, so has nothing to fail on
		require.ErrorContains(t, err, "fsync directory")
		require.ErrorContains(t, err, "missing")
	}
}
