package sessionlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
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
	return Header{Version: h.Version, ID: h.ID, Created: created.UTC(), Cwd: h.Cwd,
		ParentSession: h.ParentSession, ParentEntry: h.ParentEntry}, nil
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
	// skipped maps the id of each entry skipped for its place in the tree
	// (see linker.link) to its line.
	skipped map[string]int
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
	// (every decoded string is a copy). When the reader's size is known
	// (a file, a bytes.Reader), the buffer starts at that size, up to
	// readChunk; otherwise it starts at firstChunk and doubles up to
	// readChunk. It grows further only for a longer line.
	firstChunk = 4 << 10
	readChunk  = 1 << 20
	// linesPerWorker is how many lines make it worth decoding a chunk on
	// another core.
	linesPerWorker = 256
)

// decode reads a log from r chunk by chunk: the header first, then the
// entries of each chunk's complete lines, on several cores, straight into
// one slice of entries sized from the reader's size when it is known.
func decode(r io.Reader, name string) (*decoded, error) {
	d := &decoded{log: &Log{Path: name}, tornAt: -1}
	hint := sizeHint(r)
	var (
		buf     = make([]byte, firstChunk)
		n       int // bytes in buf
		lineNo  int // lines before buf[0]
		gotHead bool
		spans   []span // reused from chunk to chunk
		entries []Entry
		fds     = make([]fastDecoder, runtime.GOMAXPROCS(0))
		l       = linker{path: name}
	)
	if hint >= firstChunk { // one chunk holds a file that fits, and EOF
		buf = make([]byte, min(hint, readChunk-1)+1)
	}
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
		spans = spans[:0]
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
		if len(spans) > 0 {
			entries = reserve(entries, len(spans), d.size+int64(end), hint, eof)
			l.reserve(cap(entries))
			dst := entries[len(entries) : len(entries)+len(spans)]
			bad, err := decodeEntries(buf[:end], spans, name, fds, dst)
			kept := 0
			for i := range bad { // the lines before a bad one may be bad first
				skip, lerr := l.link(&dst[i], spans[i].line)
				if lerr != nil {
					return nil, lerr
				}
				if !skip {
					dst[kept] = dst[i]
					kept++
				}
			}
			if err != nil {
				return nil, err
			}
			entries = entries[:len(entries)+kept]
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
	images := newImageLoader(name)
	images.restore(entries)
	d.log.Entries = slices.Clip(entries) // an append copies, as before
	d.log.Warnings = append(l.warnings, images.warnings...)
	d.log.index = l.index
	d.skipped = l.skipped
	if d.log.index == nil {
		d.log.index = map[string]int{}
	}
	return d, nil
}

// sizeHint returns how many bytes r holds, when it can tell (a file, a
// bytes.Reader), or 0. It is only a hint: a file may grow while it is read.
func sizeHint(r io.Reader) int {
	switch r := r.(type) {
	case interface{ Len() int }:
		return r.Len()
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			return int(min(fi.Size(), math.MaxInt32)) // an int on any platform
		}
	}
	return 0
}

// grow returns a buffer twice the size of buf holding its first n bytes.
func grow(buf []byte, n int) []byte {
	b := make([]byte, 2*len(buf))
	copy(b, buf[:n])
	return b
}

// reserve returns es with room for k more entries. With the reader's size
// (hint) and the bytes read so far, it makes room for the entries the rest
// of the file is likely to hold too, at the rate seen so far plus an
// eighth, so that a log's entries are usually allocated once; at the end
// of the file it makes room for exactly k more.
func reserve(es []Entry, k int, read int64, hint int, eof bool) []Entry {
	need := len(es) + k
	if need <= cap(es) {
		return es
	}
	c := need
	switch {
	case eof:
	case int64(hint) > read:
		est := need + int(float64(need)*float64(int64(hint)-read)/float64(read))
		c = max(need, est+est/8, cap(es)+cap(es)/4)
	default:
		c = max(need, 2*cap(es))
	}
	out := make([]Entry, len(es), c)
	copy(out, es)
	return out
}

