package sessionlog

import (
	"fmt"

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

// chain returns the positions of the entries from the root to the entry at
// position leaf, in that order, or an error when a parent is missing (only
// possible in a Log built or changed by hand).
func (l *Log) chain(leaf int) ([]int, error) {
	var rev []int
	for i := leaf; ; {
		rev = append(rev, i)
		if len(rev) > len(l.Entries) {
			return nil, fmt.Errorf("session log %s: the parents of entry %s form a cycle", l.Path, l.Entries[leaf].ID)
		}
		p := l.Entries[i].ParentID
		if p == "" {
			break
		}
		if i > 0 && l.Entries[i-1].ID == p {
			i--
			continue
		}
		j, ok := l.lookup(p)
		if !ok {
			return nil, fmt.Errorf("session log %s: entry %s: parent_id %q names no entry", l.Path, l.Entries[i].ID, p)
		}
		i = j
	}
	for a, b := 0, len(rev)-1; a < b; a, b = a+1, b-1 {
		rev[a], rev[b] = rev[b], rev[a]
	}
	return rev, nil
}

// Branch returns the entries on the chain from the root to the entry
// leafID, in root-to-leaf order (copies; their payloads are shared).
func (l *Log) Branch(leafID string) ([]Entry, error) {
	i, ok := l.lookup(leafID)
	if !ok {
		return nil, fmt.Errorf("session log %s: no entry with id %q", l.Path, leafID)
	}
	idx, err := l.chain(i)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(idx))
	for k, j := range idx {
		out[k] = l.Entries[j]
	}
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
	idx, err := l.chain(leaf)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, j := range idx {
		if l.Entries[j].Message != nil {
			n++
		}
	}
	out := make([]conversation.Message, 0, n)
	for _, j := range idx {
		if m := l.Entries[j].Message; m != nil {
			out = append(out, *m)
		}
	}
	return out, nil
}

// MessageCount returns how many messages the current branch holds, as
// len(Messages()) without building the list.
func (l *Log) MessageCount() int {
	if len(l.Entries) == 0 {
		return 0
	}
	idx, err := l.chain(len(l.Entries) - 1)
	if err != nil {
		return 0
	}
	n := 0
	for _, j := range idx {
		if l.Entries[j].Message != nil {
			n++
		}
	}
	return n
}

// FirstUserText returns the text of the first user message on the current
// branch that has any, or "" (for a session list's title).
func (l *Log) FirstUserText() string {
	if len(l.Entries) == 0 {
		return ""
	}
	idx, err := l.chain(len(l.Entries) - 1)
	if err != nil {
		return ""
	}
	for _, j := range idx {
		if m := l.Entries[j].Message; m != nil && m.Role == conversation.RoleUser {
			if t := m.Text(); t != "" {
				return t
			}
		}
	}
	return ""
}
