//go:build unix

package osfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// NoFollow, or'ed into an open's flag, keeps the open from following a
// symbolic link in the last element of the name: on Unix it is
// O_NOFOLLOW, and such an open fails with ELOOP.
const NoFollow = syscall.O_NOFOLLOW

// OpenFile is os.OpenFile. (On Unix a file can always be renamed or
// removed while it is open.)
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// TryLock takes an exclusive flock(2) on f without waiting (retried when
// a signal interrupts it). It fails with ErrLocked when another open file
// description holds it. The lock goes with f's close, or with the
// process, however it ends.
func TryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		}
		return &fs.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
}

// SyncDir fsyncs the directory dir, so that a name made in it (a create,
// a rename, a link) survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
