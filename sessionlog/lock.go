package sessionlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/panto-dev/panto/internal/osfile"
)

// ErrLocked is wrapped by the error of Create or Open when another Writer —
// in this process or another — has the session open for writing. A
// session has one writer at a time. Do not retry in a loop and do not
// remove the lock file: tell the user which process holds the session
// (errors.As with *LockedError gives the pid, host and time), and either
// wait for it to exit or open the log read-only with Read. A lock left by a
// crashed process never causes this error: the kernel releases it.
var ErrLocked = errors.New("session log is open for writing by another writer")

// LockedError describes the writer that holds a session log's lock, as its
// lock file records it. It wraps ErrLocked.
type LockedError struct {
	// Path is the session log.
	Path string
	// PID and Host identify the holding process; PID is 0 when the lock
	// file did not say (the holder was still writing it).
	PID  int
	Host string
	// Since is when the holder took the lock.
	Since time.Time
}

func (e *LockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("session log %s is open for writing by another process (its lock file %s names no holder); only one panto may write a session at a time",
			e.Path, lockPath(e.Path))
	}
	return fmt.Sprintf("session log %s is open for writing by pid %d on host %s since %s; only one panto may write a session at a time",
		e.Path, e.PID, e.Host, e.Since.Local().Format(time.RFC3339))
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// holder is the content of a lock file.
type holder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
}

func lockPath(logPath string) string { return logPath + ".lock" }

// fileLock is a held writer lock: an flock(2) on the sidecar lock file
// (on Windows a LockFileEx, see osfile.TryLock), released by Close or by
// the system when the process dies.
type fileLock struct {
	f    *os.File
	path string
}

// acquireLock takes the writer lock of the log at logPath without waiting.
func acquireLock(logPath string) (*fileLock, error) {
	lp := lockPath(logPath)
	for attempt := 0; ; attempt++ {
		// osfile.OpenFile: on Windows too, release can remove the file
		// while it is open, and so can the holder while we hold it open.
		f, err := osfile.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("lock session log %s: %w", logPath, err)
		}
		if err := osfile.TryLock(f); err != nil {
			f.Close()
			if errors.Is(err, osfile.ErrLocked) {
				return nil, lockedError(logPath)
			}
			return nil, fmt.Errorf("lock session log %s: %w", logPath, err)
		}
		// The previous holder removes the file before it lets go of the
		// lock. If it did so between our open and our flock, we hold the
		// lock of a file no one else will open: start again.
		if sameFile(f, lp) {
			l := &fileLock{f: f, path: lp}
			if err := l.record(); err != nil {
				l.release()
				return nil, fmt.Errorf("lock session log %s: write %s: %w", logPath, lp, err)
			}
			return l, nil
		}
		f.Close()
		if attempt == 100 {
			return nil, fmt.Errorf("lock session log %s: %s keeps being replaced", logPath, lp)
		}
	}
}

// sameFile reports whether path still names the open file f.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// record writes who holds the lock into the lock file.
func (l *fileLock) record() error {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	b, err := json.Marshal(holder{PID: os.Getpid(), Host: host, Since: time.Now().UTC()})
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err = l.f.WriteAt(append(b, '\n'), 0)
	return err
}

// release removes the lock file, then lets go of the lock. Removing first
// means a waiting opener never locks a file that is about to vanish (and
// acquireLock checks for that case anyway).
func (l *fileLock) release() error {
	err := os.Remove(l.path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return errors.Join(err, l.f.Close())
}

// lockedError reads the holder from the lock file. The holder writes it
// right after taking the lock, so an empty file is read again briefly.
func lockedError(logPath string) error {
	e := &LockedError{Path: logPath}
	for range 20 {
		b, err := os.ReadFile(lockPath(logPath))
		var h holder
		if err == nil && json.Unmarshal(b, &h) == nil && h.PID > 0 {
			e.PID, e.Host, e.Since = h.PID, h.Host, h.Since
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return e
}
