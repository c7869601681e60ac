package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// kind names what a file that is not a regular one is, for an error.
func kind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "not a regular file"
}

// openRegular opens p for reading if it is a regular file; for anything
// else the error names what it is, followed by what (e.g. "read only
// reads regular files"). It never blocks on a FIFO or opens a device: p
// is checked before it is opened, and opened with O_NONBLOCK and checked
// again, in case it was swapped in between.
func openRegular(op, p, what string) (*os.File, fs.FileInfo, error) {
	check := func(fi fs.FileInfo) error {
		if fi.Mode().IsRegular() {
			return nil
		}
		return fmt.Errorf("%s %s: is %s; %s", op, p, kind(fi.Mode()), what)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", op, p, cause(err))
	}
	if err := check(fi); err != nil {
		return nil, nil, err
	}
	// O_NONBLOCK means nothing for a regular file.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", op, p, cause(err))
	}
	if fi, err = f.Stat(); err == nil {
		err = check(fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// maxSymlinks bounds the links linkTarget follows, as the kernel does.
const maxSymlinks = 40

// linkTarget is the file a write to p replaces: p itself, or, when p is a
// symlink, the file it leads to (which may not exist yet), so that the
// link stays a link. Only the last element is resolved; symlinked
// directories on the way are followed by the system as usual.
func linkTarget(p string) (string, error) {
	for range maxSymlinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		to, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(p), to)
		}
		p = filepath.Clean(to)
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", p)
}

// writeAtomic replaces the regular file target (or creates it) with
// content, so that a reader, a crash, a cancel or a signal at any point
// sees the old content or the new, never a mix (see tempfile.go): the
// content fills a new file in the same directory, which is synced and
// renamed over target, and then the directory is synced. old is target's
// FileInfo, nil if it does not exist: the new file gets its mode and,
// where allowed, its owner and group; a new file gets 0644 less the
// umask.
//
// ctx is checked while writing and one last time right before the
// rename, never after: a nil error means target holds content (the
// rename is the commit point), an error that it is unchanged and no
// temporary file is left (errInterrupted when ctx ended first).
//
// Renaming gives target a new inode: other hard links to the old one
// keep the old content.
func writeAtomic(ctx context.Context, target string, old fs.FileInfo, content string) error {
	t, err := newTemp(target, 0o644)
	if err != nil {
		return fmt.Errorf("create a temporary file beside it (edit and write replace a file through a new one in its directory): %w", cause(err))
	}
	committed := false
	defer func() {
		if !committed {
			t.abort()
		}
	}()
	testHook(ctx, hookWrite)
	f := t.f
	if old != nil {
		copyOwner(f, old) // before Chmod, which it could undo
		if err := f.Chmod(old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return cause(err)
		}
	}
	// In pieces, to stop soon when the call is cancelled.
	for rest := content; len(rest) > 0; {
		if ctx.Err() != nil {
			return errInterrupted
		}
		n := min(len(rest), writeChunk)
		if _, err := f.WriteString(rest[:n]); err != nil {
			return cause(err)
		}
		rest = rest[n:]
	}
	if err := f.Sync(); err != nil {
		return cause(err)
	}
	testHook(ctx, hookCommit)
	committed = true // commit removes the file itself when it fails
	if err := t.commit(ctx, target); err != nil {
		return err
	}
	testHook(ctx, hookCommitted)
	// The rename is done; syncing the directory makes it durable. A
	// failure here does not undo the write, so it is not reported.
	if d, err := os.Open(filepath.Dir(target)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// writeChunk is how much writeAtomic writes between two checks of the
// call's context.
const writeChunk = 4 << 20
