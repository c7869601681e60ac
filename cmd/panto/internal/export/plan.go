package export

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/cmd/panto/internal/promptlog"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/linediff"
	"github.com/panto-dev/panto/sessionlog"
)

// This file holds the plan both formats render: which entries, in which
// branches, and the prompt state in effect at each.

// Options say what to export. The labels shown are the log's own (its
// label entries), so there is no option for them.
type Options struct {
	// All exports the whole tree, one section per branch; by default only
	// the active branch (from the root to the current leaf, the log's
	// last entry) is exported.
	All bool
	// Title heads the document; empty means "panto session ID".
	Title string
	// Prompt keeps the system prompt's tool guidance (the NAME:guidance
	// sections extensions record for their tools) in Markdown, which
	// otherwise leaves its text out; HTML always holds it, folded.
	Prompt bool
	// Prices price each turn's tokens (the zero Table is the built-in
	// one).
	Prices prices.Table
}

// plan is what both formats render: which entries, in which sections, and
// the prompt state in effect after each.
type plan struct {
	log *sessionlog.Log
	opt Options
	// parent is each entry's parent position, -1 for a root.
	parent []int
	// branches are the sections, the active branch first.
	branches []branch
	// inBranch is the 1-based branch each entry is rendered in, 0 for
	// an entry that is not exported.
	inBranch []int
	// forks maps an entry's position to the branches (1-based) that
	// start right after it.
	forks map[int][]int
	// state is the 1-based prompt state in effect for each exported
	// entry (the prompt as of the messages up to and including it); 0
	// for an entry that is not exported.
	state []int
	// states are the distinct prompt states, state n at n-1, numbered in
	// the order they first appear in the document.
	states []promptState
	// changes are what each system entry did to the prompt.
	changes map[int][]change
	// diffs are what each system entry changed in the prompt as the
	// model reads it (promptlog.Diff of the prompt before and after).
	diffs map[int][]linediff.Hunk
	// toolNames maps a tool_use id to the tool's name, for its result.
	toolNames map[string]string
	// pos maps an entry id to its position in log.Entries.
	pos map[string]int
	// leaves counts the branches of the whole tree.
	leaves int
	// extData counts the exported extension_data entries.
	extData int
	// labels are the effective labels of the log (Tree.Labels): entry id
	// to label.
	labels map[string]string
	// leftBy maps an entry's position to the moves (positions) that left
	// it: the moves whose From it is.
	leftBy map[int][]int
	// turns are the exported turns that recorded usage, by the position
	// of their last entry (turnUses); used counts the replies with usage
	// exported, total sums them.
	turns map[int]turnUse
	used  int
	total prices.Sum
	// enter and exit number each entry in a depth-first walk of the tree
	// (an entry's subtree is the entries numbered from its enter to its
	// exit), to tell whether a move went back up its branch; nil when the
	// log has no move.
	enter, exit []int32
}

// branch is one section of the export: the entries from Fork (exclusive)
// to the leaf.
type branch struct {
	// entries are positions in log.Entries, root-to-leaf order.
	entries []int
	// fork is the position of the entry the branch continues from, -1
	// for the first branch (which starts at the root).
	fork int
}

// promptState is one distinct effective system prompt.
type promptState struct {
	blocks []conversation.SystemText
	// first is the position of the first exported entry it is in effect
	// for.
	first int
}

// errNoLog is returned for a nil log.
var errNoLog = errors.New("export: no session log")

// newPlan works out what to export of log.
func newPlan(log *sessionlog.Log, opt Options) (*plan, error) {
	if log == nil {
		return nil, errNoLog
	}
	n := len(log.Entries)
	p := &plan{
		log: log, opt: opt,
		parent:    make([]int, n),
		inBranch:  make([]int, n),
		state:     make([]int, n),
		forks:     map[int][]int{},
		leftBy:    map[int][]int{},
		changes:   map[int][]change{},
		diffs:     map[int][]linediff.Hunk{},
		toolNames: map[string]string{},
	}
	pos := make(map[string]int, n)
	p.pos = pos
	hasChild := make([]bool, n)
	for i := range log.Entries {
		e := &log.Entries[i]
		p.parent[i] = -1
		if e.ParentID != "" {
			j, ok := pos[e.ParentID]
			if !ok {
				return nil, fmt.Errorf("export session log %s: entry %s: parent_id %q names no earlier entry", log.Path, e.ID, e.ParentID)
			}
			p.parent[i] = j
			hasChild[j] = true
		}
		if _, dup := pos[e.ID]; !dup {
			pos[e.ID] = i
		}
	}
	p.labels = log.Tree().Labels()
	moves := false
	for i := range log.Entries {
		if e := &log.Entries[i]; e.Type == sessionlog.TypeMove && e.Move != nil {
			moves = true
			if j, ok := pos[e.Move.From]; ok {
				p.leftBy[j] = append(p.leftBy[j], i)
			}
		}
	}
	if moves {
		p.number()
	}
	if n == 0 {
		return p, nil
	}
	leaves := []int{n - 1} // the active branch first
	for i := range n - 1 {
		if !hasChild[i] {
			leaves = append(leaves, i)
		}
	}
	p.leaves = len(leaves)
	if !opt.All {
		leaves = leaves[:1]
	}
	for _, leaf := range leaves {
		var path []int
		for i := leaf; i >= 0 && p.inBranch[i] == 0; i = p.parent[i] {
			path = append(path, i)
		}
		slices.Reverse(path)
		b := branch{entries: path, fork: p.parent[path[0]]}
		p.branches = append(p.branches, b)
		for _, i := range path {
			p.inBranch[i] = len(p.branches)
		}
		if b.fork >= 0 {
			p.forks[b.fork] = append(p.forks[b.fork], len(p.branches))
		}
	}
	p.derive()
	p.turnUses()
	return p, nil
}

