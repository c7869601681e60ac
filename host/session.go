package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// Session is one running conversation: what every front end (print
// mode, the line loop, the full-screen UI, the JSON stream) drives. Open
// starts it; Turn runs a turn and returns its events; Close ends it.
//
// Every change goes to the session log first (durable when the call
// returns) and then to the conversation in memory, under one lock, so the
// two never disagree and changes from several goroutines (extensions
// calling back from their own) are recorded in call order. A Session is
// safe for concurrent use; one turn runs at a time.
type Session struct {
	mu      sync.Mutex
	conv    conversation.Conversation
	w       *sessionlog.Writer // nil: nothing is written (in memory, read-only)
	path    string
	id      string
	resumed bool
	// entries are the log entries on the current branch (system and
	// lifecycle entries included), for the reconciliation window.
	entries []sessionlog.Entry
	// warnings are what reading the log noticed (a repaired torn line),
	// told as notices once the session's events exist.
	warnings []string
	created  bool // the log was created by this run

	// Set by Open, never changed afterwards.
	events       *stream // events between turns
	logger       hclog.Logger
	exts         *extension.Manager // nil: none loaded
	hooks        TurnHooks
	tools        ToolRunner
	render       func(text, source string) (string, error)
	prov         Sender
	providerName string
	req          serializers.Request
	userPrompt   []PromptBlock
	maxSteps     int
	compaction   Compaction
	fresh        bool
	reseeded     bool
	// interactive is set when the front end answers questions;
	// confirmDefault answers a confirm when it does not ("yes", "no" or
	// "": ErrNoUser).
	interactive    atomic.Bool // set once extensions have started: they may ask from the background
	confirmDefault string
	// asks closes when Close begins: no question is asked from then on
	// (user.go); told bounds the extensions' notices and status segments.
	asks askGate
	told notices

	// turnMu makes turns (and compactions) one at a time.
	turnMu sync.Mutex
	// evMu guards turn: the stream of the running turn, which receives
	// every event while it runs.
	evMu sync.Mutex
	turn *stream

	// summary and keptFrom are the latest compaction: requests send
	// summary in place of the non-system messages before keptFrom.
	summary  string
	keptFrom int
	// msgIDs are the log entry ids of conv.Messages (empty strings when
	// nothing is written).
	msgIDs []string
	// skipped counts the messages of the branch before the latest
	// compaction's cut that were not loaded (sessionlog.Load): only its
	// system messages were.
	skipped int
	// positions are the places of entries on the branch, when it was
	// loaded from a log (entries appended since have none: they follow).
	positions []int
	// notes are the branch summaries on the current path.
	notes []branchNote
	// loaded are the extensions loaded, in load order (set by Open).
	loaded []string
}

// TurnHooks are told of a turn's progress; the extension manager fits.
// They are called without the session's lock held, so they may record
// changes (system edits made in BeforeTurn shape the turn's request).
type TurnHooks interface {
	BeforeTurn(ctx context.Context, userText string)
	TurnEnd(ctx context.Context, reply conversation.Message, stopReason string)
}

// emit sends ev to the running turn's events, or between turns to the
// session's. It never blocks, so it may be called with s.mu held.
func (s *Session) emit(ev Event) {
	s.evMu.Lock()
	st := s.turn
	s.evMu.Unlock()
	if st == nil {
		st = s.events
	}
	if st != nil {
		st.send(ev)
	}
}

// notice emits a Notice and logs it.
func (s *Session) notice(level NoticeLevel, text string) {
	if s.logger != nil {
		switch level {
		case NoticeError:
			s.logger.Error(text)
		case NoticeWarning:
			s.logger.Warn(text)
		default:
			s.logger.Info(text)
		}
	}
	s.emit(Notice{Level: level, Text: text})
}

