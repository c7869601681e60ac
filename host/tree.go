package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// The session tree. A session's log entries form a tree; the current
// leaf is the last entry of the file, and the conversation is the chain
// from the root to it (docs/session-format.md, "The tree"). MoveTo moves
// the leaf to any entry by appending a move entry, so the next message
// continues from there as a new branch, under the prompt as it was there:
// the host's conversation, prompt and compaction are re-derived from the
// new path. Nothing is rewritten.

// branchNote is a branch summary on the current path: requests send it as
// a user message before the message at index at of conv.Messages.
type branchNote struct {
	at   int
	text string
}

// branchSummaryPrefix starts the user message that carries a branch
// summary in requests.
const branchSummaryPrefix = "[The user went back to an earlier point of this conversation and continues from here. A summary of the branch they left, so you know what was tried there:]\n\n"

// branchSummaryPrompt is the system prompt of the request that writes a
// branch summary.
const branchSummaryPrompt = `You summarise a branch of a conversation between a user and a coding agent that the user is leaving: they go back to an earlier point and try again from there.
Say what was tried on the branch, what worked, what failed and why, and what was learnt (files, commands, decisions), so the agent does not repeat a dead end. Plain prose and short lists; no preamble.`

// setBranchLocked makes the session's state that of the branch l holds:
// the conversation, the entries of the reconciliation window, the latest
// compaction and the branch summaries. The caller holds s.mu.
func (s *Session) setBranchLocked(l *sessionlog.Loaded) {
	s.entries, s.positions = l.Entries, l.Positions
	s.skipped = l.Skipped
	b := branchOf(l.Entries)
	s.conv.Messages, s.msgIDs, s.notes = b.msgs, b.ids, b.notes
	s.summary, s.keptFrom = b.summary, b.keptFrom
	if b.lostCut != "" {
		s.warnings = append(s.warnings, fmt.Sprintf("session log %s: the last compaction names message %s, which is not on this branch; it is ignored", l.Path, b.lostCut))
	}
}

// branch is the state a path of entries gives: its messages and their
// ids, its branch summaries, and its latest compaction's summary and
// where the kept messages start. lostCut is the first kept message a
// compaction names that is not on the path (the compaction is ignored).
type branch struct {
	msgs     []conversation.Message
	ids      []string
	notes    []branchNote
	summary  string
	keptFrom int
	lostCut  string
}

// branchOf derives the state of the path entries (root first).
func branchOf(entries []sessionlog.Entry) branch {
	n := 0
	for _, e := range entries {
		if e.Message != nil {
			n++
		}
	}
	b := branch{msgs: make([]conversation.Message, 0, n), ids: make([]string, 0, n)}
	var compaction *sessionlog.Compaction
	for _, e := range entries {
		switch {
		case e.Message != nil:
			b.msgs = append(b.msgs, *e.Message)
			b.ids = append(b.ids, e.ID)
		case e.Compaction != nil:
			compaction = e.Compaction
		case e.BranchSummary != nil:
			b.notes = append(b.notes, branchNote{at: len(b.msgs), text: e.BranchSummary.Summary})
		}
	}
	if compaction != nil {
		for i, id := range b.ids {
			if id == compaction.FirstKeptID {
				b.summary, b.keptFrom = compaction.Summary, i
			}
		}
		if b.summary == "" {
			b.lostCut = compaction.FirstKeptID
		}
	}
	return b
}

// MoveOptions says how to move the leaf.
type MoveOptions struct {
	// Summarize asks the model (the compaction model, when set) for a
	// summary of the branch left, recorded on the new path so the model
	// knows what was tried there. An extension's before_move may give
	// the summary instead.
	Summarize bool
}

// MoveResult says what a move did.
type MoveResult struct {
	// From is the leaf before the move, To the entry moved to.
	From, To string
	// Summary is the branch summary recorded, or "".
	Summary string
	// Left counts the messages of the branch left that the new path does
	// not hold.
	Left int
}

// Moved says the leaf moved: the conversation and the system prompt are
// now those of the path to To. A front end redraws.
type Moved struct {
	MoveResult
}

func (Moved) Kind() string { return "moved" }

// Labeled says an entry's label changed (Text "" removed it).
type Labeled struct {
	ID, Text string
}

func (Labeled) Kind() string { return "labeled" }

