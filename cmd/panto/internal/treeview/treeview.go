// Package treeview turns a session log's tree into the rows people read:
// what /tree and panto session tree print, what --json gives scripts, and
// what the full-screen UI's navigator lists. A row is a message (or a
// compaction, a branch summary, a run of system-prompt changes) with a
// short id to jump to, its first words, its label, and what it did to the
// prompt; entries people do not navigate by (lifecycle, model changes,
// moves, labels, extension data, tool results) fold into the row above.
package treeview

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// The kinds of row.
const (
	KindUser          = "user"
	KindAssistant     = "assistant"
	KindSystem        = "system"
	KindCompaction    = "compaction"
	KindBranchSummary = "branch_summary"
)

// Row is one line of the tree view.
type Row struct {
	// ID is the entry the row stands for: the one to move to. A row of
	// several system changes stands for the last of them.
	ID string `json:"id"`
	// Parent is the row above in the tree ("" for the first).
	Parent string `json:"parent,omitempty"`
	Kind   string `json:"kind"`
	// Text is the row's first words: a message's first line, a reply's
	// tool calls, a summary's start.
	Text string `json:"text"`
	// Label is the entry's label, if any.
	Label string `json:"label,omitempty"`
	// Prompt says what the row did to the system prompt (system rows):
	// who changed it, and how. Empty for the others.
	Prompt string `json:"prompt_change,omitempty"`
	// OnPath is set for the rows of the current path (root to leaf);
	// Here for the row of the leaf itself.
	OnPath bool `json:"on_path"`
	Here   bool `json:"here,omitempty"`
	// Children counts the rows below this one in the tree: more than one
	// is a branch point.
	Children int `json:"children"`
	// Depth is how many branch points lead to the row; Indent is the
	// tree's drawing before it ("│  ├─ ").
	Depth  int    `json:"depth"`
	Indent string `json:"-"`
}

// Short is an entry id as the views show it: 8 characters, enough to
// name one entry (panto resolves any unique prefix).
func Short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// node is a row while the tree is built.
type node struct {
	row  Row
	kids []*node
}

// Build returns the rows of tree in display order: depth first, children
// in file order. It decodes the messages, compactions and branch
// summaries it shows (reading their lines), nothing else.
func Build(tree *sessionlog.Tree) ([]Row, error) {
	leaf := tree.Leaf()
	if leaf == "" {
		return nil, nil
	}
	chain, err := tree.Chain(leaf)
	if err != nil {
		return nil, err
	}
	onPath := make(map[string]bool, len(chain))
	for _, id := range chain {
		onPath[id] = true
	}
	// Walk the tree from the root, noting which entries to decode.
	var order []string
	var want []string
	stack := []string{chain[0]}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, id)
		n, err := tree.Node(id)
		if err != nil {
			return nil, err
		}
		if shown(n) {
			want = append(want, id)
		}
		kids, err := tree.Children(id)
		if err != nil {
			return nil, err
		}
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
	entries, err := tree.Entries(want...)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*sessionlog.Entry, len(entries))
	for i := range entries {
		byID[entries[i].ID] = &entries[i]
	}
	labels := tree.Labels()

	// Each entry's row: its own, or the nearest shown ancestor's.
	rowOf := make(map[string]*node, len(order))
	var root *node
	for _, id := range order {
		n, _ := tree.Node(id)
		parent := rowOf[n.ParentID]
		e := byID[id]
		r, ok := rowFor(e)
		if !ok {
			if parent == nil { // a hidden first entry: an empty system row holds the tree
				parent = &node{row: Row{ID: id, Kind: KindSystem}}
				root = parent
			}
			rowOf[id] = parent
			continue
		}
		// A run of system changes with nothing between them is one row.
		if r.Kind == KindSystem && parent != nil && parent.row.Kind == KindSystem && len(parent.kids) == 0 {
			parent.row.ID = id
			parent.row.Prompt = joinNonEmpty(parent.row.Prompt, r.Prompt)
			parent.row.Text = parent.row.Prompt
			rowOf[id] = parent
			continue
		}
		nd := &node{row: r}
		if parent == nil {
			root = nd
		} else {
			nd.row.Parent = parent.row.ID
			parent.kids = append(parent.kids, nd)
		}
		rowOf[id] = nd
	}
	if root == nil {
		return nil, nil
	}
	here := rowOf[leaf]
	// Labels and the path, by the entries each row stands for.
	for _, id := range order {
		nd := rowOf[id]
		if onPath[id] {
			nd.row.OnPath = true
		}
		// A label of a folded entry shows on the row it folds into.
		if l, ok := labels[id]; ok && (nd.row.ID == id || nd.row.Label == "") {
			nd.row.Label = l
		}
	}
	var rows []Row
	var walk func(nd *node, depth int, indent, glyph string)
	walk = func(nd *node, depth int, indent, glyph string) {
		nd.row.Depth, nd.row.Indent = depth, indent+glyph
		nd.row.Children = len(nd.kids)
		nd.row.Here = nd == here
		for _, k := range nd.kids {
			k.row.Parent = nd.row.ID
		}
		rows = append(rows, nd.row)
		switch len(nd.kids) {
		case 0:
		case 1:
			// A chain goes on at the same indent.
			walk(nd.kids[0], depth, indent+continued(glyph), "")
		default:
			next := indent + continued(glyph)
			for i, k := range nd.kids {
				g := "├─ "
				if i == len(nd.kids)-1 {
					g = "└─ "
				}
				walk(k, depth+1, next, g)
			}
		}
	}
	walk(root, 0, "", "")
	return rows, nil
}

