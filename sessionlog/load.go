package sessionlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"

	"github.com/panto-dev/panto/conversation"
)

// Loaded is what resuming a session needs of its log, and no more: the
// current branch's entries that the next request and the host's state
// are made of, decoded; the rest of the log only as its Tree.
//
// Of the branch (the chain from the root to the leaf), Entries holds,
// in root-to-leaf order:
//
//   - every entry from the cut on: the latest compaction's FirstKeptID,
//     when it names a message on the branch, else the root (no cut);
//   - before the cut, every system message (system text is never
//     summarised away) and every entry of the types lifecycle,
//     model_change, compaction, move, label and branch_summary.
//
// Left out are the other messages before the cut (Skipped counts them),
// and extension_data entries and entries of unknown types before the cut.
// So memory follows what the next request needs, not the size of the
// file. A log without a compaction is loaded whole (its branch).
type Loaded struct {
	// Path is the log's file.
	Path   string
	Header Header
	// Entries are the branch's entries described above, root to leaf.
	Entries []Entry
	// Positions[i] is the position of Entries[i] on the branch (the root
	// is 0): two entries are neighbours on the branch when their
	// positions differ by one.
	Positions []int
	// Cut is the id of the first entry kept by the latest compaction of
	// the branch, or "" when nothing was left out for one (no compaction,
	// or the latest names no message of the branch).
	Cut string
	// Skipped is how many messages of the branch before Cut were left
	// out: all of them but the system ones.
	Skipped int
	// MessageCount is how many messages the branch holds, those left out
	// included.
	MessageCount int
	// Tree is the log's shape, for the tree view and navigation.
	Tree *Tree
	// Warnings are as Log.Warnings.
	Warnings []string
}

// Leaf returns the current leaf, the last entry of Entries, or nil for a
// log without entries.
func (l *Loaded) Leaf() *Entry {
	if len(l.Entries) == 0 {
		return nil
	}
	return &l.Entries[len(l.Entries)-1]
}

// Messages returns the messages of Entries, in order: the system messages
// before the cut, then every message from it on. They share their content
// with the entries.
func (l *Loaded) Messages() []conversation.Message {
	n := 0
	for i := range l.Entries {
		if l.Entries[i].Message != nil {
			n++
		}
	}
	out := make([]conversation.Message, 0, n)
	for i := range l.Entries {
		if m := l.Entries[i].Message; m != nil {
			out = append(out, *m)
		}
	}
	return out
}

// Load reads what resuming the session at path needs (see Loaded), with
// an index scan of the file (see Scan) and then the needed lines only. It
// neither changes the file nor takes the writer lock. It tolerates and
// refuses what Read does, and checks every line it decodes as Read does.
func Load(path string) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read session log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read session log: %w", err)
	}
	l, _, err := loadFrom(f, st.Size(), path)
	if err != nil {
		return nil, err
	}
	l.Tree.src = nil // f is closed: decode from the path from now on
	return l, nil
}

// loadFrom is Load of the first size bytes of r.
func loadFrom(r io.ReaderAt, size int64, name string) (*Loaded, *scanned, error) {
	s, err := scan(r, size, name)
	if err != nil {
		return nil, nil, err
	}
	if s.tornAt >= 0 {
		s.warnings = append(s.warnings, fmt.Sprintf(
			"session log %s line %d: skipped torn last line (%d bytes, no newline, not valid JSON): a write in progress, or one cut short by a crash",
			name, s.tornLine, s.size-s.tornAt))
	}
	l, err := load(s)
	if err != nil {
		return nil, nil, err
	}
	return l, s, nil
}

// beforeCut reports whether a node before the cut is loaded: what is not
// a message but cheap and part of the state, and what may be a system
// message.
func beforeCut(n *node) bool {
	switch n.kind() {
	case kindLifecycle, kindModelChange, kindCompaction, kindMove, kindLabel, kindBranchSummary, kindPermissions:
		return true
	}
	return n.system()
}

