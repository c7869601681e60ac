package sessionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panto-dev/panto/internal/osfile"
)

// Writer appends entries to one session log. It is the session's only
// writer: it holds the log's lock file from Create or Open until Close. It
// is safe for concurrent use; each Append is recorded whole, in the order
// the calls took the writer.
type Writer struct {
	path   string
	header Header
	lock   *fileLock

	mu   sync.Mutex
	f    logFile
	size int64 // bytes of the file that are acknowledged
	leaf string
	// base holds the ids the log had when it was opened (nil for a new
	// log): the index of the Log or Tree it was read into, so that no id
	// is held twice. ids holds the ids appended since.
	base   idSet
	ids    map[string]struct{}
	broken error // set when the file may hold bytes that were not acknowledged
	closed bool
	buf    bytes.Buffer

	// acked is size, for Size: read without waiting on an Append.
	acked atomic.Int64
}

// idSet is a set of entry ids: has reports whether id names an entry
// (taken reports whether it is used at all, by an entry or by a line
// that was skipped, so that no later entry takes it).
type idSet interface {
	has(id string) bool
	taken(id string) bool
}

// logFile is what a Writer needs of its file (tests inject failures).
type logFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Create creates a new log at path and returns its writer. It creates the
// directory (mode 0700) if needed and the file (mode 0600; it must not
// exist), and writes and fsyncs the header line, then the directory. In h,
// a zero Version, ID or Created is filled with Version, NewID() and now;
// Cwd must be an absolute path.
func Create(path string, h Header) (*Writer, error) {
	fail := func(err error) error { return fmt.Errorf("create session log %s: %w", path, err) }
	if err := newHeader(&h); err != nil {
		return nil, fail(err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fail(err)
	}
	lock, err := acquireLock(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		lock.release()
		return nil, fail(err)
	}
	var buf bytes.Buffer
	err = appendHeader(&buf, h)
	if err == nil {
		_, err = f.Write(buf.Bytes())
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = osfile.SyncDir(dir)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		lock.release()
		return nil, fail(err)
	}
	w := &Writer{path: path, header: h, lock: lock, f: f, size: int64(buf.Len()), ids: map[string]struct{}{}}
	w.acked.Store(w.size)
	return w, nil
}

// newHeader checks the header of a new log, filling in a zero Version,
// ID or Created.
func newHeader(h *Header) error {
	if h.Version == 0 {
		h.Version = Version
	}
	if h.Version != Version {
		return fmt.Errorf("this panto writes format version %d, not %d", Version, h.Version)
	}
	if h.ID == "" {
		h.ID = NewID()
	}
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	h.Created = h.Created.UTC()
	if !writableTime(h.Created) {
		return fmt.Errorf("header created %s is out of range (years 0 to 9999)", h.Created)
	}
	if !filepath.IsAbs(h.Cwd) {
		return fmt.Errorf("header cwd %q is not an absolute path", h.Cwd)
	}
	if h.ParentEntry != "" && h.ParentSession == "" {
		return fmt.Errorf("header parent entry %q without a parent session", h.ParentEntry)
	}
	return nil
}

// Open opens the existing log at path for appending. It takes the writer
// lock first (failing with ErrLocked if the session has a writer), then
// reads the log. A last line torn by a crash is cut off (the file is
// truncated to its last complete line and fsynced; nothing before it is
// lost) and a last line missing only its newline gets one; either repair
// is reported in Log.Warnings. The writer continues from the log's leaf.
func Open(path string) (*Writer, *Log, error) {
	lock, err := acquireLock(path)
	if err != nil {
		if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("open session log: %w", serr) // say what is missing: the log
		}
		return nil, nil, err
	}
	w, l, err := open(path, lock)
	if err != nil {
		lock.release()
		return nil, nil, err
	}
	return w, l, nil
}

func open(path string, lock *fileLock) (*Writer, *Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open session log: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	d, err := decode(f, path)
	if err != nil {
		return nil, nil, err
	}
	log := d.log
	size, warn, err := repairTail(f, path, d.size, d.tornAt, d.tornLine, d.noNewline)
	if err != nil {
		return nil, nil, err
	}
	if warn != "" {
		log.Warnings = append(log.Warnings, warn)
	}
	w := &Writer{path: path, header: log.Header, lock: lock, f: f, size: size, ids: map[string]struct{}{},
		base: logIDs{log.index, d.skipped}}
	w.acked.Store(size)
	if leaf := log.Leaf(); leaf != nil {
		w.leaf = leaf.ID
	}
	ok = true
	return w, log, nil
}

