package sessionlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/panto-dev/panto/conversation"
)

// maxHeaderLine bounds how much ReadHeader reads looking for the end of the
// first line; a real header is a few hundred bytes.
const maxHeaderLine = 1 << 20

// Read reads the whole log at path. It neither changes the file nor takes
// the writer lock, so it may run while a writer appends: a last line torn
// by a write in progress or by a crash (no newline at its end and not valid
// JSON) is skipped with a warning in Log.Warnings. Any other malformed line
// is an error naming the file and the line. The file is read and decoded a
// chunk at a time, on all cores, so a large log costs the memory of its
// entries, not that plus the file's size.
func Read(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read session log: %w", err)
	}
	defer f.Close()
	return Decode(f, path)
}

// Decode reads a log from r; name is used in errors and warnings, and as
// Log.Path. It applies the same rules as Read.
func Decode(r io.Reader, name string) (*Log, error) {
	d, err := decode(r, name)
	if err != nil {
		return nil, err
	}
	if d.tornAt >= 0 {
		d.log.Warnings = append(d.log.Warnings, fmt.Sprintf(
			"session log %s line %d: skipped torn last line (%d bytes, no newline, not valid JSON): a write in progress, or one cut short by a crash",
			name, d.tornLine, d.size-d.tornAt))
	}
	return d.log, nil
}

// ReadHeader reads only the first line of the log at path: enough to list
// many sessions without parsing them.
func ReadHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, fmt.Errorf("read session log header: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 4096)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil || err == io.EOF {
			break
		}
		if err != bufio.ErrBufferFull {
			return Header{}, fmt.Errorf("read session log header %s: %w", path, err)
		}
		if len(line) > maxHeaderLine {
			return Header{}, fmt.Errorf("session log %s: missing or garbled header: first line longer than %d bytes", path, maxHeaderLine)
		}
	}
	return parseHeader(bytes.TrimRight(line, "\r\n"), path)
}

// versionError is the error for a log of a newer format version.
type versionError struct {
	path    string
	version int
}

func (e *versionError) Error() string {
	return fmt.Sprintf("session log %s has format version %d, but this panto reads only up to version %d: it was written by a newer panto; upgrade panto",
		e.path, e.version, Version)
}

func (e *versionError) Unwrap() error { return ErrNewerVersion }

func parseHeader(line []byte, path string) (Header, error) {
	garbled := func(format string, args ...any) (Header, error) {
		return Header{}, fmt.Errorf("session log %s: missing or garbled header (line 1): %s", path, fmt.Sprintf(format, args...))
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return garbled("the first line is empty")
	}
	var h headerLine
	if err := json.Unmarshal(line, &h); err != nil {
		return garbled("%s", describeJSONError(err))
	}
	if h.Type != headerType {
		return garbled(`type is %q, want "session"`, h.Type)
	}
	if h.Version > Version {
		return Header{}, &versionError{path, h.Version}
	}
	if h.Version < 1 {
		return garbled("version %d (want a positive integer)", h.Version)
	}
	if h.ID == "" {
		return garbled("no session id")
	}
	created, err := time.Parse(time.RFC3339Nano, h.Created)
	if err != nil {
		return garbled("created: %v", err)
	}
	if !writableTime(created) {
		return garbled("created %s is out of range", h.Created)
	}
	return Header{Version: h.Version, ID: h.ID, Created: created.UTC(), Cwd: h.Cwd}, nil
}

