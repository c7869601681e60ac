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

// errHeadTwice is the error for a line whose type, id or parent_id reads
// differently to the scan and to the decoder: the line gives one of them
// twice (encoding/json takes the last).
var errHeadTwice = errors.New("the line gives its type, id or parent_id twice")

// head is what the scan reads of an entry line. The slices point into the
// line; idv and parentv are the id and parent packed, when idHex and
// parentHex say they are 16 hex characters.
type head struct {
	typ, id, parent  []byte
	role             role
	idv, parentv     uint64
	idHex, parentHex bool
}

var (
	headType    = []byte(`{"type":"`)
	headID      = []byte(`,"id":"`)
	headParent  = []byte(`,"parent_id":"`)
	headTime    = []byte(`,"time":"`)
	headMessage = []byte(`,"message":{"role":"`)
)

// fastHead reads the head of a line in panto's layout; false for any
// other line.
func fastHead(l []byte, h *head) bool {
	if len(l) == 0 || l[len(l)-1] != '}' || !bytes.HasPrefix(l, headType) {
		return false
	}
	i := len(headType)
	var ok bool
	if h.typ, i, ok = plainAt(l, i); !ok || !bytes.HasPrefix(l[i:], headID) {
		return false
	}
	if h.id, h.idv, h.idHex, i, ok = idAt(l, i+len(headID)); !ok {
		return false
	}
	// A line without parent_id right after its id (the first entry, or
	// one written in another key order) is read the slow way: its
	// parent_id may come later.
	if !bytes.HasPrefix(l[i:], headParent) {
		return false
	}
	if h.parent, h.parentv, h.parentHex, i, ok = idAt(l, i+len(headParent)); !ok {
		return false
	}
	if string(h.typ) != string(TypeMessage) {
		return true
	}
	if !bytes.HasPrefix(l[i:], headTime) {
		return false
	}
	i += len(headTime)
	k := bytes.IndexByte(l[i:], '"')
	if k < 0 || !bytes.HasPrefix(l[i+k+1:], headMessage) {
		return false
	}
	var r []byte
	if r, _, ok = plainAt(l, i+k+1+len(headMessage)); !ok {
		return false
	}
	h.role = roleOfBytes(r)
	return true
}

