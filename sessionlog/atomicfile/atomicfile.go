// Package atomicfile writes a file whole or not at all: the bytes go to a
// temporary file in the target's directory, which a commit renames (or
// links) into place, and which every failure removes.
//
// A temporary file is named ".<target's name>.<12 hex digits>.panto-tmp",
// mode 0600, and its writer holds an exclusive lock on it until the
// commit or the abort (flock(2); on Windows LockFileEx, see osfile). That makes what a process killed with SIGKILL
// leaves behind recognisable: RemoveStale, which panto runs where it
// writes such files (a sessions folder when it lists it, the folder of
// an export or a fork), removes a temporary file that no writer holds and
// that is older than a minute, and nothing else. A cancelled context
// (panto's signal handling cancels the run's) removes the file at once,
// so even a process that exits right after the signal leaves none.
//
// On Windows the temporary file is opened so that it can be renamed and
// removed while open (as on Unix), and the directory is not fsynced after
// the rename (Windows cannot flush a directory; see osfile.SyncDir).
//
// O_TMPFILE would leave nothing at all after a SIGKILL, but it is
// Linux-only, not on every file system, and cannot replace a file without
// a named step anyway; a named file with a lock behaves the same on every
// system panto runs on and is tested the same way.
//
// What does not belong here: which targets may be written (the caller
// decides, before Create) and the content's format.
package atomicfile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/osfile"
)

// Suffix ends the name of every temporary file of this package.
const Suffix = ".panto-tmp"

// StaleAge is how old a temporary file that no writer holds must be
// before RemoveStale removes it: the time between its creation and its
// writer's flock is a window no writer can close, and a minute is far
// beyond it.
const StaleAge = time.Minute

// maxBase bounds the part of the target's name a temporary name repeats,
// so that a long target name still leaves room (NAME_MAX is 255 bytes).
const maxBase = 100

// ErrExists is wrapped by Commit's error when it may not replace the
// target and the target exists: choose another name, or remove it.
var ErrExists = errors.New("the file already exists")

// File is a temporary file that becomes dst on Commit.
type File struct {
	f    *os.File
	name string // the temporary file's path
	dst  string
	ctx  context.Context
	// stop cancels the removal on ctx's end; false: it has run.
	stop func() bool
	done bool
}

// Create creates the temporary file for dst in dst's directory, which
// must exist. If ctx ends before Commit, the file is removed at once and
// Commit fails with ctx's cause.
func Create(ctx context.Context, dst string) (*File, error) {
	dir, base := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	if len(base) > maxBase {
		cut := maxBase
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := filepath.Join(dir, "."+base+"."+hex.EncodeToString(rnd[:])+Suffix)
	f, err := osfile.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|osfile.NoFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create a temporary file for %s: %w", dst, err)
	}
	if err := osfile.TryLock(f); err != nil {
		f.Close()
		os.Remove(name)
		return nil, fmt.Errorf("lock temporary file %s: %w", name, err)
	}
	t := &File{f: f, name: name, dst: dst, ctx: ctx}
	t.stop = context.AfterFunc(ctx, func() { os.Remove(name) })
	return t, nil
}

// Name returns the temporary file's path.
func (t *File) Name() string { return t.name }

// File returns the open temporary file, to write to (and to Chmod).
func (t *File) File() *os.File { return t.f }

// Write writes to the temporary file. Once ctx has ended it fails with
// ctx's cause, so a long render stops at its next write.
func (t *File) Write(p []byte) (int, error) {
	if err := t.ctx.Err(); err != nil {
		return 0, context.Cause(t.ctx)
	}
	return t.f.Write(p)
}

// Commit makes the temporary file dst: it fsyncs it, then renames it over
// dst (replace) or links it to dst only if nothing is there (otherwise
// the error wraps ErrExists), and fsyncs the directory. On any failure
// the temporary file is removed and dst is as it was.
func (t *File) Commit(replace bool) error {
	if t.done {
		return fmt.Errorf("commit %s: already committed or aborted", t.dst)
	}
	if !t.stop() {
		t.Abort()
		return fmt.Errorf("write %s: %w", t.dst, context.Cause(t.ctx))
	}
	fail := func(err error) error {
		t.Abort()
		return fmt.Errorf("write %s: %w", t.dst, err)
	}
	if err := t.f.Sync(); err != nil {
		return fail(err)
	}
	if replace {
		if err := os.Rename(t.name, t.dst); err != nil {
			return fail(err)
		}
	} else if err := linkNew(t.name, t.dst); err != nil {
		return fail(err)
	}
	t.done = true
	err := t.f.Close() // after the rename: the lock keeps RemoveStale away until then
	if !replace {
		os.Remove(t.name)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", t.dst, err)
	}
	return osfile.SyncDir(filepath.Dir(t.dst))
}

// linkNew gives the file at tmp the name dst too, failing with ErrExists
// when dst exists (a dangling symlink included). Where the file system
// has no hard links, it renames after checking that dst does not exist.
func linkNew(tmp, dst string) error {
	err := os.Link(tmp, dst)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s: %w", dst, ErrExists)
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EMLINK):
		if _, lerr := os.Lstat(dst); lerr == nil {
			return fmt.Errorf("%s: %w", dst, ErrExists)
		}
		return os.Rename(tmp, dst)
	}
	return err
}

// Abort closes and removes the temporary file; after Commit it does
// nothing. It is safe to call more than once (defer it).
func (t *File) Abort() {
	if t.done {
		return
	}
	t.done = true
	t.stop()
	os.Remove(t.name) // before the close: the lock keeps RemoveStale away until then
	t.f.Close()
}

// IsTemp reports whether name (a file name, not a path) is one this
// package gives a temporary file.
func IsTemp(name string) bool {
	rest, ok := strings.CutSuffix(name, Suffix)
	if !ok || !strings.HasPrefix(rest, ".") || len(rest) < 1+1+12 {
		return false
	}
	hexPart := rest[len(rest)-12:]
	if rest[len(rest)-13] != '.' {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil
}

// RemoveStale removes the temporary files in dir that a writer killed
// before it could remove them left: regular files named as IsTemp says,
// older than StaleAge, that no writer holds. It returns the paths it
// removed. A dir that does not exist holds none.
func RemoveStale(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for stale temporary files in %s: %w", dir, err)
	}
	var removed []string
	for _, de := range ents {
		if !de.Type().IsRegular() || !IsTemp(de.Name()) {
			continue
		}
		p := filepath.Join(dir, de.Name())
		if RemoveIfStale(p, time.Now()) {
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// RemoveIfStale removes the temporary file at path if no writer holds it
// and it was last changed before now less StaleAge; it reports whether it
// did. It never follows a symlink or opens anything but a regular file.
func RemoveIfStale(path string, now time.Time) bool {
	if !IsTemp(filepath.Base(path)) {
		return false
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || now.Sub(st.ModTime()) < StaleAge {
		return false
	}
	f, err := osfile.OpenFile(path, os.O_RDONLY|osfile.NoFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return false
	}
	if osfile.TryLock(f) != nil {
		return false // a writer holds it
	}
	return os.Remove(path) == nil
}

// WriteFile writes data to dst whole or not at all (Create, Write,
// Commit replacing what is there); dst's directory must exist.
func WriteFile(ctx context.Context, dst string, data []byte) error {
	t, err := Create(ctx, dst)
	if err != nil {
		return err
	}
	if _, err := t.Write(data); err != nil {
		t.Abort()
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return t.Commit(true)
}
