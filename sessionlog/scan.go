package sessionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/panto-dev/panto/conversation"
)

// The index scan reads a log in large chunks, on all cores, and keeps of
// each line only what a Tree holds: type, id, parent, the role of a
// message, and where the line is. It decodes a line only when it is a
// label (labels are few and short, and their targets must be checked).
// It checks what it reads as Read does (ids unique, parents and targets
// earlier entries, the same tolerance of a bad non-message entry and of a
// torn last line, the same errors), but a line it does not decode is
// checked only as far as its head and its closing brace: Read checks
// everything.
//
// panto writes every entry's head first, in one order:
//
//	{"type":"message","id":"…","parent_id":"…","time":"…","message":{"role":"system",…
//
// The scan takes that layout with a few byte comparisons; any other line
// (keys in another order, spaces, escapes), and any line of an unknown
// type, goes to encoding/json, which defines the result. (A line of a
// known type that gives its head's keys twice reads differently to the
// two, since encoding/json takes the last; panto never writes one, and
// when such a line is decoded the difference is an error.)

// scanned is a log as the index scan read it.
type scanned struct {
	tree   *Tree
	header Header
	// usage: the scan keeps each assistant message's usage
	// (Tree.usage), read from its line's end, for the summary.
	usage bool
	// size is how many bytes were scanned.
	size int64
	// tornAt, tornLine and noNewline are as in decoded.
	tornAt    int64
	tornLine  int
	noNewline bool
	warnings  []string
}

const (
	// scanChunk is how much of a log one scan job reads; small logs are
	// cut into smaller jobs, so that they are still scanned on all cores.
	scanChunk    = 4 << 20
	minScanChunk = 256 << 10
	// scanLookahead is read past a job's end, for its last line.
	scanLookahead = 64 << 10
)

// Scan reads the shape of the log at path (see Tree) without decoding its
// entries: a one-pass index scan of the file in large chunks, on all
// cores. It neither changes the file nor takes the writer lock; it
// tolerates what Read tolerates (a torn last line, a bad entry that is not
// a message: see Log.Warnings) and refuses what Read refuses in the head
// of each line, naming the file and line. Lines it does not decode are
// not checked past their head (Read checks everything).
func Scan(path string) (*Tree, error) { return ScanSize(path, -1) }

// ScanSize is Scan of the first size bytes of the log at path (all of it
// when size is negative or past its end): with a Writer's Size, the log
// as that writer had acknowledged it, taken while it goes on appending,
// without a lock and without a torn line.
func ScanSize(path string, size int64) (*Tree, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read session log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read session log: %w", err)
	}
	if size < 0 || size > st.Size() {
		size = st.Size()
	}
	s, err := scan(f, size, path)
	if err != nil {
		return nil, err
	}
	s.tree.src = nil // decode from the path from now on: f is closed
	return s.tree, nil
}

// scan builds the Tree of the first size bytes of r; name is used in
// errors and warnings.
func scan(r io.ReaderAt, size int64, name string) (*scanned, error) {
	return scanWith(r, size, name, false)
}

