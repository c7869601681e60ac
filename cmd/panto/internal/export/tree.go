package export

import (
	"strings"

	"github.com/panto-dev/panto/conversation"
)

// This file walks the session tree: moves, labels and references to
// entries.

// number fills in enter and exit with an iterative depth-first walk of
// the tree (a log may be deeper than any stack), in time linear in the
// entries.
func (p *plan) number() {
	n := len(p.parent)
	first := make([]int32, n) // each entry's first child not walked yet, -1 for none
	next := make([]int32, n)  // each entry's next sibling, -1 for none
	for i := range first {
		first[i] = -1
	}
	for i := n - 1; i >= 0; i-- {
		next[i] = -1
		if par := p.parent[i]; par >= 0 {
			next[i] = first[par]
			first[par] = int32(i)
		}
	}
	p.enter, p.exit = make([]int32, n), make([]int32, n)
	var stack []int32
	var count int32
	for r := range n {
		if p.parent[r] >= 0 {
			continue
		}
		p.enter[r] = count
		count++
		stack = append(stack[:0], int32(r))
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			if c := first[v]; c >= 0 {
				first[v] = next[c]
				p.enter[c] = count
				count++
				stack = append(stack, c)
				continue
			}
			p.exit[v] = count - 1
			stack = stack[:len(stack)-1]
		}
	}
}

// movedBack reports whether the move at position i went back up the
// branch it left: its target (its parent) is on the chain of its From.
func (p *plan) movedBack(i int) bool {
	t, f := p.parent[i], p.at(p.log.Entries[i].Move.From)
	if t < 0 || f < 0 || p.enter == nil {
		return false
	}
	return p.enter[t] <= p.enter[f] && p.enter[f] <= p.exit[t]
}

// moveVerb is what the move at position i did, before its target.
func (p *plan) moveVerb(i int) string {
	if p.movedBack(i) {
		return "moved back to "
	}
	return "moved to "
}

// labelNote is what follows a label entry's line: whether a later label
// entry changed it. target is the entry it labels, text its text.
func (p *plan) labelNote(target, text string) string {
	if p.labels[target] == text {
		return ""
	}
	return " (replaced by a later label entry)"
}

// elsewhere is what follows a reference to the entry at position i that
// is not exported (i < 0: no such entry in the log), for a reader who
// cannot follow it.
func elsewhere(i int) string {
	if i < 0 {
		return " (not in this log)"
	}
	return " (on a branch not exported)"
}

// describe is a short reference to the entry at position i for a fork
// note: its kind, time and the start of its text.
func (p *plan) describe(i int) string {
	e := &p.log.Entries[i]
	var sb strings.Builder
	if e.Message != nil {
		sb.WriteString(string(e.Message.Role))
	} else {
		sb.WriteString(string(e.Type))
	}
	if !e.Time.IsZero() {
		sb.WriteString(" · " + e.Time.UTC().Format("2006-01-02 15:04"))
	}
	if m := e.Message; m != nil {
		text := m.Text()
		if m.Role == conversation.RoleUser {
			text = m.Typed() // not the USER_PROMPT.md before it
		}
		if t := excerpt(text, 60); t != "" {
			sb.WriteString(": “" + t + "”")
		}
	}
	return sb.String()
}
