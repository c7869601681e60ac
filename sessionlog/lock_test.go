package sessionlog

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
)

func TestSecondWriterInSameProcessIsLocked(t *testing.T) {
	t.Parallel()
	path, _ := writeSample(t, t.TempDir())
	w, _, err := Open(path)
	require.NoError(t, err)

	_, _, err = Open(path)
	require.ErrorIs(t, err, ErrLocked)
	host, _ := os.Hostname()
	require.ErrorContains(t, err, fmt.Sprintf("session log %s is open for writing by pid %d on host %s since ", path, os.Getpid(), host))
	var le *LockedError
	require.True(t, errors.As(err, &le))
	require.Equal(t, os.Getpid(), le.PID)
	require.Equal(t, path, le.Path)
	require.False(t, le.Since.IsZero())

	// The failed Open did not disturb the holder.
	_, err = w.Append(MessageEntry(conversation.UserText("still mine")))
	require.NoError(t, err)
	require.FileExists(t, path+".lock")
	require.NoError(t, w.Close())
	require.NoFileExists(t, path+".lock")

	w, _, err = Open(path)
	require.NoError(t, err, "after Close the log opens again")
	require.NoError(t, w.Close())
}

func TestWriterInOtherProcessIsLocked(t *testing.T) {
	t.Parallel()
	path, _ := writeSample(t, t.TempDir())
	cmd, out := startHelper(t, "hold", path)
	require.True(t, out.Scan(), "the helper took the lock")
	require.Equal(t, "locked", out.Text())

	_, _, err := Open(path)
	require.ErrorIs(t, err, ErrLocked)
	require.ErrorContains(t, err, fmt.Sprintf("is open for writing by pid %d on host ", cmd.Process.Pid))
	var le *LockedError
	require.True(t, errors.As(err, &le))
	require.Equal(t, cmd.Process.Pid, le.PID)

	// A crashed holder leaves its lock file behind but no lock.
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.FileExists(t, path+".lock")
	w, _, err := Open(path)
	require.NoError(t, err)
	_, err = w.Append(MessageEntry(conversation.UserText("after the crash")))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoFileExists(t, path+".lock")
}

func TestLockedErrorWithoutHolder(t *testing.T) {
	t.Parallel()
	e := &LockedError{Path: "/s/x.jsonl"}
	require.Equal(t, "session log /s/x.jsonl is open for writing by another process (its lock file /s/x.jsonl.lock names no holder); only one panto may write a session at a time", e.Error())
	require.ErrorIs(t, e, ErrLocked)
}
