package host

import (
	"context"
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
	"github.com/panto-dev/panto/sessionlog"
)

// Session is one running conversation: what every front end (print
// mode, the line loop, the full-screen UI, the JSON stream) drives. Open
// starts it; Subscribe reads its events; Turn runs a turn; Close ends it.
//
// Every change goes to the session log first (durable when the call
// returns) and then to the conversation in memory, so the two never
// disagree, and changes from several goroutines (extensions calling back
// from their own) are recorded in call order. Reading the session
// (Messages, EffectiveSystem, Info, Tree) never waits on a disk. A
// Session is safe for concurrent use; one turn, move or compaction runs
// at a time.
type Session struct {
	// Set when the session is made, before any extension can call back,
	// and never changed afterwards.
	path    string
	id      string
	resumed bool
	created bool // the log was created by this run
	logger  hclog.Logger
	hub     *hub
	live    liveCalls // the tool calls running, for their progress
	confirm string    // Config.ConfirmDefault
	// cacheWarn is Config.CacheWarnTokens; cacheWarned says a warning
	// was given since the last request (cache.go).
	cacheWarn   int
	cacheWarned atomic.Bool
	warnings    []string
	// ready is closed once Open has set up everything below it; an
	// extension's change waits for it (recorder.go). failed is set, before
	// ready closes, when Open failed: the change gets ErrClosed.
	ready  chan struct{}
	failed atomic.Bool

	// Set by Open before ready is closed, never changed afterwards.
	exts         extensionSet // nil: none loaded
	hooks        turnHooks
	tools        toolRunner
	perm         *permState // nil: calls are not decided (permit.go)
	render       func(text, source string) (string, error)
	prov         Sender
	providerName string
	models       modelCatalog // the names /model offers and takes (model.go)
	userPrompt   []PromptBlock
	// own are panto's own sections (Prompt.Sections), set at the start
	// and after a move; ownOwners their owners, which no extension may
	// use and whose sections are never disposed of.
	own        []PromptSection
	ownOwners  []string
	maxSteps   int
	cost       CostFunc // nil: no cost is known
	compaction Compaction
	fresh      bool
	reseeded   bool
	// loaded are the extensions loaded, in load order; before counts the
	// messages the session held before its start recorded anything.
	loaded []string
	before int

	// interactive is set when the front end answers questions (once Open
	// has returned: extensions may ask from the background);
	// asks closes when Close begins: no question is asked from then on
	// (user.go); told bounds the extensions' notices and status segments;
	// mutes counts the user's dismissals of each one's questions (mute.go).
	interactive atomic.Bool
	asks        askGate
	told        notices
	mutes       mutes

	// wmu orders every change: it is held across a change's write to the
	// log and its fsync, and while the change is then applied in memory
	// (under mu). Nothing that only reads takes it.
	wmu sync.Mutex
	w   *sessionlog.Writer // nil: nothing is written (in memory)
	// shut is set, under wmu, once the log is closed: every change fails
	// with ErrClosed from then on.
	shut bool

	// mu guards the state in memory below. It is held only briefly, never
	// across I/O.
	mu   sync.Mutex
	conv conversation.Conversation
	// entries are the log entries on the current branch (system and
	// lifecycle entries included), for the reconciliation window.
	entries []sessionlog.Entry
	model   Model
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

	// ops are the front end's operations under way (ops.go); turnMu makes
	// turns, moves, compactions and model changes one at a time.
	ops    operations
	turnMu sync.Mutex
	// busy is set while turnMu is held (Busy).
	busy atomic.Bool
	// steering holds what the user sent to the running turn (Steer),
	// not yet delivered; turning says a turn takes them.
	steerMu  sync.Mutex
	steering []string
	turning  bool

	// closeOnce runs Close's work once; closeErr is its result.
	closeOnce sync.Once
	closeErr  error

	// Set by host's tests only: testWrite is called as a change's write
	// begins (s.wmu held), testTree as a Tree scan begins.
	testWrite, testTree func()
}

// makeSession returns a session with nothing loaded yet.
func makeSession(path, id string) *Session {
	return &Session{path: path, id: id, hub: newHub(), ready: make(chan struct{}), logger: hclog.NewNullLogger()}
}