// The errors of the tree operations.
var (
	// ErrNotRecorded: the session has no log (--no-session), so no tree.
	ErrNotRecorded = errors.New("the session is not recorded (--no-session): it has no tree")
	// ErrAlreadyThere: the entry moved to is the leaf already.
	ErrAlreadyThere = errors.New("already there: the entry is the current leaf")
)

// VetoError is a move an extension vetoed in before_move.
type VetoError = extension.VetoError

// Tree returns the shape of the session's log as it is now: an index
// scan of the file as far as its writer has acknowledged it, which takes
// no lock, so changes go on being recorded and the session answers while
// it reads (the scan is cheap whatever the log's size: ~0.5 s for 1 GB).
func (s *Session) Tree() (*sessionlog.Tree, error) {
	if s.w == nil {
		return nil, ErrNotRecorded
	}
	size := s.w.Size()
	if s.testTree != nil {
		s.testTree()
	}
	return sessionlog.ScanSize(s.path, size)
}

// MoveTo moves the session's leaf to the entry ref names (its id, or a
// unique prefix of one), so the next message continues from there: it
// appends a move entry (and a branch_summary, when one is written), then
// re-derives the conversation and the prompt from the new path. The
// extensions are asked first (before_move: one may veto, a *VetoError)
// and told after (after_move). panto's own sections are kept current on
// the new path: those of extensions not loaded now are removed, and the
// tool guidance matches the tools offered. It fails with ErrBusy while a
// turn runs, ErrClosed once Close has begun (Close cancels a move that
// runs), and refuses a reply whose tool calls the new path would leave
// without results.
func (s *Session) MoveTo(ctx context.Context, ref string, opt MoveOptions) (MoveResult, error) {
	ctx, done, err := s.exclusive(ctx)
	if err != nil {
		return MoveResult{}, err
	}
	defer done()
	tree, err := s.Tree()
	if err != nil {
		return MoveResult{}, fmt.Errorf("move: %w", err)
	}
	to, err := tree.Resolve(strings.TrimSpace(ref))
	if err != nil {
		return MoveResult{}, fmt.Errorf("move: %w", err)
	}
	res := MoveResult{From: tree.Leaf(), To: to}
	if at(tree, res.From, to) {
		return res, ErrAlreadyThere
	}
	if _, err := CheckMove(tree, to); err != nil {
		return MoveResult{}, err
	}
	left, err := leftBehind(tree, res.From, to)
	if err != nil {
		return MoveResult{}, fmt.Errorf("move: %w", err)
	}
	res.Left = countMessages(tree, left)

	mv := extension.Move{From: res.From, To: to, Summarize: opt.Summarize, Left: res.Left}
	if s.exts != nil {
		res.Summary, err = s.exts.BeforeMove(ctx, mv)
		if err != nil {
			return MoveResult{}, err
		}
	}
	if res.Summary == "" && opt.Summarize && res.Left > 0 {
		if res.Summary, err = s.summariseBranch(ctx, tree, left); err != nil {
			return MoveResult{}, err
		}
	}

	entries := []sessionlog.Entry{sessionlog.MoveEntry(to, res.From)}
	if res.Summary != "" {
		entries = append(entries, sessionlog.BranchSummaryEntry(res.Summary, res.From))
	}
	if err := s.move(entries); err != nil {
		return MoveResult{}, fmt.Errorf("move: %w", err)
	}
	if err := s.disposeAbsent(s.loaded); err != nil {
		s.notice(NoticeWarning, err.Error())
	}
	if err := s.recordOwn(); err != nil {
		s.notice(NoticeWarning, err.Error())
	}
	if s.exts != nil {
		s.exts.RecordGuidance(recorder{s})
		s.exts.AfterMove(ctx, mv, res.Summary)
	}
	s.logger.Info("moved", "from", res.From, "to", to, "left", res.Left, "summary", res.Summary != "")
	s.emit(Moved{res})
	return res, nil
}