// scanWith is scan, keeping the replies' usage too when usage is set.
func scanWith(r io.ReaderAt, size int64, name string, usage bool) (*scanned, error) {
	s := &scanned{tree: newTree(name), tornAt: -1, usage: usage}
	s.tree.src = r
	if size == 0 {
		return nil, fmt.Errorf("session log %s: missing or garbled header: the file is empty", name)
	}
	first, err := readFull(r, 0, min(size, 64<<10), nil)
	nl := bytes.IndexByte(first, '\n')
	if err == nil && nl < 0 && size > int64(len(first)) {
		first, err = readFull(r, 0, min(size, maxHeaderLine+1), nil)
		nl = bytes.IndexByte(first, '\n')
	}
	if err != nil {
		return nil, fmt.Errorf("read session log %s: %w", name, err)
	}
	body := int64(nl + 1)
	switch {
	case nl < 0 && size > maxHeaderLine:
		return nil, fmt.Errorf("session log %s: missing or garbled header: first line longer than %d bytes", name, maxHeaderLine)
	case nl < 0:
		nl, body = len(first), size
		s.noNewline = true
	}
	h, err := parseHeader(bytes.TrimRight(first[:nl], " \t\r"), name)
	if err != nil {
		return nil, err
	}
	s.header = h
	s.size = size
	if body < size {
		if err := s.scanBody(r, body, size, name); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// scanJob is the lines whose first byte is in [a, b).
type scanJob struct {
	a, b int64
	recs []scanRec
	// strs holds the ids and parents that are not 16 hex characters,
	// labels the label entries, types the unknown types (by scanRec.aux).
	strs   []string
	labels []Label
	types  []EntryType
	// usage says to keep the usages of the assistant messages, in
	// usages (by scanRec.aux).
	usage  bool
	usages []Usage
	// lines counts the lines of the job, blank ones included.
	lines int
	// err is the job's first bad line, line its number in the job;
	// ioErr a failure to read.
	err   error
	line  int
	ioErr error
	// torn: the job's last line is a torn last line (at tornAt) or a
	// complete one without its newline.
	tornAt    int64
	noNewline bool
	done      chan struct{}
}

// scanRec is one entry line as a job read it.
type scanRec struct {
	id, parent uint64 // packed, or an index in strs (see flags)
	off        int64
	size       uint32
	line       int32 // in the job, from 1
	aux        int32 // index in labels, types or usages
	kind       kind
	role       role
	flags      uint8
}

const (
	recOtherID     = 1 << 0
	recOtherParent = 1 << 1
	recHasParent   = 1 << 2
	recHasUsage    = 1 << 3
)

func (s *scanned) scanBody(r io.ReaderAt, from, to int64, name string) error {
	workers := runtime.GOMAXPROCS(0)
	chunk := int64(scanChunk)
	for chunk > minScanChunk && (to-from)/chunk < int64(2*workers) {
		chunk /= 2
	}
	jobs := make([]*scanJob, 0, (to-from)/chunk+1)
	for a := from; a < to; a += chunk {
		jobs = append(jobs, &scanJob{a: a, b: min(a+chunk, to), tornAt: -1, usage: s.usage, done: make(chan struct{})})
	}
	workers = min(workers, len(jobs))
	tokens := make(chan struct{}, 2*workers) // jobs read ahead of the linker
	// spare holds the recs of jobs linked, for jobs to come: the records
	// of the whole log are never all in memory, nor made again per job.
	spare := make(chan []scanRec, 2*workers+1)
	quit := make(chan struct{})
	var next atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var buf []byte
			var fd fastDecoder
			for {
				select { // a token first, then a job: the job the linker waits for always runs
				case tokens <- struct{}{}:
				case <-quit:
					return
				}
				k := int(next.Add(1)) - 1
				if k >= len(jobs) {
					return
				}
				select {
				case jobs[k].recs = <-spare:
				default:
				}
				buf = jobs[k].run(r, to, name, buf, &fd)
				close(jobs[k].done)
			}
		})
	}
	defer func() {
		close(quit)
		wg.Wait()
	}()
	l := scanLinker{s: s, t: s.tree, name: name, r: r, line: 1}
	for k, j := range jobs {
		<-j.done
		if k == 0 && len(j.recs) > 0 { // size the id table from the first job
			perLine := (j.b - j.a) / int64(len(j.recs))
			l.t.table.reserve(&l.t.nodes, int((to-from)/max(perLine, 1)*9/8))
		}
		if err := l.link(j); err != nil {
			return err
		}
		select {
		case spare <- j.recs[:0]:
		default:
		}
		jobs[k] = nil
		<-tokens
	}
	return nil
}