// ErrClosed is returned by every operation of a session once Close has
// begun (a turn, a move, a label, a compaction, a command, a change of the
// model), and to an extension that records anything once the log is
// closed: nothing is recorded, in the log or in memory. Open another
// session to go on.
var ErrClosed = errors.New("the session is closed")

// emit sends ev to every subscription. It never blocks.
func (s *Session) emit(ev Event) { s.hub.emit(ev) }

// notice emits a Notice and logs it.
func (s *Session) notice(level NoticeLevel, text string) {
	switch level {
	case NoticeError:
		s.logger.Error(text)
	case NoticeWarning:
		s.logger.Warn(text)
	default:
		s.logger.Info(text)
	}
	s.emit(Notice{Level: level, Text: text})
}

// Subscribe returns the session's events, from now on, until ctx is done
// or the session has closed: the channel is closed after the last one.
// The first subscription also gets those of Open, from its start, ending
// with Opened, so a front end that subscribes right after Open returns
// misses nothing. Each subscription has its own bounded queue (see the
// package comment): a reader that falls far behind gets Overflow as its
// last event, and one that stops reading slows nobody. Cancel ctx when
// done reading before the end; that frees the subscription at once.
func (s *Session) Subscribe(ctx context.Context) <-chan Event { return s.hub.subscribe(ctx) }

// openLog opens the session's log as l says (see Log): a new session, a
// resumed one, one read but not written, or one in memory.
func openLog(l Log, cwd string) (*Session, error) {
	id := l.ID
	if id == "" {
		id = sessionlog.NewID()
	}
	s := makeSession(l.Path, id)
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
		if err := s.record(Panto, msg); err != nil {
			if w != nil {
				w.Close()
			}
			return nil, fmt.Errorf("repair session log %s: %w", path, err)
		}
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

// Close ends the session, as net/http's Server.Shutdown ends a server:
// from its start every operation fails with ErrClosed; it withdraws the
// extensions' questions (each fails with ErrClosing), cancels the turn,
// move or compaction that runs and waits for it to record what it can —
// what an interrupt records: no half reply, an error result for each tool
// call cut short — and for a command that runs; then it tells the
// extensions (session_end: what they record then is recorded), stops
// them, each within its deadline, and closes the log. Every subscription
// ends after the last event. With ctx done the extensions get no
// session_end and are stopped at once; the turn is still waited for
// (cancelled, it ends within a tool's cancel grace). Calling Close again
// waits for the first call and returns its error.
func (s *Session) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closeErr = s.close(ctx) })
	return s.closeErr
}

func (s *Session) close(ctx context.Context) error {
	s.ops.shut()
	// Nobody answers from now on: the questions on the screen are
	// withdrawn and those of session_end fail at once, so closing never
	// waits on a user (or on an extension that asks in a loop).
	s.asks.close()
	s.ops.wait()
	if s.exts != nil {
		s.exts.Close(ctx)
	}
	s.closePermissions() // nothing runs in the TMPDIR any more
	s.wmu.Lock()
	s.shut = true
	var err error
	if s.w != nil {
		err = s.w.Close()
		s.mu.Lock()
		empty := len(s.entries) == 0
		s.mu.Unlock()
		if s.created && empty {
			// The run failed before recording anything (a bad prompt
			// file, say): leave no empty session behind.
			if rerr := os.Remove(s.path); rerr != nil && err == nil {
				err = fmt.Errorf("remove empty session log %s: %w", s.path, rerr)
			}
		}
	}
	s.wmu.Unlock()
	s.tellAllDropped() // before the events end
	s.hub.close()
	return err
}

// Messages returns a copy of the conversation's messages.
func (s *Session) Messages() []conversation.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.conv.Messages)
}

// EffectiveSystem returns the current system prompt.
func (s *Session) EffectiveSystem() []conversation.SystemText {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conv.EffectiveSystem()
}

// record appends msgs to the log (one durable write) and then to the
// conversation, on behalf of by; on a log error nothing is added.
func (s *Session) record(by string, msgs ...conversation.Message) error {
	return s.recordUsed(by, nil, msgs...)
}