// continued is what goes under a branch glyph on the lines below it.
func continued(glyph string) string {
	switch glyph {
	case "├─ ":
		return "│  "
	case "└─ ":
		return "   "
	}
	return ""
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// shown reports whether an entry may get a row of its own (decided for
// good once it is decoded: a message's role may need its line).
func shown(n sessionlog.Node) bool {
	switch n.Type {
	case sessionlog.TypeMessage:
		return n.Role != conversation.RoleTool
	case sessionlog.TypeCompaction, sessionlog.TypeBranchSummary:
		return true
	}
	return false
}

// rowFor is e's row, or false for an entry without one.
func rowFor(e *sessionlog.Entry) (Row, bool) {
	if e == nil {
		return Row{}, false
	}
	r := Row{ID: e.ID}
	switch {
	case e.Message != nil:
		m := e.Message
		switch m.Role {
		case conversation.RoleUser:
			r.Kind, r.Text = KindUser, firstLine(m.Text())
		case conversation.RoleAssistant:
			r.Kind, r.Text = KindAssistant, firstLine(m.Text())
			if uses := m.ToolUses(); len(uses) > 0 {
				names := make([]string, 0, len(uses))
				for _, u := range uses {
					names = append(names, u.Name)
				}
				r.Text = strings.TrimSpace(r.Text + " → " + strings.Join(names, ", "))
			}
		case conversation.RoleSystem:
			r.Kind, r.Prompt = KindSystem, describe.Message(*m)
			r.Text = r.Prompt
		default:
			return Row{}, false
		}
	case e.Compaction != nil:
		r.Kind, r.Text = KindCompaction, "compacted: "+firstLine(e.Compaction.Summary)
	case e.BranchSummary != nil:
		r.Kind, r.Text = KindBranchSummary, "summary of the branch left: "+firstLine(e.BranchSummary.Summary)
	default:
		return Row{}, false
	}
	return r, true
}

// firstLine is the first non-blank line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// Write prints rows as the line views show them, each cut to width
// columns (0: no cut):
//
//   - 9a0b1c2d  user       fix the lexer
//     ├─ 1a2b3c4d  user       second question  [first attempt]
//     └─ 9c0d1e2f  user       again, better                 ← here
//
// "*" marks the current path, "⚙" a change of the system prompt.
func Write(w io.Writer, rows []Row, width int) error {
	for _, r := range rows {
		mark := " "
		if r.OnPath {
			mark = "*"
		}
		text := r.Text
		kind := r.Kind
		switch r.Kind {
		case KindSystem:
			kind, text = "⚙ prompt", r.Prompt
		case KindBranchSummary:
			kind = "summary"
		}
		line := fmt.Sprintf("%s %s%s  %-10s %s", mark, r.Indent, Short(r.ID), kind, text)
		var tail string
		if r.Label != "" {
			tail += "  [" + r.Label + "]"
		}
		if r.Here {
			tail += "  ← here"
		}
		if width > 0 {
			line = cut(line, width-utf8.RuneCountInString(tail))
		}
		if _, err := io.WriteString(w, line+tail+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// cut shortens s to n runes, ending it with "…" when cut.
func cut(s string, n int) string {
	if n < 20 {
		n = 20
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
