package sessionlog

import (
	"fmt"
	"sync"

	"github.com/panto-dev/panto/conversation"
)

// Log is a session log as read: its header, its entries in file order, and
// warnings about what was skipped or repaired.
//
// The entries form a tree through ID and ParentID. The current leaf is the
// last entry of the file; the conversation is the messages on the chain
// from the root to the leaf. Methods that follow the chain expect Entries
// as Read left them (ids unique, each parent before its child).
type Log struct {
	// Path is the file the log was read from (Decode's name).
	Path string
	// Header is the log's first line.
	Header Header
	// Entries are every entry of the file, in file order.
	Entries []Entry
	// Warnings describe what was tolerated: a torn last line skipped by
	// Read, or repaired by Open. Show them to the user; the log is usable.
	Warnings []string

	// index maps an entry id to its position in Entries.
	index map[string]int
	// tree is Tree's result, for the Entries it was built from; treeMu
	// guards it, so Tree may be called from several goroutines.
	treeMu sync.Mutex
	tree   *Tree
}

// Leaf returns the current leaf, the last entry of the file, or nil when
// the log has no entries.
func (l *Log) Leaf() *Entry {
	if len(l.Entries) == 0 {
		return nil
	}
	return &l.Entries[len(l.Entries)-1]
}

// Find returns the entry with the given id, or nil.
func (l *Log) Find(id string) *Entry {
	i, ok := l.lookup(id)
	if !ok {
		return nil
	}
	return &l.Entries[i]
}

// lookup returns the position of id in Entries, rebuilding the index if
// Entries changed since it was built.
func (l *Log) lookup(id string) (int, bool) {
	if i, ok := l.index[id]; ok && i < len(l.Entries) && l.Entries[i].ID == id {
		return i, true
	}
	if len(l.index) == len(l.Entries) {
		return 0, false
	}
	l.index = make(map[string]int, len(l.Entries))
	for i := range l.Entries {
		if _, dup := l.index[l.Entries[i].ID]; !dup {
			l.index[l.Entries[i].ID] = i
		}
	}
	i, ok := l.index[id]
	return i, ok
}

// walk calls visit with the position of each entry on the chain from the
// entry at position leaf up to the root, leaf first. It fails when a
// parent is missing or the parents form a cycle (only possible in a Log
// built or changed by hand), having called visit for the entries before.
// Callers walk twice, to count and then to fill a slice from its end,
// rather than collect the positions in a slice of their own.
func (l *Log) walk(leaf int, visit func(i int)) error {
	for i, n := leaf, 0; ; n++ {
		if n == len(l.Entries) {
			return fmt.Errorf("session log %s: the parents of entry %s form a cycle", l.Path, l.Entries[leaf].ID)
		}
		visit(i)
		p := l.Entries[i].ParentID
		if p == "" {
			return nil
		}
		if i > 0 && l.Entries[i-1].ID == p {
			i--
			continue
		}
		j, ok := l.lookup(p)
		if !ok {
			return fmt.Errorf("session log %s: entry %s: parent_id %q names no entry", l.Path, l.Entries[i].ID, p)
		}
		i = j
	}
}

// Branch returns the entries on the chain from the root to the entry
// leafID, in root-to-leaf order (copies; their payloads are shared).
func (l *Log) Branch(leafID string) ([]Entry, error) {
	i, ok := l.lookup(leafID)
	if !ok {
		return nil, fmt.Errorf("session log %s: no entry with id %q", l.Path, leafID)
	}
	n := 0
	if err := l.walk(i, func(int) { n++ }); err != nil {
		return nil, err
	}
	out := make([]Entry, n)
	_ = l.walk(i, func(j int) { n--; out[n] = l.Entries[j] })
	return out, nil
}

// Messages rebuilds the conversation: the messages on the current branch
// (root to leaf), in order. Entries of other types are skipped. The
// messages share their content with the log. Hand them to
// conversation.EffectiveSystem for the system prompt. A chain broken by
// hand-made Entries (a missing parent) gives nil.
func (l *Log) Messages() []conversation.Message {
	if len(l.Entries) == 0 {
		return nil
	}
	msgs, _ := l.messagesTo(len(l.Entries) - 1)
	return msgs
}