// derive fills in the prompt state of every exported entry and the changes
// of every system entry, in document order (each entry's parent comes
// before it).
//
// The prompt after a system entry is conversation.EffectiveSystem of the
// messages up to it. The rule depends only on the running list of blocks,
// so that is EffectiveSystem of the prompt before the entry, each block as
// the append that rebuilds it, followed by the entry: the same result in
// time linear in the prompt, not in the prefix (the tests check every
// linked state against EffectiveSystem of the prefix itself).
func (p *plan) derive() {
	seen := map[[sha256.Size]byte]int{}
	intern := func(blocks []conversation.SystemText, at int) int {
		h := stateHash(blocks)
		if n, ok := seen[h]; ok {
			return n
		}
		p.states = append(p.states, promptState{blocks: blocks, first: at})
		seen[h] = len(p.states)
		return len(p.states)
	}
	for _, b := range p.branches {
		for _, i := range b.entries {
			e := &p.log.Entries[i]
			var before []conversation.SystemText
			prev := 0
			if par := p.parent[i]; par >= 0 {
				prev = p.state[par]
				before = p.states[prev-1].blocks
			}
			m := e.Message
			if m == nil || m.Role != conversation.RoleSystem {
				if prev == 0 {
					prev = intern(nil, i)
				}
				p.state[i] = prev
				if m != nil {
					p.noteTools(m)
				}
				if e.Type == sessionlog.TypeExtensionData {
					p.extData++
				}
				continue
			}
			p.changes[i] = changesOf(before, m)
			p.state[i] = intern(apply(before, m), i)
			p.diffs[i] = promptlog.Diff(before, p.states[p.state[i]-1].blocks)
		}
	}
}

// noteTools remembers the names of m's tool calls, for their results.
func (p *plan) noteTools(m *conversation.Message) {
	for _, b := range m.Content {
		if b.Type == conversation.TypeToolUse {
			p.toolNames[b.ID] = b.Name
		}
	}
}

// apply returns the prompt after the system message m, given the prompt
// before it.
func apply(before []conversation.SystemText, m *conversation.Message) []conversation.SystemText {
	msgs := make([]conversation.Message, 0, len(before)+1)
	for _, b := range before {
		msgs = append(msgs, conversation.Message{Role: conversation.RoleSystem, Content: []conversation.Block{{
			Type: conversation.TypeSystem, Text: b.Text, Mode: conversation.ModeAppend, Key: b.Key, Source: b.Source,
		}}})
	}
	msgs = append(msgs, *m)
	out := conversation.EffectiveSystem(msgs)
	for k := range out {
		out[k].Index = 0 // positions in msgs mean nothing outside this call
	}
	return out
}

// stateHash identifies a prompt by its blocks' texts, keys and sources.
func stateHash(blocks []conversation.SystemText) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	put := func(s string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	for _, b := range blocks {
		put(b.Text)
		put(b.Key)
		put(b.Source)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// label returns the effective label of the entry at position i, or "".
func (p *plan) label(i int) string {
	return p.labels[p.log.Entries[i].ID]
}

// hasMessage reports whether the branch b holds a message of its own.
func (p *plan) hasMessage(b branch) bool {
	for _, i := range b.entries {
		if p.log.Entries[i].Message != nil {
			return true
		}
	}
	return false
}

// toolName returns the name of the tool call id answers, or "".
func (p *plan) toolName(id string) string { return p.toolNames[id] }

// entryNumber is how the export names the entry at position i: its
// 1-based position in the log.
func entryNumber(i int) int { return i + 1 }

// find returns the position of the entry id if it is exported, or -1.
func (p *plan) find(id string) int {
	if i, ok := p.pos[id]; ok && p.inBranch[i] != 0 {
		return i
	}
	return -1
}

// at returns the position of the entry id in the log, exported or not,
// or -1 when the log has none.
func (p *plan) at(id string) int {
	if i, ok := p.pos[id]; ok {
		return i
	}
	return -1
}
