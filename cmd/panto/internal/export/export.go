package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/cmd/panto/internal/promptlog"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/linediff"
	"github.com/panto-dev/panto/sessionlog"
)

// Options say what to export. The labels shown are the log's own (its
// label entries), so there is no option for them.
type Options struct {
	// All exports the whole tree, one section per branch; by default only
	// the active branch (from the root to the current leaf, the log's
	// last entry) is exported.
	All bool
	// Title heads the document; empty means "panto session ID".
	Title string
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

// changeKind says what one block of a system entry did.
type changeKind int

const (
	appended      changeKind = iota // an unkeyed append
	replaced                        // an unkeyed replace
	replacedKeyed                   // a keyed replace: the prompt is now that section
	setSection                      // a keyed append with a new key
	updated                         // a keyed append that set a section in place
	removed                         // a keyed append with an empty text that removed a section
	removedNone                     // the same for a key that was not in the prompt: no change
)

// change is one block of a system entry, as an event.
type change struct {
	kind   changeKind
	key    string
	source string
	text   string
}

// verb is what the change did, after its source: "set section", ….
func (c change) verb() string {
	switch c.kind {
	case replaced:
		return "replaced the system prompt"
	case replacedKeyed:
		return "replaced the system prompt with section"
	case setSection:
		return "set section"
	case updated:
		return "updated section"
	case removed:
		return "removed section"
	case removedNone:
		return "removed section"
	}
	if c.text == "" {
		return "appended an empty block"
	}
	return "appended a block"
}

// note is what follows the key, if anything.
func (c change) note() string {
	switch c.kind {
	case updated:
		return "in place"
	case removedNone:
		return "(it was not in the prompt: no change)"
	}
	return ""
}

// lines says how many lines of the prompt the system entry at i added
// and removed ("+1 −1 lines"), and whether it changed text that was
// there — removed lines, or a section updated in place — so that its
// diff says more than its text.
func (p *plan) lines(i int) (string, bool) {
	added, removed := promptlog.Counts(p.diffs[i])
	changed := removed > 0
	for _, ch := range p.changes[i] {
		changed = changed || ch.kind == updated && added > 0
	}
	return fmt.Sprintf("+%d −%d lines", added, removed), changed
}

// hasKey reports whether the change's line names its key.
func (c change) hasKey() bool { return c.kind >= replacedKeyed }

// sourceText is the change's source for an event line.
func (c change) sourceText() string {
	if c.source == "" {
		return "(source not recorded)"
	}
	return c.source
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

// changesOf describes what each block of the system message m does to the
// prompt before it.
func changesOf(before []conversation.SystemText, m *conversation.Message) []change {
	keys := make(map[string]bool, len(before))
	for _, b := range before {
		if b.Key != "" {
			keys[b.Key] = true
		}
	}
	var out []change
	for _, b := range m.Content {
		if b.Type != conversation.TypeSystem {
			continue
		}
		c := change{key: b.Key, source: b.Source, text: b.Text}
		switch {
		case b.Mode == conversation.ModeReplace:
			clear(keys)
			c.kind = replaced
			if b.Key != "" {
				c.kind = replacedKeyed
				if b.Text != "" {
					keys[b.Key] = true
				}
			}
		case b.Key == "":
			c.kind = appended
		case b.Text == "" && keys[b.Key]:
			c.kind = removed
			delete(keys, b.Key)
		case b.Text == "":
			c.kind = removedNone
		case keys[b.Key]:
			c.kind = updated
		default:
			c.kind = setSection
			keys[b.Key] = true
		}
		out = append(out, c)
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

// title is the document's title.
func (p *plan) title() string {
	if p.opt.Title != "" {
		return p.opt.Title
	}
	return "panto session " + p.log.Header.ID
}

// scope says what the export holds, for its header.
func (p *plan) scope() string {
	n := 0
	for _, b := range p.branches {
		n += len(b.entries)
	}
	switch {
	case len(p.log.Entries) == 0:
		return "an empty session: no entries"
	case p.opt.All && len(p.branches) == 1:
		return fmt.Sprintf("the whole tree: one branch, %s", plural(n, "entry", "entries"))
	case p.opt.All:
		return fmt.Sprintf("the whole tree: %d branches, %s", len(p.branches), plural(n, "entry", "entries"))
	case p.leaves > 1:
		return fmt.Sprintf("the active branch: %d of %d entries (%s not shown)", n, len(p.log.Entries), plural(p.leaves-1, "other branch", "other branches"))
	}
	return "the active branch: " + plural(n, "entry", "entries")
}

// label returns the effective label of the entry at position i, or "".
func (p *plan) label(i int) string {
	return p.labels[p.log.Entries[i].ID]
}

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

// clock formats entry times, with the date only when it differs from the
// last one shown.
type clock struct {
	day    string
	layout string // of the time of day
}

func newClock(created time.Time, layout string) *clock {
	return &clock{day: created.UTC().Format(time.DateOnly), layout: layout}
}

// format returns t as the time of day, with the date before it when the
// day changed; "" for a zero time.
func (c *clock) format(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	day := t.Format(time.DateOnly)
	if day != c.day {
		c.day = day
		return day + " " + t.Format(c.layout)
	}
	return t.Format(c.layout)
}

// excerpt returns s on one line, cut to about n characters.
func excerpt(s string, n int) string {
	if len(s) > 8*n { // enough for n characters and the spaces between them, mostly
		s = strings.ToValidUTF8(s[:8*n], "")
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// orUnrecorded returns s, or "(not recorded)" when it is empty.
func orUnrecorded(s string) string {
	if s == "" {
		return "(not recorded)"
	}
	return s
}

// plural returns "1 entry" or "3 entries".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// lifecycleText is a lifecycle entry as an event line.
func lifecycleText(l *sessionlog.Lifecycle) string {
	var s string
	switch l.Event {
	case sessionlog.LifecycleStarted:
		s = "session started"
	case sessionlog.LifecycleResumed:
		s = "session resumed"
		if l.Reseeded {
			s += ", system prompt re-seeded"
		}
	default:
		s = "lifecycle " + string(l.Event)
	}
	if len(l.Extensions) == 0 {
		return s + " · no extensions"
	}
	return s + " · extensions: " + strings.Join(l.Extensions, ", ")
}

// modelText is a model_change entry as an event line.
func modelText(m *sessionlog.ModelChange) string {
	return "model: " + m.Provider + " " + m.Model
}

// requestText says what a request_settings entry records: what every
// request from here on is sent with (panto request --at rebuilds one).
func requestText(r *sessionlog.RequestSettings) string {
	parts := []string{r.Model + " (" + r.Wire + ")"}
	if r.MaxTokens > 0 {
		parts = append(parts, "max_tokens "+strconv.Itoa(r.MaxTokens))
	}
	if r.ThinkingBudget > 0 {
		parts = append(parts, "thinking "+strconv.Itoa(r.ThinkingBudget))
	}
	if r.Temperature != nil {
		parts = append(parts, "temperature "+strconv.FormatFloat(*r.Temperature, 'g', -1, 64))
	}
	if r.Stream {
		parts = append(parts, "streamed")
	}
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	tools := "no tools"
	switch len(names) {
	case 0:
	case 1:
		tools = "1 tool: " + names[0]
	default:
		tools = strconv.Itoa(len(names)) + " tools: " + strings.Join(names, ", ")
	}
	return "requests from here: " + strings.Join(append(parts, tools), ", ")
}

// permissionsText says what a permissions entry records.
func permissionsText(p *sessionlog.Permissions) string {
	s := "permissions: mode " + p.Mode + ", " + strconv.Itoa(len(p.Rules)) + " rules, " + strconv.Itoa(len(p.Grants)) + " grants"
	if p.Sandbox != nil {
		s += ", sandbox " + p.Sandbox.Mode
	}
	if p.Reason != "" {
		s += " (" + p.Reason + ")"
	}
	return s
}

// sizeText is a byte count for people: "812 B", "12 KB", "3.4 MB".
func sizeText(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " B"
	case n < 1000*1000:
		return strconv.Itoa((n+500)/1000) + " KB"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
}

// imageBytes is the size of an image's base64 data once decoded, roughly.
func imageBytes(data string) int { return len(data) * 3 / 4 }

// indentJSON returns raw indented for reading, or as it is when it is not
// valid JSON.
func indentJSON(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// groupDigits writes n with thousands separators: 161,234.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