// move records entries (a move, and maybe its summary) and loads the new
// branch. It holds s.wmu throughout — no other change may come between
// the move and the branch it loads — but s.mu only to set the branch, so
// the session answers while the branch is read.
func (s *Session) move(entries []sessionlog.Entry) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.shut {
		return ErrClosed
	}
	from := s.w.Leaf()
	written, err := s.w.Append(entries...)
	if err != nil {
		return err
	}
	loaded, err := sessionlog.Load(s.path)
	if err != nil {
		// The new path cannot be read (an entry on it is damaged): move
		// back, so what the log continues from is what the session holds.
		back := sessionlog.MoveEntry(from, written[len(written)-1].ID)
		if _, berr := s.w.Append(back); berr != nil {
			return fmt.Errorf("load the new branch: %w; moving back failed too: %v", err, berr)
		}
		return fmt.Errorf("load the new branch: %w (moved back: the session goes on where it was)", err)
	}
	s.mu.Lock()
	s.setBranchLocked(loaded)
	s.mu.Unlock()
	return nil
}

// at reports whether the leaf is at the entry to: it is to, or follows it
// through moves and labels only (which change nothing the next message
// follows).
func at(tree *sessionlog.Tree, leaf, to string) bool {
	for id := leaf; id != ""; {
		if id == to {
			return true
		}
		n, err := tree.Node(id)
		if err != nil || n.Type != sessionlog.TypeMove && n.Type != sessionlog.TypeLabel {
			return false
		}
		id = n.ParentID
	}
	return false
}

// CheckMove resolves ref (an entry id or a unique prefix) in tree and
// says whether a move may go there, as MoveTo would: it returns the
// entry's id. A front end checks a move asked for on its command line
// with it before it opens (and so writes to) the session.
func CheckMove(tree *sessionlog.Tree, ref string) (string, error) {
	to, err := tree.Resolve(strings.TrimSpace(ref))
	if err != nil {
		return "", fmt.Errorf("move: %w", err)
	}
	if err := checkTarget(tree, to); err != nil {
		return "", fmt.Errorf("move to %s: %w", short(to), err)
	}
	return to, nil
}

// checkTarget refuses to move where the next message would follow a
// reply whose tool calls have no results (every provider refuses such a
// request): the reply itself, or an entry after it and before its
// results — a label, a move, a change of the prompt.
func checkTarget(tree *sessionlog.Tree, id string) error {
	for cur := id; cur != ""; {
		n, err := tree.Node(cur)
		if err != nil {
			return err
		}
		switch {
		case n.Type == sessionlog.TypeBranchSummary || n.Type == sessionlog.TypeCompaction:
			return nil
		case n.Type != sessionlog.TypeMessage || n.Role == conversation.RoleSystem:
			cur = n.ParentID
			continue
		case n.Role != conversation.RoleAssistant && n.Role != "":
			return nil
		}
		es, err := tree.Entries(cur)
		if err != nil {
			return err
		}
		m := es[0].Message
		if m == nil || len(m.ToolUses()) == 0 {
			return nil
		}
		hint := "move to the entry of its results, or to the message before it"
		if r := resultsOf(tree, cur); r != "" {
			hint = "move to " + short(r) + " (its results), or to the message before it"
		}
		if cur == id {
			return fmt.Errorf("it is a reply that calls tools, and the next message would leave its calls without results; %s", hint)
		}
		return fmt.Errorf("it follows %s, a reply that calls tools, before their results: the next message would leave the calls without results; %s", short(cur), hint)
	}
	return nil
}

// resultsOf finds the message that answers the tool calls of reply: the
// first tool message after it, past entries that are not messages.
func resultsOf(tree *sessionlog.Tree, reply string) string {
	queue := []string{reply}
	for seen := 0; len(queue) > 0 && seen < 64; seen++ {
		kids, _ := tree.Children(queue[0])
		queue = queue[1:]
		for _, k := range kids {
			n, err := tree.Node(k)
			switch {
			case err != nil:
			case n.Type == sessionlog.TypeMessage && n.Role == conversation.RoleTool:
				return k
			case n.Type != sessionlog.TypeMessage || n.Role == conversation.RoleSystem:
				queue = append(queue, k)
			}
		}
	}
	return ""
}

// leftBehind returns the entries of the chain to from that the chain to
// to does not hold: the part of the branch a move leaves.
func leftBehind(tree *sessionlog.Tree, from, to string) ([]string, error) {
	if from == "" {
		return nil, nil
	}
	old, err := tree.Chain(from)
	if err != nil {
		return nil, err
	}
	next, err := tree.Chain(to)
	if err != nil {
		return nil, err
	}
	i := 0
	for i < len(old) && i < len(next) && old[i] == next[i] {
		i++
	}
	return old[i:], nil
}