// decodeEntries decodes the lines of chunk at spans into entries (one
// each), on several cores when there are many (one fastDecoder each). If a
// line is bad, it returns the first bad line's index and error (entries
// before it are decoded); otherwise len(spans).
func decodeEntries(chunk []byte, spans []span, path string, fds []fastDecoder, entries []Entry) (int, error) {
	bad, err := decodeSpans(chunk, spans, fds, entries)
	if err != nil {
		err = fmt.Errorf("session log %s line %d: %w", path, spans[bad].line, err)
	}
	return bad, err
}

// decodeSpans is decodeEntries with the error of the bad line as the
// decoder gave it.
func decodeSpans(chunk []byte, spans []span, fds []fastDecoder, entries []Entry) (int, error) {
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
					bad[w], errs[w] = i, err
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			return bad[w], err
		}
	}
	return len(spans), nil
}

// linker checks the tree as entries come, in file order: ids unique, the
// first entry the only one without a parent, every parent (and a label's
// target) an earlier entry. It builds the index of ids.
//
// An entry of another type than message that names no earlier entry (as
// parent or target) is skipped with a warning rather than refused: it is
// what a writer interrupted between deciding on a move or a label and
// recording its target would leave, it carries nothing the model sees,
// and skipping it keeps the session usable without rewriting the file (a
// writer continues from the entry before it). A later entry that names a
// skipped one is then in the same case. A message naming no earlier entry
// is an error: skipping it would lose part of the conversation.
type linker struct {
	path  string
	index map[string]int
	lines []int // the line of each entry
	prev  string
	// skipped maps the id of a skipped entry to its line.
	skipped  map[string]int
	warnings []string
}

// reserve sizes the index and the lines for n entries, once: the first
// chunk's estimate of the whole log.
func (l *linker) reserve(n int) {
	if l.index == nil {
		l.index = make(map[string]int, n)
		l.lines = make([]int, 0, n)
	}
}

// link places e, read on line, in the tree. It reports whether e was
// skipped instead.
func (l *linker) link(e *Entry, line int) (skipped bool, err error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("session log %s line %d: %s", l.path, line, fmt.Sprintf(format, args...))
	}
	if j, dup := l.index[e.ID]; dup {
		return false, fail("duplicate entry id %q (first used on line %d)", e.ID, l.lines[j])
	}
	if j, dup := l.skipped[e.ID]; dup {
		return false, fail("duplicate entry id %q (first used on line %d)", e.ID, j)
	}
	n := len(l.lines)
	fault := ""
	switch {
	case e.ParentID == "":
		if n > 0 {
			return false, fail("entry %s has no parent_id (only the first entry may lack one)", e.ID)
		}
	case n > 0 && l.prev == e.ParentID:
	default:
		if _, ok := l.index[e.ParentID]; !ok {
			fault = unknownRef("parent_id", e.ParentID, l.skipped)
		}
	}
	if fault == "" && e.Type == TypeLabel {
		if _, ok := l.index[e.Label.Target]; !ok {
			fault = unknownRef("target", e.Label.Target, l.skipped)
		}
	}
	if fault != "" {
		if e.Type == TypeMessage {
			return false, fail("entry %s: %s", e.ID, fault)
		}
		if l.skipped == nil {
			l.skipped = map[string]int{}
		}
		l.skipped[e.ID] = line
		l.warnings = append(l.warnings, skippedWarning(l.path, line, e.Type, e.ID, fault))
		return true, nil
	}
	l.index[e.ID] = n
	l.lines = append(l.lines, line)
	l.prev = e.ID
	return false, nil
}

// unknownRef says that field names id, which is no earlier entry.
func unknownRef(field, id string, skipped map[string]int) string {
	if line, ok := skipped[id]; ok {
		return fmt.Sprintf("%s %q names the entry skipped on line %d", field, id, line)
	}
	return fmt.Sprintf("%s %q names no earlier entry", field, id)
}

// skippedWarning is the warning for an entry skipped for its place in the
// tree.
func skippedWarning(path string, line int, typ EntryType, id, fault string) string {
	return fmt.Sprintf("session log %s line %d: skipped %s entry %s: %s (it carries no message; the session continues without it, and nothing is rewritten)",
		path, line, typ, id, fault)
}

// logIDs is the id set of a Log as read, for its Writer.
type logIDs struct {
	index   map[string]int
	skipped map[string]int
}

func (s logIDs) has(id string) bool {
	_, ok := s.index[id]
	return ok
}

func (s logIDs) taken(id string) bool {
	_, ok := s.skipped[id]
	return ok || s.has(id)
}
