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
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
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
	// To is the entry a move to the row goes to, when it is not ID: the
	// results of a reply's tool calls, which fold into the reply's row
	// (continuing from the reply itself would leave its calls without
	// results).
	To string `json:"to,omitempty"`
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
	// tree's drawing before it ("│  ├─ "), of at most MaxGuides levels:
	// a deeper row's shows its depth as a number ("… 812 › ├─ ").
	Depth  int    `json:"depth"`
	Indent string `json:"-"`
}

// Short is an entry id as the views show it: 8 characters, enough to
// name one entry (panto resolves any unique prefix).
// Args are /tree's arguments: /tree [--full], or /tree
// [--summary|--no-summary] ID.
type Args struct {
	Full bool
	// Summarize is whether a move writes a branch summary: the default
	// given to ParseArgs, unless a flag says otherwise.
	Summarize bool
	// Ref names the entry to move to; "" shows the tree.
	Ref string
}

// ParseArgs reads /tree's arguments, in every front end the same.
func ParseArgs(args string, summarize bool) (Args, error) {
	a := Args{Summarize: summarize}
	for _, w := range strings.Fields(args) {
		switch w {
		case "--full":
			a.Full = true
		case "--summary", "-s":
			a.Summarize = true
		case "--no-summary":
			a.Summarize = false
		default:
			if a.Ref != "" || strings.HasPrefix(w, "-") {
				return Args{}, fmt.Errorf("/tree: unexpected %q (want /tree [--full] or /tree [--summary|--no-summary] ID)", w)
			}
			a.Ref = w
		}
	}
	return a, nil
}

// ContinueAt is the entry a move to id goes to: id itself, or, for a
// reply whose tool calls the message after it answers, that message —
// the results fold into the reply's row, and continuing from the reply
// itself would leave its calls without results.
func ContinueAt(tree *sessionlog.Tree, id string) string {
	n, err := tree.Node(id)
	if err != nil || n.Type != sessionlog.TypeMessage || n.Role != conversation.RoleAssistant && n.Role != "" {
		return id
	}
	kids, err := tree.Children(id)
	if err != nil {
		return id
	}
	for _, k := range kids {
		if kn, err := tree.Node(k); err == nil && kn.Type == sessionlog.TypeMessage && kn.Role == conversation.RoleTool {
			return k
		}
	}
	return id
}

// Jump is the one rule of where a jump to the entry id (a full id, as
// Tree.Resolve gives it) goes, and what it hands back, for every front
// end: past a reply's tool results (ContinueAt); on a message of the
// user's, to before it — it is asked again — handing back what the user
// typed in it (conversation.Message.Typed: without what panto added, a
// USER_PROMPT.md) to send as it was or changed. retype is "" on any
// other entry.
func Jump(tree *sessionlog.Tree, id string) (to, retype string) {
	to = ContinueAt(tree, id)
	es, err := tree.Entries(to)
	if err == nil && es[0].Message != nil && es[0].Message.Role == conversation.RoleUser && es[0].ParentID != "" {
		return es[0].ParentID, es[0].Message.Typed()
	}
	return to, ""
}

func Short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// KindElided is a row standing for rows left out of a long view.
const KindElided = "elided"

// Options say how much of the tree Build shows.
type Options struct {
	// Full shows every row, however many. Otherwise a tree of more than
	// Budget rows (DefaultBudget when 0) shows the rows that matter —
	// the start, branch points and the first row of each branch, branch
	// ends, labels, prompt changes, summaries, and the rows just before
	// the leaf — and folds each run of the others into one elided row.
	Full   bool
	Budget int
	// Short shortens a prompt block's source in the rows (the UI's
	// ".panto/APPEND_SYSTEM.md"); nil shows it whole.
	Short func(source string) string
}

// DefaultBudget is how many rows a view shows before it folds.
const DefaultBudget = 2000

// headRows is how many rows of the start a folded view keeps.
const headRows = 5

// beforeHere is how many rows before the leaf's a folded view keeps, at
// most (a quarter of the budget).
const beforeHere = 200

// node is a row while the tree is built.
type node struct {
	row  Row
	kids []*node
	// ids are the entries the row stands for: more than one for a run
	// of system changes, whose last is row.ID.
	ids []string
	// keep marks a row a folded view shows.
	keep bool
}