func countMessages(tree *sessionlog.Tree, ids []string) int {
	n := 0
	for _, id := range ids {
		if node, err := tree.Node(id); err == nil && node.Type == sessionlog.TypeMessage && node.Role != conversation.RoleSystem {
			n++
		}
	}
	return n
}

// summariseBranch asks the model for a summary of the messages of ids.
func (s *Session) summariseBranch(ctx context.Context, tree *sessionlog.Tree, ids []string) (string, error) {
	entries, err := tree.Entries(ids...)
	if err != nil {
		return "", fmt.Errorf("branch summary: %w", err)
	}
	var msgs []conversation.Message
	for _, e := range entries {
		if e.Message != nil && e.Message.Role != conversation.RoleSystem {
			msgs = append(msgs, *e.Message)
		}
	}
	s.notice(NoticeInfo, fmt.Sprintf("summarising the branch left (%d messages)…", len(msgs)))
	// A summary is asked once, of a transcript no later request
	// shares: a cache mark would only pay the write premium.
	req := s.settings().request("")
	if s.compaction.Model != "" {
		req.Model = s.compaction.Model
	}
	req.Tools, req.ToolChoice, req.ThinkingBudget, req.Cache = nil, serializers.ToolChoice{}, 0, serializers.Cache{}
	// A long branch is summarised in pieces that fit the window, as a
	// compaction is.
	summary, err := s.summariseInPieces(ctx, req, branchSummaryAsk, "", transcriptPieces(msgs))
	switch {
	case errors.Is(err, errEmptySummary):
		return "", errors.New("branch summary: the model returned an empty summary; nothing was moved")
	case err != nil:
		return "", fmt.Errorf("branch summary: %w (nothing was moved; move without a summary, or try again)", err)
	}
	return summary, nil
}

// Label gives the entry ref names the label text ("" removes its label),
// as a label entry appended to the log. It fails with ErrClosed once
// Close has begun.
func (s *Session) Label(ref, text string) (string, error) {
	text = strings.TrimSpace(conversation.ValidText(text))
	if strings.ContainsAny(text, "\n\r") {
		return "", errors.New("label: a label is one line")
	}
	done, err := s.ops.enter()
	if err != nil {
		return "", fmt.Errorf("label: %w", err)
	}
	defer done()
	tree, err := s.Tree() // no lock: the entry named is in it whatever is appended meanwhile
	if err == nil {
		var id string
		if id, err = tree.Resolve(strings.TrimSpace(ref)); err == nil {
			s.wmu.Lock()
			err = s.writeLocked([]sessionlog.Entry{sessionlog.LabelEntry(id, text)}, nil)
			s.wmu.Unlock()
			ref = id
		}
	}
	if err != nil {
		return "", fmt.Errorf("label: %w", err)
	}
	s.emit(Labeled{ID: ref, Text: text})
	return ref, nil
}

// leaf returns the id of the session's current leaf, or "".
func (s *Session) leaf() string {
	if s.w == nil {
		return ""
	}
	return s.w.Leaf()
}

// PromptAt returns the system prompt as of the entry ref names (an id or
// a unique prefix), exact: the derivation over the path from the root to
// that entry. Index in each block is the message's position on that path.
func (s *Session) PromptAt(ref string) ([]conversation.SystemText, error) {
	tree, err := s.Tree()
	if err != nil {
		return nil, err
	}
	return PromptAt(tree, ref)
}

// PromptAt returns the system prompt as of the entry of tree that ref
// names, as Session.PromptAt does.
func PromptAt(tree *sessionlog.Tree, ref string) ([]conversation.SystemText, error) {
	id, err := tree.Resolve(strings.TrimSpace(ref))
	if err != nil {
		return nil, err
	}
	sys, err := tree.SystemAt(id)
	if err != nil {
		return nil, err
	}
	blocks := conversation.EffectiveSystem(sys.Messages)
	for i := range blocks {
		if j := blocks[i].Index; j >= 0 && j < len(sys.Positions) {
			blocks[i].Index = sys.Positions[j]
		}
	}
	return blocks, nil
}

// short is an entry id as people read it: its first 8 characters.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// MessageCount is the number of messages on the current path, those a
// resume left unloaded before a compaction's cut included: the count
// panto prompt --at N takes.
func (s *Session) MessageCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped + len(s.conv.Messages)
}
