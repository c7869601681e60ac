//go:build windows

package osfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// NoFollow, or'ed into an open's flag, keeps the open from following a
// symbolic link in the last element of the name. Windows has no
// O_NOFOLLOW: this is FILE_FLAG_OPEN_REPARSE_POINT, which opens the link
// itself instead of failing. A caller must therefore Stat what it opened
// and refuse what is not a regular file (a link Stats as ModeSymlink).
const NoFollow = syscall.FILE_FLAG_OPEN_REPARSE_POINT

// OpenFile is os.OpenFile, except that the file may be renamed or
// removed while it is open (FILE_SHARE_DELETE), as on Unix: Go's own
// open on Windows refuses both until the file is closed. It knows the
// flags O_RDONLY, O_WRONLY, O_RDWR, O_CREATE, O_EXCL, O_TRUNC,
// O_NONBLOCK (which means nothing on Windows) and NoFollow, and fails on
// any other. perm only decides whether a new file is read-only: Windows
// has no Unix modes, a new file gets its folder's access list.
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	const known = os.O_RDONLY | os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_EXCL | os.O_TRUNC | syscall.O_NONBLOCK | NoFollow
	if flag&^known != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("flag %#x is not supported by osfile.OpenFile on Windows", flag&^known)}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	default:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	var create uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		create = windows.OPEN_ALWAYS
	default:
		create = windows.OPEN_EXISTING
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	if flag&NoFollow != 0 || create == windows.CREATE_NEW {
		attrs |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	}
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(p, access, share, nil, create, attrs, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(h), name)
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	return f, nil
}

// TryLock takes an exclusive lock on f without waiting. Windows has no
// flock: this is LockFileEx on one byte far beyond any content (a
// Windows lock is mandatory, and a lock on the content would keep other
// processes from reading it). It fails with ErrLocked when another open
// handle holds it. The lock goes with f's close, or with the process.
func TryLock(f *os.File) error {
	ov := &windows.Overlapped{Offset: 0xFFFFFFFF, OffsetHigh: 0x7FFFFFFF}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ov)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return ErrLocked
	}
	return &fs.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
}

// SyncDir does nothing on Windows and returns nil: a directory cannot be
// flushed there (FlushFileBuffers needs a handle with write access, which
// a directory does not give). NTFS journals the names it makes, so a
// created or renamed name is as durable as that journal makes it; the
// file's own bytes are still synced by the caller before the rename.
func SyncDir(dir string) error { return nil }
