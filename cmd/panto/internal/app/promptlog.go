package app

import (
	"fmt"

	"github.com/panto-dev/panto/cmd/panto/internal/promptlog"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/linediff"
	"github.com/panto-dev/panto/sessionlog"
)

// LoggedChange is one change of panto prompt log: a change of the
// system prompt, and whether it is on the current path.
type LoggedChange struct {
	promptlog.Change
	OnPath bool
}

// PromptLog returns the changes of the system prompt recorded in the log
// at path (panto prompt log): those of the current path, root first, or
// with all those of every branch, each once, in the tree's order (depth
// first, an entry's children in file order, so a branch's changes follow
// the point it forks from). It reads the log alone: the paths' entries,
// nothing else; no extension starts.
func PromptLog(path string, all bool) ([]LoggedChange, error) {
	tree, err := sessionlog.Scan(path)
	if err != nil {
		return nil, err
	}
	leaf := tree.Leaf()
	if leaf == "" {
		return nil, nil
	}
	current, err := pathChanges(tree, leaf)
	if err != nil {
		return nil, err
	}
	var out []LoggedChange
	if !all {
		for _, c := range current {
			out = append(out, LoggedChange{c, true})
		}
		return out, nil
	}
	byID := map[string]LoggedChange{}
	for _, c := range current {
		byID[c.Entry] = LoggedChange{c, true}
	}
	for _, end := range tree.Branches() {
		cs, err := pathChanges(tree, end)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if _, ok := byID[c.Entry]; !ok {
				byID[c.Entry] = LoggedChange{c, false}
			}
		}
	}
	// The tree's order: depth first from the root.
	chain, err := tree.Chain(leaf)
	if err != nil {
		return nil, err
	}
	stack := []string{chain[0]}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c, ok := byID[id]; ok {
			out = append(out, c)
		}
		kids, err := tree.Children(id)
		if err != nil {
			return nil, err
		}
		for k := len(kids) - 1; k >= 0; k-- {
			stack = append(stack, kids[k])
		}
	}
	return out, nil
}

// pathChanges are the changes of the prompt on the chain to id. It
// decodes the system messages, model changes, compactions and branch
// summaries of the chain, and its other messages only when a request
// went to Anthropic (for the estimate of the cache): the other messages
// are counted, never read.
func pathChanges(tree *sessionlog.Tree, id string) ([]promptlog.Change, error) {
	chain, err := tree.Chain(id)
	if err != nil {
		return nil, err
	}
	entries := make([]sessionlog.Entry, len(chain))
	var want []string
	var at []int
	for k, c := range chain {
		n, err := tree.Node(c)
		if err != nil {
			return nil, err
		}
		entries[k] = sessionlog.Entry{Type: n.Type, ID: c, ParentID: n.ParentID}
		switch n.Type {
		case sessionlog.TypeModelChange, sessionlog.TypeCompaction, sessionlog.TypeBranchSummary:
		case sessionlog.TypeMessage:
			if n.Role != conversation.RoleSystem && n.Role != "" {
				continue
			}
		default:
			continue
		}
		want, at = append(want, c), append(at, k)
	}
	decoded, err := tree.Entries(want...)
	if err != nil {
		return nil, err
	}
	cached := false
	for k, e := range decoded {
		entries[at[k]] = e
		cached = cached || e.ModelChange != nil && e.ModelChange.Provider == promptlog.Anthropic
	}
	if cached {
		if entries, err = tree.Entries(chain...); err != nil {
			return nil, err
		}
	}
	return promptlog.Path(entries), nil
}

// PromptPoint is one end of panto prompt diff: the prompt as of a point.
type PromptPoint struct {
	// Ref is the point as given: a message count (Count set) or an
	// entry id; "" for the current leaf.
	Ref   string
	Count bool
	// Entry is the entry it names ("" for count 0: before the first
	// message); Message its message number on its path.
	Entry   string
	Message int
	Blocks  []conversation.SystemText
}

// PromptDiff is the diff of the prompt recorded in the log at path as of
// two points (panto prompt diff), each a message count of the current
// branch or an entry id (or a unique prefix) on any branch, as panto
// prompt --at takes them; b "" is the current leaf.
func PromptDiff(path, a, b string) (from, to PromptPoint, hunks []linediff.Hunk, err error) {
	tree, err := sessionlog.Scan(path)
	if err != nil {
		return from, to, nil, err
	}
	if from, err = promptPoint(tree, a); err != nil {
		return from, to, nil, fmt.Errorf("point A %w", err)
	}
	if to, err = promptPoint(tree, b); err != nil {
		return from, to, nil, fmt.Errorf("point B %w", err)
	}
	return from, to, promptlog.Diff(from.Blocks, to.Blocks), nil
}

// promptPoint is the prompt as of ref, a count or an entry.
func promptPoint(tree *sessionlog.Tree, ref string) (PromptPoint, error) {
	p := PromptPoint{Ref: ref}
	if ref == "" {
		p.Entry = tree.Leaf()
	} else if n, ok := atCount(ref); ok {
		p.Count = true
		if n > 0 {
			id, err := tree.NthMessage(n)
			if err != nil {
				return p, fmt.Errorf("%d: %w", n, err)
			}
			p.Entry = id
		}
	} else {
		id, err := tree.Resolve(ref)
		if err != nil {
			return p, fmt.Errorf("%s: %w", ref, err)
		}
		p.Entry = id
	}
	if p.Entry == "" {
		return p, nil
	}
	sys, err := tree.SystemAt(p.Entry)
	if err != nil {
		return p, err
	}
	p.Message = sys.Count
	p.Blocks = conversation.EffectiveSystem(sys.Messages)
	return p, nil
}
