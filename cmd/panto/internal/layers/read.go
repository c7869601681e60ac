package layers

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileSize is the largest prompt file (SYSTEM.md, APPEND_SYSTEM.md,
// USER_PROMPT.md, a --system-prompt or --append-system-prompt file) and
// config.toml panto reads: far above any real one, far below what would
// hurt a request or the machine.
const MaxFileSize = 1 << 20

// ErrNotRegular is wrapped by the errors of OpenRegular and ReadFile for a
// FIFO, a device, a socket or a directory: panto reads these files whole,
// so such a file would block it or never end. Replace it with a regular
// file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error of ReadFile for a file larger than
// its limit. Make the file smaller.
var ErrTooLarge = errors.New("file too large")

// problem is an error whose text says what is wrong, for people, and which
// wraps one of the sentinels above, for code.
type problem struct {
	msg  string
	kind error
}

func (p *problem) Error() string { return p.msg }
func (p *problem) Unwrap() error { return p.kind }

// Pipes says whether ReadFile accepts a pipe as well as a regular file.
type Pipes bool

const (
	// RegularOnly refuses anything but a regular file: for the files
	// found in the layers, where a FIFO is a mistake.
	RegularOnly Pipes = false
	// PipesToo accepts a pipe (a FIFO, <(cmd), /dev/stdin fed by a pipe)
	// as well: for a file the user named on the command line.
	PipesToo Pipes = true
)

// ReadFile reads the file at path (a symlink is followed), refusing,
// without blocking, anything but a regular file (or, with PipesToo, a
// pipe) and reading at most limit+1 bytes, so that a file larger than
// limit is an error, not unbounded memory. The errors say what is wrong;
// the caller names the file.
func ReadFile(path string, limit int64, pipes Pipes) ([]byte, error) {
	var f *os.File
	var err error
	if pipes {
		f, err = openRegularOrPipe(path)
	} else {
		f, _, err = OpenRegular(path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		if pipes {
			st, err := f.Stat()
			if err == nil && !st.Mode().IsRegular() {
				return nil, &problem{"more than " + Size(limit) + " from the pipe, the limit for this file", ErrTooLarge}
			}
		}
		return nil, &problem{"larger than " + Size(limit) + ", the limit for this file", ErrTooLarge}
	}
	return b, nil
}

// OpenRegular opens the regular file at path for reading (a symlink is
// followed). Anything else is an error wrapping ErrNotRegular, and opening
// it never blocks: the type is checked before the open, and again on the
// open file, which is opened non-blocking, so a FIFO put in its place
// meanwhile is refused too.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if err := wantRegular(st.Mode(), "a regular file"); err != nil {
		return nil, nil, err
	}
	f, err := openNonblocking(path)
	if err != nil {
		return nil, nil, err
	}
	if st, err = f.Stat(); err == nil {
		err = wantRegular(st.Mode(), "a regular file")
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// openRegularOrPipe opens a regular file or a pipe. A FIFO's open blocks
// until it has a writer, as cat's does: the user named it.
func openRegularOrPipe(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeNamedPipe == 0 {
		if err := wantRegular(st.Mode(), "a file or a pipe"); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err == nil && st.Mode()&fs.ModeNamedPipe == 0 {
		err = wantRegular(st.Mode(), "a file or a pipe")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// wantRegular is nil for a regular file's mode, else an error saying what
// the file is and that want was wanted.
func wantRegular(m fs.FileMode, want string) error {
	if m.IsRegular() {
		return nil
	}
	return &problem{Kind(m) + ", want " + want, ErrNotRegular}
}

// Kind names the type of a file for people: "a named pipe (FIFO)", "a
// device", "a socket", "a directory", "a regular file".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// Size formats a byte count for people: "1 MiB", "512 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
