package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
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

// linkCount is how many names (hard links) the file of fi has.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink) // not a uint64 on every system
	}
	return 1
}

// writeAtomic replaces the regular file target (or creates it) with what
// write writes, so that a reader, a crash or a kill at any point sees the
// old content or the new, never a mix: write fills a new file in the
// same directory, which is synced and renamed over target, and then the
// directory is synced. old is target's FileInfo, nil if it does not
// exist: the new file gets its mode and, where allowed, its owner and
// group; a new file gets 0644 less the umask. On error nothing is left
// behind and target is unchanged.
//
// Renaming gives target a new inode: other hard links to the old one
// keep the old content.
func writeAtomic(target string, old fs.FileInfo, write func(*os.File) error) (err error) {
	dir := filepath.Dir(target)
	f, err := createTemp(dir, filepath.Base(target), 0o644)
	if err != nil {
		return fmt.Errorf("create a temporary file beside it (edit and write replace a file through a new one in its directory): %w", cause(err))
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if old != nil {
		if st, ok := old.Sys().(*syscall.Stat_t); ok {
			_ = f.Chown(int(st.Uid), int(st.Gid)) // best effort; before Chmod, which it could undo
		}
		if err := f.Chmod(old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return cause(err)
		}
	}
	if err := write(f); err != nil {
		return cause(err)
	}
	if err := f.Sync(); err != nil {
		return cause(err)
	}
	if err := f.Close(); err != nil {
		return cause(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			return le.Err
		}
		return err
	}
	// The rename is done; syncing the directory makes it durable. A
	// failure here does not undo the write, so it is not reported.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// createTemp creates a new file in dir named after base, like
// os.CreateTemp but with mode perm (less the umask), not 0600.
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	if len(base) > 200 { // leave room for the suffix within NAME_MAX
		base = base[:200]
	}
	for {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}
