package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// Session owns one conversation while panto runs: every change goes to the
// session log first (durable when the call returns) and then to the
// conversation in memory, under one lock, so the two never disagree and
// changes from several goroutines are recorded in call order.
type Session struct {
	mu      sync.Mutex
	conv    conversation.Conversation
	w       *sessionlog.Writer // nil: nothing is written (--no-session)
	path    string
	id      string
	resumed bool
	// entries are the log entries on the current branch (system and
	// lifecycle entries included), for the reconciliation window.
	entries []sessionlog.Entry
	// Warnings are what reading the log noticed (a repaired torn line).
	Warnings []string

	hooks    TurnHooks
	onSystem func(mode conversation.Mode, text, by string)
	tools    ToolRunner
	observer ToolObserver
	maxSteps int
	render   func(text, source string) (string, error)
	created  bool // the log was created by this run

	compaction Compaction
	// summary and keptFrom are the latest compaction: requests send
	// summary in place of the non-system messages before keptFrom.
	summary  string
	keptFrom int
	// msgIDs are the log entry ids of conv.Messages (empty strings when
	// nothing is written).
	msgIDs []string
}

// TurnHooks are told of a turn's progress; the extension manager fits.
// They are called without the session's lock held, so they may record
// changes (system edits made in BeforeTurn shape the turn's request).
type TurnHooks interface {
	BeforeTurn(ctx context.Context, userText string)
	TurnEnd(ctx context.Context, reply conversation.Message, stopReason string)
}

// SetHooks installs the turn hooks; nil removes them.
func (s *Session) SetHooks(h TurnHooks) { s.hooks = h }

// OnSystemChange installs f, called after each system block is recorded,
// with who recorded it ("panto" for the configured prompt). f runs with
// the session's lock held: it must only queue work.
func (s *Session) OnSystemChange(f func(mode conversation.Mode, text, by string)) { s.onSystem = f }

// SetRenderer installs f, which expands the {{variables}} of every system
// text an extension records (source names the extension); an error
// rejects the edit.
func (s *Session) SetRenderer(f func(text, source string) (string, error)) { s.render = f }

// EditSystem records a system block on behalf of by (an extension's
// name), its variables rendered first.
func (s *Session) EditSystem(by string, mode conversation.Mode, text string) error {
	if s.render != nil {
		rendered, err := s.render(text, "extension "+by)
		if err != nil {
			return err
		}
		text = rendered
	}
	return s.record(by, conversation.SystemMessage(text, mode))
}

// AppendData records an extension_data entry for extension.
func (s *Session) AppendData(extension string, data json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(sessionlog.ExtensionDataEntry(extension, data))
}