// recordReply records the model's reply with the tokens its request used.
func (s *Session) recordReply(reply conversation.Message, u Usage) error {
	return s.recordUsed(Panto, &sessionlog.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens}, reply)
}

// recordUsed is record, with the usage (nil: none) of the last message.
func (s *Session) recordUsed(by string, usage *sessionlog.Usage, msgs ...conversation.Message) error {
	entries := make([]sessionlog.Entry, len(msgs))
	for i, m := range msgs {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("record message: %w", err)
		}
		entries[i] = sessionlog.MessageEntry(m)
	}
	if usage != nil && len(msgs) > 0 {
		entries[len(msgs)-1] = sessionlog.ReplyEntry(msgs[len(msgs)-1], usage)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.writeLocked(entries, func() { s.conv.Append(msgs...) }); err != nil {
		return err
	}
	s.notifyLocked(by, msgs)
	return nil
}

// notifyLocked tells the front ends and the extensions of the system
// blocks of msgs, just recorded by by. The caller holds s.wmu, so they are
// told in the order they were recorded.
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
	s.warnCacheLocked(by, msgs)
}

// writeLocked appends entries to the log, durable when it returns, and
// then, under s.mu, adds them to the branch and runs apply (nil: nothing
// more to apply). The caller holds s.wmu; s.mu is not held across the
// write, so a reader never waits on the disk. Once the log is closed it
// fails with ErrClosed and nothing changes.
func (s *Session) writeLocked(entries []sessionlog.Entry, apply func()) error {
	if s.shut {
		return ErrClosed
	}
	if s.testWrite != nil {
		s.testWrite()
	}
	recorded := entries
	if s.w != nil {
		var err error
		if recorded, err = s.w.Append(entries...); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, recorded...)
	for _, e := range recorded {
		if e.Message != nil {
			s.msgIDs = append(s.msgIDs, e.ID)
		}
	}
	if apply != nil {
		apply()
	}
	return nil
}

// seedResult says what seed did.
type seedResult struct {
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
func (s *Session) seed(configured []PromptBlock, extensions []string, also ...sessionlog.Entry) (seedResult, error) {
	blocks := make([]string, len(configured))
	for i, b := range configured {
		blocks[i] = b.Text
	}
	if len(blocks) == 0 {
		return seedResult{}, errors.New("seed session: no system blocks (the seed is required)")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	resumed := s.resumed && len(s.entries) > 0
	window := ConfigWindow(s.entries, s.positions)
	s.mu.Unlock()
	var msgs []conversation.Message
	res := seedResult{Fresh: !resumed}
	switch {
	case !resumed:
		for _, b := range configured {
			msgs = append(msgs, conversation.SystemMessage(b.Text, conversation.ModeAppend).WithSource(b.Source))
		}
	case !slices.Equal(window, blocks):
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
	if err := s.writeLocked(entries, func() { s.conv.Append(msgs...) }); err != nil {
		return seedResult{}, fmt.Errorf("seed session: %w", err)
	}
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
	// Loaded counts the messages the session held before its start
	// recorded anything: the first Loaded of Messages, as Open left them,
	// are the conversation resumed, and what the start recorded after
	// them came as events (SystemChanged) before Opened.
	Loaded int
}

// Info returns what the session is.
func (s *Session) Info() Info {
	info := Info{ID: s.id, Resumed: !s.fresh, Reseeded: s.reseeded, Provider: s.providerName, Model: s.modelName(), Loaded: s.before}
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
// output; system edits it makes are recorded. Commands may run while a
// turn does; Close waits for one that runs.
func (s *Session) RunCommand(ctx context.Context, name, args string) (string, error) {
	done, err := s.ops.enter()
	if err != nil {
		return "", fmt.Errorf("/%s: %w", name, err)
	}
	defer done()
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
	return s.exts.Infos()
}

// ExtensionStops says how each extension of a closed session stopped, by
// name, in load order (panto ext check tells a clean exit from a kill).
func (s *Session) ExtensionStops() []NamedStop {
	if s.exts == nil {
		return nil
	}
	return s.exts.Stops()
}

// NamedStop is how one extension stopped.
type NamedStop = extension.NamedStop