// repairTail repairs the end of a log of size bytes opened for writing: it
// cuts a torn last line (at tornAt, line tornLine; -1 for none) or ends a
// last line that lacks its newline, and fsyncs. It returns the size after
// the repair and a warning saying what it did ("" for nothing).
func repairTail(f *os.File, path string, size, tornAt int64, tornLine int, noNewline bool) (int64, string, error) {
	repair := func(what string, fix func() error) error {
		if err := fix(); err != nil {
			return fmt.Errorf("open session log %s: %s: %w", path, what, err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("open session log %s: %s: %w", path, what, err)
		}
		return nil
	}
	switch {
	case tornAt >= 0:
		if err := repair("cut torn last line", func() error { return f.Truncate(tornAt) }); err != nil {
			return 0, "", err
		}
		return tornAt, fmt.Sprintf(
			"session log %s line %d: repaired torn last line: cut %d bytes that were not valid JSON (an interrupted write); everything before it is intact",
			path, tornLine, size-tornAt), nil
	case noNewline:
		if err := repair("end last line", func() error { _, err := f.Write([]byte{'\n'}); return err }); err != nil {
			return 0, "", err
		}
		return size + 1, fmt.Sprintf("session log %s: added the missing newline at the end of the last line", path), nil
	}
	return size, "", nil
}

// Append records entries, in order, and returns them as recorded. A
// missing ID is generated; a missing ParentID is the current leaf (for the
// first entry of a batch) or the entry before it in the batch; a zero Time
// is now. An explicit ParentID must name an entry already in the log or
// earlier in the batch: that is how a branch from an earlier point starts.
// Each recorded entry becomes the new leaf.
//
// All the entries are written with one write and made durable with one
// fsync: when Append returns nil they are on disk; a batch is one
// durability point. A crash during Append can leave a prefix of the batch
// in the file (never a line cut short once Open has repaired it); none of
// it was acknowledged.
//
// If Append fails, nothing counts as recorded: the writer cuts the file
// back to its size before the call. If it cannot, or if fsync failed, the
// writer is broken and every later Append fails; Close it and Open the log
// again, which repairs the tail.
func (w *Writer) Append(entries ...Entry) ([]Entry, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fail := func(err error) ([]Entry, error) {
		return nil, fmt.Errorf("append to session log %s: %w", w.path, err)
	}
	if w.closed {
		return fail(os.ErrClosed)
	}
	if w.broken != nil {
		return fail(fmt.Errorf("the writer is broken by an earlier failure (%w); close it and open the log again", w.broken))
	}
	out := make([]Entry, len(entries))
	copy(out, entries)
	now := time.Now().UTC()
	added := make(map[string]struct{}, len(out))
	leaf := w.leaf
	w.buf.Reset()
	for i := range out {
		e := &out[i]
		if err := w.prepare(e, leaf, added, now); err != nil {
			return fail(fmt.Errorf("entry %d of %d: %w", i+1, len(out), err))
		}
		line := e
		if e.Message != nil && hasInlineImages(e.Message) {
			m, err := storeImages(ImageDir(w.path), e.Message)
			if err != nil {
				return fail(fmt.Errorf("entry %d of %d (%s): %w", i+1, len(out), e.ID, err))
			}
			stored := *e
			stored.Message = m
			line = &stored
		}
		if err := appendEntry(&w.buf, line); err != nil {
			return fail(fmt.Errorf("entry %d of %d (%s): %w", i+1, len(out), e.ID, err))
		}
		added[e.ID] = struct{}{}
		leaf = e.ID
	}
	if _, err := w.f.Write(w.buf.Bytes()); err != nil {
		if terr := w.cutBack(); terr != nil {
			w.broken = errors.Join(err, terr)
		}
		return fail(err)
	}
	if err := w.f.Sync(); err != nil {
		// What reached the disk is unknown: do not write after it.
		w.broken = errors.Join(fmt.Errorf("fsync: %w", err), w.cutBack())
		return fail(fmt.Errorf("fsync: %w", err))
	}
	w.size += int64(w.buf.Len())
	w.acked.Store(w.size)
	w.leaf = leaf
	for id := range added {
		w.ids[id] = struct{}{}
	}
	if w.buf.Cap() > 1<<20 {
		w.buf = bytes.Buffer{} // do not keep a huge batch's buffer alive
	}
	return out, nil
}

// cutBack truncates the file to its acknowledged size.
func (w *Writer) cutBack() error {
	if err := w.f.Truncate(w.size); err != nil {
		return fmt.Errorf("cut back to %d bytes: %w", w.size, err)
	}
	return nil
}

// prepare checks e and fills in its id, parent and time.
func (w *Writer) prepare(e *Entry, leaf string, added map[string]struct{}, now time.Time) error {
	if err := checkEntry(e); err != nil {
		return err
	}
	known := func(id string) bool {
		if _, ok := w.ids[id]; ok {
			return true
		}
		if _, ok := added[id]; ok {
			return true
		}
		return w.base != nil && w.base.has(id)
	}
	taken := func(id string) bool { return known(id) || w.base != nil && w.base.taken(id) }
	if !e.Type.known() {
		return prepareRaw(e, leaf, known, taken)
	}
	if e.ID == "" {
		for e.ID = newEntryID(); taken(e.ID); e.ID = newEntryID() {
		}
	} else if taken(e.ID) {
		return fmt.Errorf("id %q is already used", e.ID)
	}
	switch {
	case e.ParentID == "":
		e.ParentID = leaf
	case !known(e.ParentID):
		return fmt.Errorf("entry %s: parent_id %q names no entry of the log", e.ID, e.ParentID)
	}
	// A forked log holds moves and summaries whose "from" is an entry of
	// the session it was forked from, on a branch the fork left out.
	forked := w.header.ParentSession != ""
	switch {
	case e.Type == TypeLabel && !known(e.Label.Target):
		return fmt.Errorf("label entry %s: target %q names no entry of the log", e.ID, e.Label.Target)
	case e.Type == TypeMove && !forked && !known(e.Move.From):
		return fmt.Errorf("move entry %s: from %q names no entry of the log", e.ID, e.Move.From)
	case e.Type == TypeBranchSummary && !forked && !known(e.BranchSummary.From):
		return fmt.Errorf("branch_summary entry %s: from %q names no entry of the log", e.ID, e.BranchSummary.From)
	}
	if e.Time.IsZero() {
		e.Time = now
	}
	if !writableTime(e.Time) {
		return fmt.Errorf("entry %s: time %s is out of range (years 0 to 9999)", e.ID, e.Time)
	}
	e.Time = e.Time.UTC()
	return nil
}

// prepareRaw checks an entry of an unknown type, which is written as its
// Raw line untouched: the line's own type, id and parent_id are the truth.
func prepareRaw(e *Entry, leaf string, known, taken func(string) bool) error {
	var h rawHead
	if err := json.Unmarshal(e.Raw, &h); err != nil {
		return fmt.Errorf("raw entry of type %q: %s", e.Type, describeJSONError(err))
	}
	switch {
	case h.Type != e.Type:
		return fmt.Errorf("raw entry of type %q: its line has type %q", e.Type, h.Type)
	case h.ID == "":
		return fmt.Errorf("raw entry of type %q: its line has no id", e.Type)
	case e.ID != "" && e.ID != h.ID, e.ParentID != "" && e.ParentID != h.ParentID:
		return fmt.Errorf("raw entry %s: ID and ParentID must match its line's id and parent_id", h.ID)
	case taken(h.ID):
		return fmt.Errorf("id %q is already used", h.ID)
	case h.ParentID == "" && leaf != "":
		return fmt.Errorf("raw entry %s: its line has no parent_id (only the first entry may lack one)", h.ID)
	case h.ParentID != "" && !known(h.ParentID):
		return fmt.Errorf("raw entry %s: parent_id %q names no entry of the log", h.ID, h.ParentID)
	}
	e.ID, e.ParentID = h.ID, h.ParentID
	var s string
	if e.Time.IsZero() && json.Unmarshal(h.Time, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil && writableTime(t) {
			e.Time = t.UTC()
		}
	}
	return nil
}

// Size returns how many bytes of the log are acknowledged: the entries of
// every Append that has returned, as whole lines. It never waits on an
// Append under way (that one's entries are not counted until it returns),
// so a reader can take a consistent view of a log being written without
// stopping its writer (ScanSize).
func (w *Writer) Size() int64 { return w.acked.Load() }

// Leaf returns the id of the current leaf: the last entry recorded, or ""
// for a log with no entries.
func (w *Writer) Leaf() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.leaf
}

// Path returns the log's path.
func (w *Writer) Path() string { return w.path }

// Header returns the log's header.
func (w *Writer) Header() Header { return w.header }

// Close closes the file and releases the lock (removing the lock file).
// Every acknowledged entry is already durable. Closing twice is a no-op.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := errors.Join(w.f.Close(), w.lock.release())
	if err != nil {
		return fmt.Errorf("close session log %s: %w", w.path, err)
	}
	return nil
}