func load(s *scanned) (*Loaded, error) {
	t := s.tree
	out := &Loaded{Path: t.path, Header: s.header, Tree: t, Warnings: s.warnings}
	if t.nodes.n == 0 {
		return out, nil
	}
	chain := t.chain(t.nodes.n - 1)
	cut := 0
	for p := len(chain) - 1; p >= 0; p-- {
		if t.nodes.at(chain[p]).kind() != kindCompaction {
			continue
		}
		es, err := t.decode(chain[p : p+1])
		if err != nil {
			return nil, err
		}
		if k, ok := t.find(es[0].Compaction.FirstKeptID); ok && t.nodes.at(k).message() {
			if q, on := slices.BinarySearch(chain, k); on {
				cut, out.Cut = q, es[0].Compaction.FirstKeptID
			}
		}
		break // only the latest counts
	}
	var need []int32
	for p, i := range chain {
		n := t.nodes.at(i)
		if n.message() {
			out.MessageCount++
		}
		if p >= cut || beforeCut(n) {
			need = append(need, int32(p))
		} else if n.message() {
			out.Skipped++
		}
	}
	nodes := make([]int32, len(need))
	for k, p := range need {
		nodes[k] = chain[p]
	}
	chain = nil
	entries, warnings, err := t.decodeImages(nodes)
	if err != nil {
		return nil, err
	}
	out.Warnings = append(out.Warnings, warnings...)
	// A message whose role the scan could not tell was loaded to find
	// out; before the cut, only a system one stays.
	out.Entries, out.Positions = entries[:0], make([]int, 0, len(entries))
	for k := range entries {
		e := &entries[k]
		if int(need[k]) < cut && e.Message != nil && e.Message.Role != conversation.RoleSystem {
			out.Skipped++
			continue
		}
		out.Entries = append(out.Entries, *e)
		out.Positions = append(out.Positions, int(need[k]))
	}
	out.Entries = slices.Clip(out.Entries)
	return out, nil
}

// OpenLoaded is Open for a session resumed with Load: it takes the writer
// lock (failing with ErrLocked if the session has a writer), loads the log
// as Load does, repairs a torn last line or a missing newline as Open
// does, and returns a Writer that continues from the leaf. The Writer
// checks ids and parents against the Loaded's Tree, so it holds no id of
// the log as a string.
func OpenLoaded(path string) (*Writer, *Loaded, error) {
	lock, err := acquireLock(path)
	if err != nil {
		if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("open session log: %w", serr)
		}
		return nil, nil, err
	}
	w, l, err := openLoaded(path, lock)
	if err != nil {
		lock.release()
		return nil, nil, err
	}
	return w, l, nil
}

func openLoaded(path string, lock *fileLock) (*Writer, *Loaded, error) {
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
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("open session log: %w", err)
	}
	s, err := scan(f, st.Size(), path)
	if err != nil {
		return nil, nil, err
	}
	l, err := load(s)
	if err != nil {
		return nil, nil, err
	}
	size, warn, err := repairTail(f, path, s.size, s.tornAt, s.tornLine, s.noNewline)
	if err != nil {
		return nil, nil, err
	}
	if warn != "" {
		l.Warnings = append(l.Warnings, warn)
	}
	l.Tree.src = nil // the Writer's file is not the Tree's to read
	w := &Writer{path: path, header: l.Header, lock: lock, f: f, size: size, ids: map[string]struct{}{},
		base: l.Tree, leaf: l.Tree.Leaf()}
	w.acked.Store(size)
	ok = true
	return w, l, nil
}

// decode returns the entries of nodes, in the order given, decoded from
// the tree's log: from the Log in memory, or from the file. The lines are
// read in runs and decoded on all cores, each checked as Read checks it.
func (t *Tree) decode(nodes []int32) ([]Entry, error) {
	out, _, err := t.decodeImages(nodes)
	return out, err
}

// decodeImages is decode that also returns the warnings of images it
// could not fill in (see imageLoader).
func (t *Tree) decodeImages(nodes []int32) ([]Entry, []string, error) {
	out := make([]Entry, len(nodes))
	if len(nodes) == 0 {
		return out, nil, nil
	}
	if t.log != nil { // its images are filled in
		for k, i := range nodes {
			out[k] = t.log.Entries[i]
		}
		return out, nil, nil
	}
	r := t.src
	if r == nil {
		f, err := os.Open(t.path)
		if err != nil {
			return nil, nil, fmt.Errorf("read session log: %w", err)
		}
		defer f.Close()
		r = f
	}
	order, sorted := nodes, out
	resort := !slices.IsSorted(nodes)
	if resort { // read in file order, then put back
		order = slices.Clone(nodes)
		slices.Sort(order)
		sorted = make([]Entry, len(order))
	}
	d := batchDecoder{t: t, r: r, fds: make([]fastDecoder, runtime.GOMAXPROCS(0))}
	for k := 0; k < len(order); {
		n, err := d.batch(order[k:], sorted[k:])
		if err != nil {
			return nil, nil, err
		}
		k += n
	}
	if resort {
		for k, i := range nodes {
			j, _ := slices.BinarySearch(order, i)
			out[k] = sorted[j]
		}
	}
	images := newImageLoader(t.path)
	images.restore(out)
	return out, images.warnings, nil
}

// batchDecoder reads and decodes lines a batch at a time.
type batchDecoder struct {
	t     *Tree
	r     io.ReaderAt
	fds   []fastDecoder
	buf   []byte
	spans []span
}

const (
	// decodeBatch is how many bytes of lines are read and decoded at a
	// time.
	decodeBatch = 4 << 20
	// runGap is the largest gap between two lines that are read in one
	// read rather than two.
	runGap = 4 << 10
)