// plainAt reads a string of printable ASCII without escapes from l[i:],
// up to its closing quote; it returns the string and the index after the
// quote.
func plainAt(l []byte, i int) ([]byte, int, bool) {
	for j := i; j < len(l); j++ {
		switch c := l[j]; {
		case c == '"':
			return l[i:j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// idAt is plainAt for an id, which is usually 16 hex characters: then it
// returns them packed too.
func idAt(l []byte, i int) (id []byte, v uint64, isHex bool, next int, ok bool) {
	if i+16 < len(l) && l[i+16] == '"' {
		if v, ok := packID(l[i : i+16]); ok {
			return l[i : i+16], v, true, i + 17, true
		}
	}
	id, next, ok = plainAt(l, i)
	v, isHex = packID(id)
	return id, v, isHex, next, ok
}

// slowHead reads the head of any line with encoding/json.
func slowHead(l []byte, h *head) error {
	var w struct {
		Type     EntryType       `json:"type"`
		ID       string          `json:"id"`
		ParentID string          `json:"parent_id"`
		Message  json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(l, &w); err != nil {
		return errors.New(describeJSONError(err))
	}
	h.typ, h.id, h.parent, h.role = []byte(w.Type), []byte(w.ID), []byte(w.ParentID), roleUnknown
	h.idv, h.idHex = packID(w.ID)
	h.parentv, h.parentHex = packID(w.ParentID)
	if w.Type == TypeMessage {
		var m struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(w.Message, &m) == nil {
			h.role = roleOf(m.Role)
		}
	}
	return nil
}

func kindOfBytes(b []byte) kind {
	switch string(b) {
	case "message":
		return kindMessage
	case "lifecycle":
		return kindLifecycle
	case "extension_data":
		return kindExtensionData
	case "model_change":
		return kindModelChange
	case "compaction":
		return kindCompaction
	case "move":
		return kindMove
	case "label":
		return kindLabel
	case "branch_summary":
		return kindBranchSummary
	case "permissions":
		return kindPermissions
	}
	return kindOther
}

func roleOfBytes(b []byte) role {
	switch string(b) {
	case "system":
		return roleSystem
	case "user":
		return roleUser
	case "assistant":
		return roleAssistant
	case "tool":
		return roleTool
	}
	return roleOther
}

// readFull reads the n bytes at off into buf (reused). They must be
// there: the scan reads up to a size the file had.
func readFull(r io.ReaderAt, off, n int64, buf []byte) ([]byte, error) {
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	k, err := r.ReadAt(buf, off)
	if k == len(buf) {
		err = nil
	} else if err == nil || err == io.EOF {
		err = fmt.Errorf("the file is shorter than %d bytes (was it rewritten?)", off+n)
	}
	return buf[:k], err
}

// appendRead appends the n bytes at off to buf.
func appendRead(r io.ReaderAt, off, n int64, buf []byte) ([]byte, error) {
	have := len(buf)
	if int64(cap(buf)-have) < n {
		b := make([]byte, have, 2*(int64(have)+n))
		copy(b, buf)
		buf = b
	}
	more, err := readFull(r, off, n, buf[have:have])
	return buf[:have+len(more)], err
}

// scanLinker places the jobs' entries in the tree, in file order, with
// the checks and the tolerance of linker.
type scanLinker struct {
	s    *scanned
	t    *Tree
	name string
	r    io.ReaderAt
	line int // lines before the current job
	// prev is the last entry placed.
	prev int32
}

func (l *scanLinker) link(j *scanJob) error {
	t := l.t
	fail := func(line int, format string, args ...any) error {
		return fmt.Errorf("session log %s line %d: %s", l.name, line, fmt.Sprintf(format, args...))
	}
	str := func(v uint64, other bool) string {
		if other {
			return j.strs[v]
		}
		return unpackID(v)
	}
	lookup := func(v uint64, other bool) (int32, bool) {
		if other {
			return t.find(j.strs[v]) // a string of 16 hex characters would have been packed
		}
		return t.table.find(&t.nodes, v)
	}
	for k := range j.recs {
		rec := &j.recs[k]
		line := l.line + int(rec.line)
		otherID := rec.flags&recOtherID != 0
		if t.nodes.n >= maxNodes {
			return fail(line, "more than %d entries: too many for one session log", maxNodes)
		}
		slot := int64(-1)
		if otherID {
			if dup, ok := t.find(j.strs[rec.id]); ok {
				return fail(line, "duplicate entry id %q (first used on line %d)", j.strs[rec.id], l.lineOf(dup))
			}
		} else {
			t.table.room(&t.nodes)
			dup, ok, at := t.table.probe(&t.nodes, rec.id)
			if ok {
				return fail(line, "duplicate entry id %q (first used on line %d)", unpackID(rec.id), l.lineOf(dup))
			}
			slot = int64(at)
		}
		id := ""
		if otherID || t.skipped != nil {
			id = str(rec.id, otherID)
			if first, ok := t.skipped[id]; ok {
				return fail(line, "duplicate entry id %q (first used on line %d)", id, first)
			}
		}
		n := t.nodes.n
		parent, fault := int32(-1), ""
		otherParent := rec.flags&recOtherParent != 0
		switch {
		case rec.flags&recHasParent == 0:
			if n > 0 {
				return fail(line, "entry %s has no parent_id (only the first entry may lack one)", str(rec.id, otherID))
			}
		case n > 0 && !otherParent && t.nodes.at(l.prev).flags()&flagOtherID == 0 && t.nodes.at(l.prev).id == rec.parent:
			parent = l.prev
		default:
			p, ok := lookup(rec.parent, otherParent)
			if ok {
				parent = p
			} else {
				fault = unknownRef("parent_id", str(rec.parent, otherParent), t.skipped)
			}
		}
		var label *Label
		if rec.kind == kindLabel {
			label = &j.labels[rec.aux]
			if _, ok := t.find(label.Target); !ok && fault == "" {
				fault = unknownRef("target", label.Target, t.skipped)
			}
		}
		typ := kindTypes[rec.kind]
		if rec.kind == kindOther {
			typ = j.types[rec.aux]
		}
		if fault != "" {
			if id == "" {
				id = str(rec.id, otherID)
			}
			if rec.kind == kindMessage {
				return fail(line, "entry %s: %s", id, fault)
			}
			if t.skipped == nil {
				t.skipped = map[string]int{}
			}
			t.skipped[id] = line
			l.s.warnings = append(l.s.warnings, skippedWarning(l.name, line, typ, id, fault))
			continue
		}
		if id == "" && otherID {
			id = j.strs[rec.id]
		}
		l.prev = t.add(id, rec.id, !otherID, slot, rec.kind, typ, rec.role, parent, rec.off, rec.size)
		if label != nil {
			target, _ := t.find(label.Target)
			t.setLabel(target, label.Text)
		}
		if rec.flags&recHasUsage != 0 {
			if t.usage == nil {
				t.usage = map[int32]Usage{}
			}
			t.usage[l.prev] = j.usages[rec.aux]
		}
	}
	if j.err != nil {
		return fail(l.line+j.line, "%s", j.err.Error())
	}
	if j.ioErr != nil {
		return j.ioErr
	}
	if j.tornAt >= 0 {
		l.s.tornAt, l.s.tornLine = j.tornAt, l.line+j.lines
	}
	l.s.noNewline = l.s.noNewline || j.noNewline
	l.line += j.lines
	return nil
}

// lineOf returns the line number of node i, counting the newlines before
// it: only errors need it.
func (l *scanLinker) lineOf(i int32) int {
	n, err := lineAt(l.r, l.t.nodes.at(i).off())
	if err != nil {
		return 0
	}
	return n
}

// lineAt returns the number of the line at offset off of r.
func lineAt(r io.ReaderAt, off int64) (int, error) {
	buf := make([]byte, 1<<20)
	n := 1
	for pos := int64(0); pos < off; {
		k, err := r.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
		n += bytes.Count(buf[:k], []byte{'\n'})
		pos += int64(k)
		if err != nil && pos < off {
			return 0, err
		}
	}
	return n, nil
}