// run reads and parses the job's lines; buf is scratch, returned grown.
func (j *scanJob) run(r io.ReaderAt, size int64, name string, buf []byte, fd *fastDecoder) []byte {
	// The job starts at its first line: the one after the first newline
	// at or after a-1 (a line starts at a when the byte before it ends one).
	base := j.a
	if j.a > 0 {
		base = j.a - 1
	}
	want := min(j.b+scanLookahead, size) - base
	var err error
	if buf, err = readFull(r, base, want, buf); err != nil {
		j.ioErr = fmt.Errorf("read session log %s: %w", name, err)
		return buf
	}
	pos := 0
	if j.a > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 || base+int64(i)+1 >= j.b {
			return buf // no line starts in the job
		}
		pos = i + 1
	}
	for base+int64(pos) < j.b {
		i := bytes.IndexByte(buf[pos:], '\n')
		for i < 0 && base+int64(len(buf)) < size { // a line longer than what was read
			more := min(int64(max(len(buf), scanLookahead)), size-base-int64(len(buf)))
			if buf, err = appendRead(r, base+int64(len(buf)), more, buf); err != nil {
				j.ioErr = fmt.Errorf("read session log %s: %w", name, err)
				return buf
			}
			i = bytes.IndexByte(buf[pos:], '\n')
		}
		end, next := pos+i, pos+i+1
		last := i < 0
		if last {
			end, next = len(buf), len(buf)
		}
		j.lines++
		j.line1(buf[pos:end], base+int64(pos), last, fd)
		if j.err != nil {
			return buf
		}
		pos = next
	}
	return buf
}

// line1 reads one line at offset off; last says it is the file's last
// line and has no newline.
func (j *scanJob) line1(raw []byte, off int64, last bool, fd *fastDecoder) {
	line := bytes.TrimRight(raw, " \t\r")
	blank := len(bytes.TrimSpace(line)) == 0
	if last {
		if !blank && !json.Valid(line) { // a write in progress or cut short
			j.tornAt = off
			return
		}
		j.noNewline = true
	}
	if blank {
		return
	}
	fail := func(err error) {
		j.err, j.line = err, j.lines
	}
	rec := scanRec{off: off, size: uint32(len(line)), line: int32(j.lines)}
	if len(line) > 1<<32-1 {
		fail(errors.New("line longer than 4 GB"))
		return
	}
	var h head
	// An entry of an unknown type is kept as its line, whatever its
	// shape (a key given twice, say): encoding/json reads its head, as
	// Read does.
	if !fastHead(line, &h) || kindOfBytes(h.typ) == kindOther {
		if err := slowHead(line, &h); err != nil {
			fail(err)
			return
		}
	}
	rec.kind, rec.role = kindOfBytes(h.typ), h.role
	switch {
	case len(h.typ) == 0:
		fail(errors.New("entry without a type"))
		return
	case string(h.typ) == headerType:
		fail(errors.New("a second session header (only line 1 may be one)"))
		return
	case len(h.id) == 0 && rec.kind == kindOther:
		fail(fmt.Errorf("entry of type %q without an id", h.typ))
		return
	case len(h.id) == 0:
		fail(fmt.Errorf("%s entry without an id", h.typ))
		return
	}
	if h.idHex {
		rec.id = h.idv
	} else {
		rec.id, rec.flags = uint64(len(j.strs)), rec.flags|recOtherID
		j.strs = append(j.strs, string(h.id))
	}
	if len(h.parent) > 0 {
		rec.flags |= recHasParent
		if h.parentHex {
			rec.parent = h.parentv
		} else {
			rec.parent, rec.flags = uint64(len(j.strs)), rec.flags|recOtherParent
			j.strs = append(j.strs, string(h.parent))
		}
	}
	switch rec.kind {
	case kindOther:
		rec.aux = int32(len(j.types))
		j.types = append(j.types, EntryType(h.typ))
	case kindLabel:
		var e Entry
		if err := decodeEntry(fd, line, &e, new(conversation.Message)); err != nil {
			fail(err)
			return
		}
		if e.Type != TypeLabel || e.ID != string(h.id) || e.ParentID != string(h.parent) {
			fail(errHeadTwice)
			return
		}
		rec.aux = int32(len(j.labels))
		j.labels = append(j.labels, *e.Label)
	case kindMessage:
		if j.usage && (rec.role == roleAssistant || rec.role == roleUnknown) {
			if u, ok := fd.usageAtEnd(line[len(line)-min(len(line), usageTail):]); ok {
				rec.aux, rec.flags = int32(len(j.usages)), rec.flags|recHasUsage
				j.usages = append(j.usages, u)
			}
		}
	}
	j.recs = append(j.recs, rec)
}