// Events returns the events that happen between turns — a notice, an
// extension editing the prompt from the background — starting with those
// of Open (a repaired log, an extension that failed to start) unless a
// turn took them first (see Turn). During a turn every event goes to the
// turn's own channel instead. Once Events is called, read the channel
// until Close closes it.
func (s *Session) Events() <-chan Event {
	s.events.start()
	return s.events.out
}

// Unread returns the events queued so far that nobody has read — those of
// Open, say — when Events was never called and no turn took them: what a
// front end that runs no turn (a command in print mode) shows first.
func (s *Session) Unread() []Event { return s.events.takeUnread() }

// EditSystem records a system block on behalf of by (an extension's
// name), its variables rendered first. Extensions call it (through the
// extension host).
func (s *Session) EditSystem(by string, mode conversation.Mode, text string) error {
	if s.render != nil {
		rendered, err := s.render(text, "extension "+by)
		if err != nil {
			s.emit(SystemRefused{By: by, Mode: mode, Text: text, Err: err})
			return err
		}
		text = rendered
	}
	return s.record(by, conversation.SystemMessage(text, mode).WithSource(extensionSource(by)))
}

// AppendData records an extension_data entry for extension.
func (s *Session) AppendData(extension string, data json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(sessionlog.ExtensionDataEntry(extension, data))
}