// OpenSession opens the session log at path, creating it (and its
// directory) if it does not exist, or resuming it if it does. A new log's
// header records cwd and id (empty: a new id). An empty path gives a
// session that writes nothing.
func OpenSession(path, cwd, id string) (*Session, error) {
	if id == "" {
		id = sessionlog.NewID()
	}
	s := &Session{path: path, id: id}
	if path == "" {
		return s, nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		h := sessionlog.Header{Version: sessionlog.Version, ID: id, Created: time.Now().UTC(), Cwd: cwd}
		w, err := sessionlog.Create(path, h)
		if err != nil {
			return nil, err
		}
		s.w, s.id, s.created = w, h.ID, true
		return s, nil
	}
	w, log, err := sessionlog.Open(path)
	if err != nil {
		return nil, err
	}
	var branch []sessionlog.Entry
	if leaf := log.Leaf(); leaf != nil {
		if branch, err = log.Branch(leaf.ID); err != nil {
			w.Close()
			return nil, err
		}
	}
	s.w, s.id, s.resumed = w, log.Header.ID, true
	s.entries = branch
	s.Warnings = log.Warnings
	// The conversation is the branch's messages (what log.Messages would
	// walk the chain again for).
	n := 0
	for _, e := range branch {
		if e.Message != nil {
			n++
		}
	}
	s.conv.Messages = make([]conversation.Message, 0, n)
	s.msgIDs = make([]string, 0, n)
	var compaction *sessionlog.Compaction
	for _, e := range branch {
		switch {
		case e.Message != nil:
			s.conv.Messages = append(s.conv.Messages, *e.Message)
			s.msgIDs = append(s.msgIDs, e.ID)
		case e.Compaction != nil:
			compaction = e.Compaction
		}
	}
	if compaction != nil {
		for i, id := range s.msgIDs {
			if id == compaction.FirstKeptID {
				s.summary, s.keptFrom = compaction.Summary, i
			}
		}
		if s.summary == "" {
			s.Warnings = append(s.Warnings, fmt.Sprintf("session log %s: the last compaction names message %s, which is not on this branch; it is ignored", path, compaction.FirstKeptID))
		}
	}
	if uses := unanswered(s.conv.Messages); len(uses) > 0 {
		// panto was killed (SIGKILL, a crash, power loss) while the last
		// reply's tool calls ran: the log holds the calls but no results,
		// and both providers refuse a request like that. Answer them now,
		// by appending, before anything else is recorded.
		msg := conversation.Message{Role: conversation.RoleTool, Content: notRun(uses,
			"interrupted: panto stopped before this call finished, and no result was recorded; it may have run in part or in full")}
		if err := s.appendLocked(sessionlog.MessageEntry(msg)); err != nil {
			w.Close()
			return nil, fmt.Errorf("repair session log %s: %w", path, err)
		}
		s.conv.Append(msg)
		s.Warnings = append(s.Warnings, fmt.Sprintf("session log %s: the last reply's %d tool call(s) had no result (panto was stopped while they ran); recorded them as interrupted", path, len(uses)))
	}
	return s, nil
}

// unanswered returns the tool calls of the conversation's last reply when
// no results follow them (system messages aside): what a log holds when
// panto was killed while the calls ran.
func unanswered(msgs []conversation.Message) []conversation.Block {
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Role {
		case conversation.RoleSystem:
			continue
		case conversation.RoleAssistant:
			return msgs[i].ToolUses()
		}
		return nil
	}
	return nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Path returns the session log's path; empty when nothing is written.
func (s *Session) Path() string { return s.path }

// Resumed reports whether the log existed before this run.
func (s *Session) Resumed() bool { return s.resumed }

// Close releases the log. The session must not be used afterwards.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	if s.created && len(s.entries) == 0 {
		// The run failed before recording anything (a bad prompt file,
		// say): leave no empty session behind.
		if rerr := os.Remove(s.path); rerr != nil && err == nil {
			err = fmt.Errorf("remove empty session log %s: %w", s.path, rerr)
		}
	}
	return err
}

// Messages returns a copy of the conversation's messages.
func (s *Session) Messages() []conversation.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]conversation.Message(nil), s.conv.Messages...)
}

// EffectiveSystem returns the current system prompt.
func (s *Session) EffectiveSystem() []conversation.SystemText {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conv.EffectiveSystem()
}

// AddSystemMessage records an append-mode system block.
func (s *Session) AddSystemMessage(text string) error {
	return s.Record(conversation.SystemMessage(text, conversation.ModeAppend))
}

// ReplaceSystemMessage records a replace-mode system block.
func (s *Session) ReplaceSystemMessage(text string) error {
	return s.Record(conversation.SystemMessage(text, conversation.ModeReplace))
}

// Record appends messages to the log (one durable write) and then to the
// conversation. On a log error nothing is added.
func (s *Session) Record(msgs ...conversation.Message) error {
	return s.record("panto", msgs...)
}