// batch reads and decodes the first of nodes (sorted), up to decodeBatch
// bytes (at least one line), into out; it returns how many.
func (d *batchDecoder) batch(nodes []int32, out []Entry) (int, error) {
	t := d.t
	d.buf, d.spans = d.buf[:0], d.spans[:0]
	k := 0
	for k < len(nodes) {
		// A run of lines close together is one read.
		first := t.nodes.at(nodes[k])
		start, end := first.off(), first.off()+int64(first.size)
		m := k + 1
		for ; m < len(nodes); m++ {
			n := t.nodes.at(nodes[m])
			if n.off()-end > runGap || n.off()+int64(n.size)-start > decodeBatch {
				break
			}
			end = n.off() + int64(n.size)
		}
		if len(d.buf) > 0 && len(d.buf)+int(end-start) > decodeBatch {
			break
		}
		at := len(d.buf)
		var err error
		if d.buf, err = appendRead(d.r, start, end-start, d.buf); err != nil {
			return 0, fmt.Errorf("read session log %s: %w", t.path, err)
		}
		for ; k < m; k++ {
			n := t.nodes.at(nodes[k])
			s := at + int(n.off()-start)
			d.spans = append(d.spans, span{start: s, end: s + int(n.size)})
		}
	}
	bad, err := decodeSpans(d.buf, d.spans, d.fds, out[:k])
	if err == nil {
		bad = -1
		for j := range k {
			if !t.sameHead(nodes[j], &out[j]) {
				bad, err = j, errHeadTwice
				break
			}
		}
	}
	if err != nil {
		line, lerr := lineAt(d.r, t.nodes.at(nodes[bad]).off())
		if lerr != nil {
			return 0, fmt.Errorf("session log %s at byte %d: %w", t.path, t.nodes.at(nodes[bad]).off(), err)
		}
		return 0, fmt.Errorf("session log %s line %d: %w", t.path, line, err)
	}
	return k, nil
}

// sameHead reports whether e, decoded from node i's line, has the type,
// id and parent the scan read there.
func (t *Tree) sameHead(i int32, e *Entry) bool {
	n := t.nodes.at(i)
	if n.parent < 0 {
		if e.ParentID != "" {
			return false
		}
	} else if !t.isID(n.parent, e.ParentID) {
		return false
	}
	return t.isID(i, e.ID) && e.Type == t.typeOf(i)
}

// isID reports whether id is node i's id.
func (t *Tree) isID(i int32, id string) bool {
	n := t.nodes.at(i)
	if n.flags()&flagOtherID != 0 {
		return t.other[n.id] == id
	}
	v, ok := packID(id)
	return ok && v == n.id
}

// Entries returns the entries ids name, decoded, in the order given: from
// the log in memory for a Log's Tree, else from the file, by its lines
// alone.
func (t *Tree) Entries(ids ...string) ([]Entry, error) {
	nodes := make([]int32, len(ids))
	for k, id := range ids {
		i, err := t.node(id)
		if err != nil {
			return nil, err
		}
		nodes[k] = i
	}
	return t.decode(nodes)
}

// SystemMessages is what the system prompt as of an entry is made of.
type SystemMessages struct {
	// Messages are the system messages on the chain from the root to the
	// entry, in order: conversation.EffectiveSystem of them is the prompt
	// as of the entry.
	Messages []conversation.Message
	// Positions[i] is the position of Messages[i] among all the messages
	// of the chain (from 0), to number the blocks of the prompt as the
	// conversation numbers its messages (SystemText.Index is the position
	// in Messages).
	Positions []int
	// Count is how many messages the chain holds.
	Count int
}

// SystemAt returns the system messages on the chain from the root to the
// entry id, decoding no other line, and the number of messages on the
// chain: the prompt as of that entry, exact. (For the prompt as of the
// current branch's first N messages, give NthMessage(N).)
func (t *Tree) SystemAt(id string) (SystemMessages, error) {
	i, err := t.node(id)
	if err != nil {
		return SystemMessages{}, err
	}
	var out SystemMessages
	var nodes []int32
	for _, j := range t.chain(i) {
		n := t.nodes.at(j)
		if n.system() {
			nodes = append(nodes, j)
			out.Positions = append(out.Positions, out.Count)
		}
		if n.message() {
			out.Count++
		}
	}
	es, err := t.decode(nodes)
	if err != nil {
		return SystemMessages{}, err
	}
	out.Messages = make([]conversation.Message, 0, len(es))
	pos := out.Positions[:0]
	for k := range es {
		if m := es[k].Message; m != nil && m.Role == conversation.RoleSystem {
			out.Messages = append(out.Messages, *m)
			pos = append(pos, out.Positions[k])
		}
	}
	out.Positions = pos
	return out, nil
}
