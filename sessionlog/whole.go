package sessionlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// ErrExists is wrapped by WriteNew's error when something is already at
// the path: a new log never replaces anything. Choose another path.
var ErrExists = errors.New("a file is already there")

// WriteNew creates a new log at path holding h and entries, whole or not
// at all: it writes them to a temporary file in path's directory (which
// must exist; see the atomicfile package for the name), fsyncs it, and
// links it to path only if nothing is there, then fsyncs the directory.
// Until then nothing is at path, so a failure, a cancelled ctx (which
// removes the temporary file at once), a crash or a kill never leaves a
// log with part of the entries — or with none, which a later run would
// take for a session. In h, a zero Version, ID or Created is filled in
// as by Create; the entries are checked and completed as by Append. It
// returns the header written. No lock is taken: no one can open the log
// before it is complete.
func WriteNew(ctx context.Context, path string, h Header, entries []Entry) (Header, error) {
	fail := func(err error) (Header, error) {
		return Header{}, fmt.Errorf("create session log %s: %w", path, err)
	}
	if err := newHeader(&h); err != nil {
		return fail(err)
	}
	if _, err := os.Lstat(path); err == nil {
		return fail(ErrExists)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	tmp, err := atomicfile.Create(ctx, path)
	if err != nil {
		return fail(err)
	}
	defer tmp.Abort()
	var buf bytes.Buffer
	if err := appendHeader(&buf, h); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		return fail(err)
	}
	w := &Writer{path: path, header: h, f: tempLog{tmp}, size: int64(buf.Len()), ids: map[string]struct{}{}}
	if _, err := w.Append(entries...); err != nil {
		return fail(err)
	}
	if err := tmp.Commit(false); err != nil {
		if errors.Is(err, atomicfile.ErrExists) {
			return fail(ErrExists)
		}
		return fail(err)
	}
	return h, nil
}

// tempLog is a temporary file as a Writer's file.
type tempLog struct{ t *atomicfile.File }

func (l tempLog) Write(p []byte) (int, error) { return l.t.Write(p) }
func (l tempLog) Sync() error                 { return l.t.File().Sync() }
func (l tempLog) Truncate(size int64) error   { return l.t.File().Truncate(size) }
func (l tempLog) Close() error                { return nil } // the atomicfile.File's
var _ logFile = tempLog{}

// openRegular opens the regular file at path (following a symlink) for
// reading without blocking: a FIFO, a device or a socket is an error
// (ErrNotRegular), never waited on.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	return f, st, nil
}

// ErrNotRegular is wrapped by the errors of HeaderOnly and LooksLikeLog
// for what is not a regular file: it is not a session log.
var ErrNotRegular = errors.New("not a regular file")

// HeaderOnly reports whether the log at path holds its header line and
// nothing after it but white space: what a panto killed while it created
// a log leaves (an older panto's fork, cut short). Such a log has nothing
// to continue. It reads the first line and at most 4 KiB after it.
func HeaderOnly(path string) (bool, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return false, fmt.Errorf("read session log %s: %w", path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 4096)
	var n int64
	for {
		chunk, err := r.ReadSlice('\n')
		n += int64(len(chunk))
		if err == nil || err == io.EOF {
			break
		}
		if err != bufio.ErrBufferFull {
			return false, fmt.Errorf("read session log %s: %w", path, err)
		}
		if n > maxHeaderLine {
			break
		}
	}
	if n > maxHeaderLine || st.Size()-n > 4096 {
		return false, nil
	}
	rest, err := io.ReadAll(io.LimitReader(r, 4097))
	if err != nil {
		return false, fmt.Errorf("read session log %s: %w", path, err)
	}
	return len(bytes.TrimSpace(rest)) == 0, nil
}

// LooksLikeLog reports whether the file at path begins as a session log
// does: a header line of any version (a newer panto's included), a
// header this panto cannot read, or the start of one cut short (a crash
// while the log was created). A file that does is never overwritten by
// an export: what panto cannot read may still be someone's session. It
// reads at most the first 64 KiB, and only of a regular file.
func LooksLikeLog(path string) (bool, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return looksLikeHeader(buf[:n]), nil
}

// looksLikeHeader reports whether b, the start of a file, begins with
// something a session header is or was: see LooksLikeLog.
func looksLikeHeader(b []byte) bool {
	first, _, complete := bytes.Cut(b, []byte{'\n'})
	first = bytes.TrimRight(first, "\r")
	if _, err := parseHeader(first, ""); err == nil || errors.Is(err, ErrNewerVersion) {
		return true
	}
	var h struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(first, &h) == nil {
		return h.Type == headerType
	}
	if complete && json.Valid(first) {
		return false
	}
	// Not JSON: a header cut short reads `{"type":"session"` as far as
	// it goes (white space aside), with its key at least.
	i, matched := 0, 0
	for _, tok := range []string{`{`, `"type"`, `:`, `"session"`} {
		for i < len(first) && (first[i] == ' ' || first[i] == '\t' || first[i] == '\r') {
			i++
		}
		rest := first[i:]
		switch {
		case bytes.HasPrefix(rest, []byte(tok)):
			i += len(tok)
			matched++
		case bytes.HasPrefix([]byte(tok), rest): // cut here, or inside tok
			return matched >= 2
		default:
			return false
		}
	}
	return true
}