// MessagesAt returns the conversation as of the entry id: the messages on
// the chain from the root to it. The system prompt at that point is
// conversation.EffectiveSystem of the result.
func (l *Log) MessagesAt(id string) ([]conversation.Message, error) {
	i, ok := l.lookup(id)
	if !ok {
		return nil, fmt.Errorf("session log %s: no entry with id %q", l.Path, id)
	}
	return l.messagesTo(i)
}

func (l *Log) messagesTo(leaf int) ([]conversation.Message, error) {
	n, err := l.countMessages(leaf)
	if err != nil {
		return nil, err
	}
	out := make([]conversation.Message, n)
	_ = l.walk(leaf, func(j int) {
		if m := l.Entries[j].Message; m != nil {
			n--
			out[n] = *m
		}
	})
	return out, nil
}

// countMessages returns how many messages the chain from the root to the
// entry at position leaf holds.
func (l *Log) countMessages(leaf int) (int, error) {
	n := 0
	err := l.walk(leaf, func(j int) {
		if l.Entries[j].Message != nil {
			n++
		}
	})
	return n, err
}

// MessageCount returns how many messages the current branch holds, as
// len(Messages()) without building the list.
func (l *Log) MessageCount() int {
	if len(l.Entries) == 0 {
		return 0
	}
	n, err := l.countMessages(len(l.Entries) - 1)
	if err != nil {
		return 0
	}
	return n
}

// FirstUserText returns what the user typed (Message.Typed) in the first
// user message on the current branch where that is not empty, or "" (for
// a session list's title): without the USER_PROMPT.md blocks panto put
// before it.
func (l *Log) FirstUserText() string {
	if len(l.Entries) == 0 {
		return ""
	}
	var first *conversation.Message // walking up, the last one seen
	err := l.walk(len(l.Entries)-1, func(j int) {
		if m := l.Entries[j].Message; m != nil && m.Role == conversation.RoleUser && hasText(m) {
			first = m
		}
	})
	if err != nil || first == nil {
		return ""
	}
	return first.Typed()
}

// hasText reports whether m.Typed() is not empty.
func hasText(m *conversation.Message) bool {
	return m.Typed() != ""
}

// Tree returns the shape of the log (see Tree): every entry, in file
// order, with the effective labels. It is built once, in time linear in
// the entries, and describes Entries as they were then. An entry whose
// parent is missing or not earlier (only in a Log built or changed by
// hand) counts as a root.
func (l *Log) Tree() *Tree {
	l.treeMu.Lock()
	defer l.treeMu.Unlock()
	if t := l.tree; t != nil && t.Len() == len(l.Entries) && (len(l.Entries) == 0 || t.Leaf() == l.Entries[len(l.Entries)-1].ID) {
		return t
	}
	t := newTree(l.Path)
	t.log = l
	t.table.reserve(&t.nodes, len(l.Entries))
	for i := range l.Entries {
		e := &l.Entries[i]
		parent := int32(-1)
		if e.ParentID != "" {
			if j, ok := t.find(e.ParentID); ok {
				parent = j
			}
		}
		r := roleUnknown
		if e.Message != nil {
			r = roleOf(string(e.Message.Role))
		}
		id, isHex := packID(e.ID)
		t.add(e.ID, id, isHex, -1, kindOf(e.Type), e.Type, r, parent, int64(i), 0)
		if e.Label != nil && e.Type == TypeLabel {
			if j, ok := t.find(e.Label.Target); ok {
				t.setLabel(j, e.Label.Text)
			}
		}
	}
	l.tree = t
	return t
}

// Labels returns the effective labels of the log's entries: each labelled
// entry's id and its label (Tree.Labels).
func (l *Log) Labels() map[string]string { return l.Tree().Labels() }

// Resolve returns the id of the entry ref names: its id or a unique
// prefix of it (Tree.Resolve).
func (l *Log) Resolve(ref string) (string, error) { return l.Tree().Resolve(ref) }