// writableTime reports whether t, in UTC, has a four-digit year, so that
// it can be written as RFC 3339 again.
func writableTime(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// decoded is a decoded log plus what Open needs to repair the file's tail.
type decoded struct {
	log *Log
	// size is how many bytes were read.
	size int64
	// tornAt is the offset of a torn last line that was skipped, or -1.
	tornAt int64
	// tornLine is that line's number.
	tornLine int
	// noNewline is true when the file's last line is complete but lacks
	// its newline.
	noNewline bool
}

// span is one non-blank line of a chunk: chunk[start:end], without its
// newline and trailing spaces.
type span struct {
	start, end int
	line       int
}

const (
	// readChunk is how much of a log is read and decoded at a time. The
	// buffer is reused, so a large log is never held whole in memory
	// (every decoded string is a copy). It starts at firstChunk, doubles
	// up to readChunk, and grows further only for a longer line.
	firstChunk = 4 << 10
	readChunk  = 1 << 20
	// linesPerWorker is how many lines make it worth decoding a chunk on
	// another core.
	linesPerWorker = 256
)

// decode reads a log from r chunk by chunk: the header first, then the
// entries of each chunk's complete lines, on several cores.
func decode(r io.Reader, name string) (*decoded, error) {
	d := &decoded{log: &Log{Path: name}, tornAt: -1}
	var (
		buf     = make([]byte, firstChunk)
		n       int // bytes in buf
		lineNo  int // lines before buf[0]
		gotHead bool
		parts   [][]Entry
		fds     = make([]fastDecoder, runtime.GOMAXPROCS(0))
		l       = linker{path: name, index: map[string]int{}}
	)
	for {
		eof := false
		for n < len(buf) && !eof {
			k, err := r.Read(buf[n:])
			n += k
			if err == io.EOF {
				eof = true
			} else if err != nil {
				return nil, fmt.Errorf("read session log %s: %w", name, err)
			}
		}
		end := n // at the end of the file, the last line has no newline
		if !eof {
			end = bytes.LastIndexByte(buf[:n], '\n') + 1
			if end == 0 { // a line longer than the buffer
				buf = grow(buf, n)
				continue
			}
		}
		var spans []span
		for pos := 0; pos < end; {
			lineNo++
			i := bytes.IndexByte(buf[pos:end], '\n')
			next := pos + i + 1
			if i < 0 {
				i, next = end-pos, end
				d.noNewline = true
			}
			line := bytes.TrimRight(buf[pos:pos+i], " \t\r")
			switch {
			case !gotHead:
				h, err := parseHeader(line, name)
				if err != nil {
					return nil, err
				}
				d.log.Header, gotHead = h, true
			case len(bytes.TrimSpace(line)) == 0:
			case next == end && d.noNewline && !json.Valid(line):
				// A torn last line: a write in progress or cut short.
				d.tornAt, d.tornLine, d.noNewline = d.size+int64(pos), lineNo, false
			default:
				spans = append(spans, span{pos, pos + len(line), lineNo})
			}
			pos = next
		}
		entries, bad, err := decodeEntries(buf[:end], spans, name, fds)
		for i := range bad { // the lines before a bad one may be bad first
			if lerr := l.link(&entries[i], spans[i].line); lerr != nil {
				return nil, lerr
			}
		}
		if err != nil {
			return nil, err
		}
		if len(entries) > 0 {
			parts = append(parts, entries)
		}
		copy(buf, buf[end:n])
		n -= end
		d.size += int64(end)
		if eof {
			break
		}
		if len(buf) < readChunk {
			buf = grow(buf, n)
		}
	}
	if !gotHead {
		return nil, fmt.Errorf("session log %s: missing or garbled header: the file is empty", name)
	}
	d.log.Entries = concat(parts, len(l.lines))
	d.log.index = l.index
	return d, nil
}

// grow returns a buffer twice the size of buf holding its first n bytes.
func grow(buf []byte, n int) []byte {
	b := make([]byte, 2*len(buf))
	copy(b, buf[:n])
	return b
}

func concat(parts [][]Entry, n int) []Entry {
	if len(parts) == 1 {
		return parts[0]
	}
	out := make([]Entry, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// decodeEntries decodes the lines of chunk at spans, on several cores when
// there are many (one fastDecoder each). It returns the entries; if a line
// is bad, the first bad line's index and error (entries before it are
// decoded).
func decodeEntries(chunk []byte, spans []span, path string, fds []fastDecoder) ([]Entry, int, error) {
	if len(spans) == 0 {
		return nil, 0, nil
	}
	entries := make([]Entry, len(spans))
	workers := max(1, min(len(fds), len(spans)/linesPerWorker))
	per := (len(spans) + workers - 1) / workers
	bad := make([]int, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, len(spans))
		if lo >= hi {
			continue
		}
		wg.Go(func() {
			msgs := make([]conversation.Message, hi-lo)
			for i := lo; i < hi; i++ {
				s := spans[i]
				if err := decodeEntry(&fds[w], chunk[s.start:s.end], &entries[i], &msgs[i-lo]); err != nil {
					bad[w], errs[w] = i, fmt.Errorf("session log %s line %d: %w", path, s.line, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			return entries, bad[w], err
		}
	}
	return entries, len(spans), nil
}

// linker checks the tree as entries come, in file order: ids unique, the
// first entry the only one without a parent, every parent an earlier
// entry. It builds the index of ids.
type linker struct {
	path  string
	index map[string]int
	lines []int // the line of each entry
	prev  string
}

func (l *linker) link(e *Entry, line int) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("session log %s line %d: %s", l.path, line, fmt.Sprintf(format, args...))
	}
	if j, dup := l.index[e.ID]; dup {
		return fail("duplicate entry id %q (first used on line %d)", e.ID, l.lines[j])
	}
	n := len(l.lines)
	switch {
	case e.ParentID == "":
		if n > 0 {
			return fail("entry %s has no parent_id (only the first entry may lack one)", e.ID)
		}
	case n > 0 && l.prev == e.ParentID:
	default:
		if _, ok := l.index[e.ParentID]; !ok {
			return fail("entry %s: parent_id %q names no earlier entry", e.ID, e.ParentID)
		}
	}
	l.index[e.ID] = n
	l.lines = append(l.lines, line)
	l.prev = e.ID
	return nil
}