func (s *Session) record(by string, msgs ...conversation.Message) error {
	entries := make([]sessionlog.Entry, len(msgs))
	for i, m := range msgs {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("record message: %w", err)
		}
		entries[i] = sessionlog.MessageEntry(m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.appendLocked(entries...); err != nil {
		return err
	}
	s.conv.Append(msgs...)
	s.notifyLocked(by, msgs)
	return nil
}

func (s *Session) notifyLocked(by string, msgs []conversation.Message) {
	if s.onSystem == nil {
		return
	}
	for _, m := range msgs {
		if m.Role != conversation.RoleSystem {
			continue
		}
		for _, b := range m.Content {
			s.onSystem(b.Mode.Normalize(), b.Text, by)
		}
	}
}

func (s *Session) appendLocked(entries ...sessionlog.Entry) error {
	recorded := entries
	if s.w != nil {
		var err error
		if recorded, err = s.w.Append(entries...); err != nil {
			return err
		}
	}
	s.entries = append(s.entries, recorded...)
	for _, e := range recorded {
		if e.Message != nil {
			s.msgIDs = append(s.msgIDs, e.ID)
		}
	}
	return nil
}

// SeedResult says what Seed did.
type SeedResult struct {
	// Fresh is true for a new session: the blocks were recorded as its
	// seed.
	Fresh bool
	// Reseeded is true when a resumed session's configured prompt had
	// changed and a replace + appends sequence was recorded.
	Reseeded bool
}

// Seed brings the session's system prompt in line with the configured
// blocks (seed first, then appends) and records a lifecycle entry naming
// the loaded extensions.
//
// A fresh session records each block in append mode. A resumed session
// compares the blocks, by position and exact text, with its current
// config window (see ConfigWindow); on any difference it records one
// replace-mode block with the seed and one append-mode block per other
// block; otherwise nothing. The lifecycle entry that follows ends the
// window, so system edits made afterwards (by extensions at session start
// or later) are never mistaken for configuration by the next resume.
func (s *Session) Seed(blocks []string, extensions []string) (SeedResult, error) {
	if len(blocks) == 0 {
		return SeedResult{}, errors.New("seed session: no system blocks (the seed is required)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	resumed := s.resumed && len(s.entries) > 0
	var msgs []conversation.Message
	res := SeedResult{Fresh: !resumed}
	switch {
	case !resumed:
		for _, b := range blocks {
			msgs = append(msgs, conversation.SystemMessage(b, conversation.ModeAppend))
		}
	case !slices.Equal(ConfigWindow(s.entries), blocks):
		res.Reseeded = true
		msgs = append(msgs, conversation.SystemMessage(blocks[0], conversation.ModeReplace))
		for _, b := range blocks[1:] {
			msgs = append(msgs, conversation.SystemMessage(b, conversation.ModeAppend))
		}
	}
	event := sessionlog.LifecycleStarted
	if resumed {
		event = sessionlog.LifecycleResumed
	}
	entries := make([]sessionlog.Entry, 0, len(msgs)+1)
	for _, m := range msgs {
		entries = append(entries, sessionlog.MessageEntry(m))
	}
	entries = append(entries, sessionlog.LifecycleEntry(event, res.Reseeded, extensions))
	if err := s.appendLocked(entries...); err != nil {
		return SeedResult{}, fmt.Errorf("seed session: %w", err)
	}
	s.conv.Append(msgs...)
	s.notifyLocked("panto", msgs)
	return res, nil
}

// ConfigWindow returns the texts of the current effective config window of
// a branch of log entries: the run of system entries that starts at the
// anchor — the latest replace-mode system entry, else the first entry —
// and ends at the first entry of any other kind. It is what resume
// reconciliation compares the configured blocks with; docs/system-prompt.md
// explains the rule with examples.
func ConfigWindow(entries []sessionlog.Entry) []string {
	anchor := 0
	for i, e := range entries {
		if b, ok := systemBlock(e); ok && b.Mode == conversation.ModeReplace {
			anchor = i
		}
	}
	var out []string
	for _, e := range entries[anchor:] {
		m := e.Message
		if m == nil || m.Role != conversation.RoleSystem {
			break
		}
		for _, b := range m.Content {
			out = append(out, b.Text)
		}
	}
	return out
}

// systemBlock returns the first System block of a system-message entry.
func systemBlock(e sessionlog.Entry) (conversation.Block, bool) {
	if e.Message == nil || e.Message.Role != conversation.RoleSystem || len(e.Message.Content) == 0 {
		return conversation.Block{}, false
	}
	return e.Message.Content[0], true
}

// TurnRequest is what a turn sends besides the conversation.
type TurnRequest = serializers.Request

// Sender sends one model request; provider.Provider fits.
type Sender interface {
	Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error)
}

// Turn records the user's message and runs the agent loop: send the
// conversation to p, record the reply, run its tool calls (several at
// once, results recorded in call order), and send again, until a reply
// calls no tool or max_steps is reached (ErrMaxSteps, wrapped, with the
// last reply). req supplies the model settings; its Messages and Tools are
// filled in here.
//
// Nothing half-done is recorded: a failed or cancelled request records no
// reply, and every recorded tool call gets a result — calls cut short by
// cancellation get an "interrupted" error result — so the log stays valid
// and resumable.
func (s *Session) Turn(ctx context.Context, p Sender, req TurnRequest, user conversation.Message, fn serializers.DeltaFunc) (serializers.Reply, error) {
	if err := s.Record(user); err != nil {
		return serializers.Reply{}, err
	}
	if s.hooks != nil {
		// What the user typed: the last block (per-turn prompt blocks
		// come before it).
		typed := ""
		if n := len(user.Content); n > 0 {
			typed = user.Content[n-1].Text
		}
		s.hooks.BeforeTurn(ctx, typed)
	}
	for step := 1; ; step++ {
		if s.needsCompaction() {
			if err := s.Compact(ctx, p, req); err != nil && !errors.Is(err, ErrNothingToCompact) {
				return serializers.Reply{}, err
			}
		}
		req.Tools = s.offer(ctx, step)
		req.Messages = s.RequestMessages()
		reply, err := p.Send(ctx, req, fn)
		if err != nil {
			return serializers.Reply{}, err
		}
		if len(reply.Message.Content) == 0 {
			// An empty reply (a refusal, a max_tokens cut before any
			// text) is still the model's turn; record it as an empty
			// text so the conversation keeps its shape.
			reply.Message = conversation.AssistantText("")
		}
		if err := s.Record(reply.Message); err != nil {
			return serializers.Reply{}, fmt.Errorf("record reply: %w", err)
		}
		uses := reply.Message.ToolUses()
		if len(uses) == 0 {
			if s.hooks != nil {
				s.hooks.TurnEnd(ctx, reply.Message, string(reply.StopReason))
			}
			return reply, nil
		}
		if s.maxSteps > 0 && step >= s.maxSteps {
			why := fmt.Sprintf("not run: the turn reached max_steps (%d); the user can send a message to go on", s.maxSteps)
			if err := s.Record(conversation.Message{Role: conversation.RoleTool, Content: notRun(uses, why)}); err != nil {
				return serializers.Reply{}, fmt.Errorf("record tool results: %w", err)
			}
			if s.hooks != nil {
				s.hooks.TurnEnd(ctx, reply.Message, string(reply.StopReason))
			}
			return reply, fmt.Errorf("%w (%d requests)", ErrMaxSteps, step)
		}
		var results []conversation.Block
		if ctx.Err() != nil {
			results = notRun(uses, "not run: interrupted by the user")
		} else {
			results = s.runTools(ctx, uses)
		}
		if err := s.Record(conversation.Message{Role: conversation.RoleTool, Content: results}); err != nil {
			return serializers.Reply{}, fmt.Errorf("record tool results: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return serializers.Reply{}, fmt.Errorf("turn stopped after its tool calls: %w", context.Cause(ctx))
		}
	}
}