// Build returns the rows of tree in display order: depth first, children
// in file order. It reads the tree's shape first, and then decodes only
// the entries of the rows it shows (their lines), so a view of a huge log
// costs what it shows.
func Build(tree *sessionlog.Tree, opt Options) ([]Row, error) {
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
	labels := tree.Labels()

	// The shape: each entry's row, its own or the nearest shown
	// ancestor's, depth first from the root.
	rowOf := make(map[string]*node, tree.Len())
	var root *node
	stack := []string{chain[0]}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n, err := tree.Node(id)
		if err != nil {
			return nil, err
		}
		parent := rowOf[n.ParentID]
		switch kind := kindOf(n); {
		case kind == "":
			if parent == nil { // a hidden first entry: an empty system row holds the tree
				parent = &node{row: Row{ID: id, Kind: KindSystem}}
				root = parent
			}
			if n.Type == sessionlog.TypeMessage && n.Role == conversation.RoleTool && parent.row.Kind == KindAssistant && len(parent.kids) == 0 {
				parent.row.To = id
			}
			rowOf[id] = parent
		case kind == KindSystem && parent != nil && parent.row.Kind == KindSystem && len(parent.kids) == 0:
			// A run of system changes with nothing between them is one row.
			parent.row.ID = id
			parent.ids = append(parent.ids, id)
			rowOf[id] = parent
		default:
			nd := &node{row: Row{ID: id, Kind: kind}, ids: []string{id}}
			if parent == nil {
				root = nd
			} else {
				parent.kids = append(parent.kids, nd)
			}
			rowOf[id] = nd
		}
		if onPath[id] {
			rowOf[id].row.OnPath = true
		}
		// A label of a folded entry shows on the row it folds into.
		if l, ok := labels[id]; ok {
			if nd := rowOf[id]; nd.row.ID == id || nd.row.Label == "" {
				nd.row.Label = l
			}
		}
		kids, err := tree.Children(id)
		if err != nil {
			return nil, err
		}
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
	if root == nil {
		return nil, nil
	}
	here := rowOf[leaf]

	// Display order, with the drawing: depth first, without recursion (a
	// chain of a million rows, or branch points nested a thousand deep,
	// must not cost a stack that deep).
	var nodes []*node
	type visit struct {
		nd    *node
		depth int
		glyph string // "├─ " or "└─ " on a branch's first row, else ""
	}
	// cols[i] is what goes under the glyph of the branch at depth i+1
	// on the current path ("│  " or "   "): the guides of the rows below.
	var cols []string
	todo := []visit{{nd: root}}
	for len(todo) > 0 {
		v := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		nd, depth := v.nd, v.depth
		last := ""
		if depth > 0 {
			if v.glyph != "" {
				cols = append(cols[:depth-1], continued(v.glyph))
				last = v.glyph
			} else {
				cols = cols[:depth]
				last = cols[depth-1]
			}
		}
		first := v.glyph != "" || nd == root
		nd.row.Depth, nd.row.Indent = depth, drawIndent(cols[:max(depth-1, 0)], last, depth)
		nd.row.Children = len(nd.kids)
		nd.row.Here = nd == here
		nd.keep = first || len(nd.kids) != 1 || nd.row.Here || nd.row.Label != "" || nd.row.Kind != KindUser && nd.row.Kind != KindAssistant
		for _, k := range nd.kids {
			k.row.Parent = nd.row.ID
		}
		nodes = append(nodes, nd)
		switch len(nd.kids) {
		case 0:
		case 1:
			// A chain goes on at the same indent.
			todo = append(todo, visit{nd: nd.kids[0], depth: depth})
		default:
			for i := len(nd.kids) - 1; i >= 0; i-- {
				g := "├─ "
				if i == len(nd.kids)-1 {
					g = "└─ "
				}
				todo = append(todo, visit{nd: nd.kids[i], depth: depth + 1, glyph: g})
			}
		}
	}

	budget := opt.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	full := opt.Full || len(nodes) <= budget
	if !full {
		// The start of the conversation.
		for _, nd := range nodes[:min(headRows, len(nodes))] {
			nd.keep = true
		}
		// The rows just before the leaf's, on the path.
		n, most := 0, min(beforeHere, budget/4)
		for i := len(nodes) - 1; i >= 0 && n < most; i-- {
			if nodes[i].row.OnPath && (n > 0 || nodes[i] == here) {
				nodes[i].keep = true
				n++
			}
		}
	}
	var shown []*node
	var rows []Row
	elided := 0
	flush := func(at *node) {
		if elided > 0 {
			rows = append(rows, Row{ID: at.row.ID, Parent: at.row.Parent, Kind: KindElided,
				Text: fmt.Sprintf("… %d more …", elided), OnPath: at.row.OnPath, Depth: at.row.Depth, Indent: at.row.Indent})
			elided = 0
		}
	}
	var firstElided *node
	for _, nd := range nodes {
		if full || nd.keep {
			if firstElided != nil {
				flush(firstElided)
				firstElided = nil
			}
			shown = append(shown, nd)
			rows = append(rows, Row{}) // filled below
			continue
		}
		if elided == 0 {
			firstElided = nd
		}
		elided++
	}
	if firstElided != nil {
		flush(firstElided)
	}

	// Decode what is shown.
	var want []string
	for _, nd := range shown {
		want = append(want, nd.ids...)
	}
	entries, err := tree.Entries(want...)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*sessionlog.Entry, len(entries))
	for i := range entries {
		byID[entries[i].ID] = &entries[i]
	}
	k := 0
	for i := range rows {
		if rows[i].Kind == KindElided {
			continue
		}
		nd := shown[k]
		k++
		r := nd.row
		for j := 0; j < len(nd.ids); j++ {
			if n := reseedRun(nd.ids[j:], byID); n > 0 {
				// A re-seed and the configured blocks it recorded after
				// it: one phrase of what changed.
				r.Kind = KindSystem
				r.Prompt = joinNonEmpty(r.Prompt, reseedSays(tree, nd.ids[j:j+n], byID, opt.Short))
				r.Text = r.Prompt
				j += n - 1
				continue
			}
			fill(&r, byID[nd.ids[j]])
		}
		rows[i] = r
	}
	return rows, nil
}