// openLog opens the session's log as l says (see Log): a new session, a
// resumed one, one read but not written, or one in memory.
func openLog(l Log, cwd string) (*Session, error) {
	id := l.ID
	if id == "" {
		id = sessionlog.NewID()
	}
	s := &Session{path: l.Path, id: id}
	if l.Path == "" {
		return s, nil
	}
	var (
		w      *sessionlog.Writer
		loaded *sessionlog.Loaded
		err    error
	)
	_, statErr := os.Stat(l.Path)
	switch {
	case l.ReadOnly && errors.Is(statErr, os.ErrNotExist):
		// Nothing to read: a fresh session, in memory.
		return s, nil
	case l.ReadOnly:
		if loaded, err = sessionlog.Load(l.Path); err != nil {
			return nil, err
		}
	case errors.Is(statErr, os.ErrNotExist):
		h := sessionlog.Header{Version: sessionlog.Version, ID: id, Created: time.Now().UTC(), Cwd: cwd}
		if s.w, err = sessionlog.Create(l.Path, h); err != nil {
			return nil, err
		}
		s.id, s.created = h.ID, true
		return s, nil
	default:
		// What the next request needs, not the whole file: the branch
		// from the latest compaction's cut on, and the system messages
		// before it (sessionlog.Load).
		if w, loaded, err = sessionlog.OpenLoaded(l.Path); err != nil {
			return nil, err
		}
	}
	closeW := func() {
		if w != nil {
			w.Close()
		}
	}
	path := l.Path
	s.w, s.id, s.resumed = w, loaded.Header.ID, true
	s.warnings = loaded.Warnings
	s.setBranchLocked(loaded)
	if uses := unanswered(s.conv.Messages); len(uses) > 0 {
		// panto was killed (SIGKILL, a crash, power loss) while the last
		// reply's tool calls ran: the log holds the calls but no results,
		// and both providers refuse a request like that. Answer them now,
		// by appending, before anything else is recorded.
		msg := conversation.Message{Role: conversation.RoleTool, Content: notRun(uses,
			"interrupted: panto stopped before this call finished, and no result was recorded; it may have run in part or in full")}
		if err := s.appendLocked(sessionlog.MessageEntry(msg)); err != nil {
			closeW()
			return nil, fmt.Errorf("repair session log %s: %w", path, err)
		}
		s.conv.Append(msg)
		s.warnings = append(s.warnings, fmt.Sprintf("session log %s: the last reply's %d tool call(s) had no result (panto was stopped while they ran); recorded them as interrupted", path, len(uses)))
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
func (s *Session) Path() string {
	if s.w == nil {
		return ""
	}
	return s.path
}

// Resumed reports whether the log existed before this run.
func (s *Session) Resumed() bool { return s.resumed }

// Close ends the session: it withdraws the extensions' questions (from
// now on each fails with ErrClosing), tells the extensions
// (session_end), stops them, each within its deadline, and releases the
// log. Close it once;
// the session must not be used afterwards.
func (s *Session) Close(ctx context.Context) error {
	// Nobody answers from now on: the questions on the screen are
	// withdrawn and session_end's fail at once, so closing never waits on
	// a user (or on an extension that asks in a loop).
	s.asks.close()
	if s.exts != nil {
		s.exts.Close(ctx)
	}
	if s.events != nil {
		s.tellAllDropped() // before the events end
		s.events.close()
	}
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
	for _, m := range msgs {
		if m.Role != conversation.RoleSystem {
			continue
		}
		for _, b := range m.Content {
			s.emit(SystemChanged{By: by, Mode: b.Mode.Normalize(), Key: b.Key, Text: b.Text, Source: b.Source})
			if s.exts != nil {
				s.exts.SystemChanged(extension.Change{By: by, Mode: b.Mode.Normalize(), Key: b.Key, Text: b.Text, Source: b.Source})
			}
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

// seed brings the session's system prompt in line with the configured
// blocks (seed first, then appends) and records a lifecycle entry naming
// the loaded extensions, then the entries also, all in one write.
//
// A fresh session records each block in append mode. A resumed session
// compares the blocks, by position and exact text, with its current
// config window (see ConfigWindow); on any difference it records one
// replace-mode block with the seed and one append-mode block per other
// block; otherwise nothing. The lifecycle entry that follows ends the
// window, so system edits made afterwards (by extensions at session start
// or later) are never mistaken for configuration by the next resume.
func (s *Session) seed(configured []PromptBlock, extensions []string, also ...sessionlog.Entry) (SeedResult, error) {
	blocks := make([]string, len(configured))
	for i, b := range configured {
		blocks[i] = b.Text
	}
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
		for _, b := range configured {
			msgs = append(msgs, conversation.SystemMessage(b.Text, conversation.ModeAppend).WithSource(b.Source))
		}
	case !slices.Equal(ConfigWindow(s.entries, s.positions), blocks):
		res.Reseeded = true
		msgs = append(msgs, conversation.SystemMessage(blocks[0], conversation.ModeReplace).WithSource(ReseedSource+configured[0].Source))
		for _, b := range configured[1:] {
			msgs = append(msgs, conversation.SystemMessage(b.Text, conversation.ModeAppend).WithSource(b.Source))
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
	entries = append(entries, also...)
	if err := s.appendLocked(entries...); err != nil {
		return SeedResult{}, fmt.Errorf("seed session: %w", err)
	}
	s.conv.Append(msgs...)
	s.notifyLocked(Panto, msgs)
	return res, nil
}

// Panto is who panto's own system entries are by: the configured prompt,
// a re-seed, a section removed on an extension's behalf.
const Panto = "panto"

// ReseedSource starts the source of the replace-mode entry a re-seed
// records; the rest is where the new seed came from. It is how the next
// resume finds the anchor of its config window.
const ReseedSource = "panto re-seed: "

// ConfigWindow returns the texts of the current effective config window of
// a branch of log entries: the run of system entries that starts at the
// anchor and ends at the first entry of any other kind. The anchor is the
// latest replace-mode entry that seeding or reconciliation recorded — not
// one an extension recorded, which must survive an unchanged resume — or
// the first entry when there is none (spec amendment 3). It is what resume
// reconciliation compares the configured blocks with;
// docs/system-prompt.md explains the rule with a worked log.
//
// positions, when not nil, are the entries' places on the branch (as
// sessionlog.Loaded gives them, which leaves messages out before a
// compaction's cut): a gap between two entries ends the run too.
func ConfigWindow(entries []sessionlog.Entry, positions []int) []string {
	anchor := 0
	for i, e := range entries {
		if b, ok := systemBlock(e); ok && b.Mode == conversation.ModeReplace && reseeded(entries, i, b) {
			anchor = i
		}
	}
	var out []string
	for i, e := range entries[anchor:] {
		m := e.Message
		if m == nil || m.Role != conversation.RoleSystem {
			break
		}
		if j := anchor + i; i > 0 && j < len(positions) && positions[j] != positions[j-1]+1 {
			break // an entry that was not loaded stood between them
		}
		for _, b := range m.Content {
			out = append(out, b.Text)
		}
	}
	return out
}

// reseeded reports whether the replace-mode block b of entries[i] was
// recorded by a re-seed: its source says so, or — a log written before
// sources — the run of system entries it starts ends with a lifecycle
// entry that says the prompt was reseeded.
func reseeded(entries []sessionlog.Entry, i int, b conversation.Block) bool {
	if b.Source != "" {
		return strings.HasPrefix(b.Source, ReseedSource)
	}
	for _, e := range entries[i+1:] {
		if m := e.Message; m != nil && m.Role == conversation.RoleSystem {
			continue
		}
		return e.Lifecycle != nil && e.Lifecycle.Reseeded
	}
	return false
}

// systemBlock returns the first System block of a system-message entry.
func systemBlock(e sessionlog.Entry) (conversation.Block, bool) {
	if e.Message == nil || e.Message.Role != conversation.RoleSystem || len(e.Message.Content) == 0 {
		return conversation.Block{}, false
	}
	return e.Message.Content[0], true
}

// Info describes a session for a front end.
type Info struct {
	ID string
	// Path is the session log; empty when nothing is written.
	Path string
	// Resumed is set when the log existed; Reseeded when the configured
	// prompt had changed and was recorded again at this start.
	Resumed, Reseeded bool
	// Provider and Model are where requests go.
	Provider, Model string
	// Extensions are the extensions loaded, in load order.
	Extensions []string
}

// Info returns what the session is.
func (s *Session) Info() Info {
	info := Info{ID: s.id, Resumed: !s.fresh, Reseeded: s.reseeded, Provider: s.providerName, Model: s.model()}
	if s.w != nil {
		info.Path = s.path
	}
	if s.exts != nil {
		info.Extensions = s.exts.Names()
	}
	return info
}

// Commands returns the slash commands the extensions add, in load order.
func (s *Session) Commands() []extension.Command {
	if s.exts == nil {
		return nil
	}
	return s.exts.Commands()
}

// ErrNoCommand is returned by RunCommand for a name no extension added.
var ErrNoCommand = extension.ErrNoCommand

// RunCommand runs an extension's command /name args and returns its
// output; system edits it makes are recorded.
func (s *Session) RunCommand(ctx context.Context, name, args string) (string, error) {
	if s.exts == nil {
		return "", fmt.Errorf("/%s: %w", name, ErrNoCommand)
	}
	return s.exts.RunCommand(ctx, name, args)
}

// ExtensionInfo returns what each loaded extension said about itself, in
// load order.
func (s *Session) ExtensionInfo() []extension.Info {
	if s.exts == nil {
		return nil
	}
	var out []extension.Info
	for _, x := range s.exts.Extensions() {
		if x.Disabled() == nil {
			out = append(out, x.Info())
		}
	}
	return out
}

// ExtensionStops says how each extension of a closed session stopped, by
// name, in load order (panto ext check tells a clean exit from a kill).
func (s *Session) ExtensionStops() []NamedStop {
	if s.exts == nil {
		return nil
	}
	var out []NamedStop
	for _, x := range s.exts.Extensions() {
		if st, ok := x.Stopped(); ok {
			out = append(out, NamedStop{Name: x.Name(), Stop: st})
		}
	}
	return out
}

// NamedStop is how one extension stopped.
type NamedStop struct {
	Name string
	extension.Stop
}
