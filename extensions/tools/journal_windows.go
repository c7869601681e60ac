package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockJournal takes an exclusive lock on a journal without waiting:
// Windows has no flock, so this is LockFileEx on one byte far beyond the
// journal's content (a Windows lock is mandatory: one on the content
// would keep a sweep from reading it). The system releases it however
// the process ends. It fails when another process holds it.
//
// On Windows an open file cannot be removed: a named temporary file that
// a write still holds open when the process ends stays until the next
// tools process sweeps the journal that lists it.
func lockJournal(f *os.File) error {
	ov := &windows.Overlapped{Offset: 0xFFFFFFFF, OffsetHigh: 0x7FFFFFFF}
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ov)
}