// kindOf is the kind of row an entry gets, or "" for one that folds into
// the row above (from the tree's shape: no line is read).
func kindOf(n sessionlog.Node) string {
	switch n.Type {
	case sessionlog.TypeMessage:
		switch n.Role {
		case conversation.RoleUser:
			return KindUser
		case conversation.RoleAssistant, "":
			return KindAssistant
		case conversation.RoleSystem:
			return KindSystem
		}
	case sessionlog.TypeCompaction:
		return KindCompaction
	case sessionlog.TypeBranchSummary:
		return KindBranchSummary
	}
	return ""
}

// MaxGuides is how many levels of the tree's guides a row's indent draws.
// A row deeper than that (more branch points lead to it) shows its depth
// as a number instead, and then only its own level's guide:
// "… 812 › ├─ ". An indent's length is thus bounded, whatever the tree's
// shape: a log of branch points nested thousands deep costs rows of the
// same size as any other's, not rows as long as the tree is deep (which
// made the view's cost grow with the square of the depth).
const MaxGuides = 16

// drawIndent is the drawing before a row at depth: the guides of the
// branches above it (outer, one per level but its own) and last, its own
// level's (a branch glyph, or the guide under one on a chain's rows).
func drawIndent(outer []string, last string, depth int) string {
	switch {
	case depth == 0:
		return ""
	case depth > MaxGuides:
		return "… " + strconv.Itoa(depth) + " › " + last
	case depth == 1:
		return last
	}
	return strings.Join(outer, "") + last
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

// fill sets r's text from e, an entry it stands for.
func fill(r *Row, e *sessionlog.Entry) {
	if e == nil {
		return
	}
	switch {
	case e.Message != nil:
		m := e.Message
		switch m.Role {
		case conversation.RoleUser:
			r.Kind, r.Text = KindUser, firstLine(m.Typed())
		case conversation.RoleSystem:
			r.Kind = KindSystem
			r.Prompt = joinNonEmpty(r.Prompt, describe.Message(*m))
			r.Text = r.Prompt
		default:
			r.Kind, r.Text = KindAssistant, firstLine(m.Text())
			if uses := m.ToolUses(); len(uses) > 0 {
				names := make([]string, 0, len(uses))
				for _, u := range uses {
					names = append(names, u.Name)
				}
				r.Text = strings.TrimSpace(r.Text + " → " + strings.Join(names, ", "))
			}
		}
	case e.Compaction != nil:
		r.Text = "compacted: " + firstLine(e.Compaction.Summary)
	case e.BranchSummary != nil:
		r.Text = "summary of the branch left: " + firstLine(e.BranchSummary.Summary)
	}
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
		case KindElided:
			kind = ""
		}
		// A row is one line whatever the log holds: a label with line
		// breaks in a hand-made log drew rows that do not exist (the sixth
		// adversary pass's S10).
		line := fmt.Sprintf("%s %s%s  %-10s %s", mark, r.Indent, Short(r.ID), kind, oneLine(text))
		var tail string
		if r.Label != "" {
			tail += "  [" + oneLine(r.Label) + "]"
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

// oneLine is s on one line, as panto session list shows a label: each
// run of white space, line breaks included, one space.
func oneLine(s string) string { return termtext.OneLine(s, math.MaxInt) }

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
