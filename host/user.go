package host

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/rules"
)

// What extensions ask the user, and tell them. A front end that can ask
// (Config.Interactive) gets a Question event and answers it; without
// one, a confirm gets Config.ConfirmDefault when set, and every other
// question fails at once with ErrNoUser: panto never waits on a user who
// is not there. Once Close has begun, every question fails at once with
// ErrClosing and those on the screen are withdrawn, so a session always
// closes in bounded time whatever its extensions ask. (The extension
// host adds the other bounds: one question per extension on the screen,
// a short queue, a hook deadline that stops for a few questions only.)
//
// What a Question carries is the extension's text exactly as it sent it
// (valid UTF-8, nothing else is changed): a front end sanitizes it for
// its terminal.
//
// Notices are bounded per extension: noticeBurst at once, then
// noticeRate a second; the ones over that are dropped and counted, and
// a notice of panto's says how many, at most once a second. A status
// segment replaces the one queued with its key, and an extension has at
// most maxStatusKeys segments.

// The errors an extension's question can end with.
var (
	ErrNoUser           = extension.ErrNoUser
	ErrDismissed        = extension.ErrDismissed
	ErrNoAnswer         = extension.ErrNoAnswer
	ErrTooManyQuestions = extension.ErrTooManyQuestions
	ErrClosing          = extension.ErrClosing
)

// Question is an extension's question to the user: a confirm (yes or
// no), a select (one of Options) or an input (a line of text). Answer it
// once, with Answer (or Dismiss); it is withdrawn — a QuestionClosed
// event says so — when its deadline passes, the extension stops waiting
// or the session closes. Its texts are the extension's, unchanged:
// sanitize them before they reach a terminal.
type Question struct {
	ID int64
	By string
	// Type is confirm, select or input.
	Type extension.QuestionKind
	// Title and Message are what to ask; Options a select's choices;
	// Placeholder an input's hint.
	Title, Message string
	Options        []string
	Placeholder    string
	// Highlight are parts of Message the extension marks as what the
	// question is about (the part of a command a guard matched); a front
	// end shows them highlighted wherever they occur.
	Highlight []string
	// Deadline is when it stops waiting.
	Deadline time.Time
	// ToolCallID is the tool call the question is about, when the
	// extension asked while checking or running that call alone (a guard
	// before bash runs; extension.Question.ToolCall); empty otherwise.
	ToolCallID string
	// Permission, when set, marks panto's own question of whether a tool
	// call may run: Options is a select of these choices, in this order,
	// each of its kind (an ACP client shows it as its permission dialog).
	Permission []PermissionKind

	answer chan<- answer
}

// PermissionKind is what a choice of a permission question does, in the
// terms of ACP's permission options.
type PermissionKind string

// The kinds of permission choices.
const (
	AllowOnce    PermissionKind = "allow_once"
	AllowAlways  PermissionKind = "allow_always"
	RejectOnce   PermissionKind = "reject_once"
	RejectAlways PermissionKind = "reject_always"
)

type answer struct {
	a         extension.Answer
	dismissed bool
	byUser    bool // dismissed by the user (DismissByUser)
	noUser    bool
}

// Answer answers a confirm (Yes), a select (Index) or an input (Text).
// A second answer, or one after the question was withdrawn, is ignored.
func (q Question) Answer(a extension.Answer) { q.send(answer{a: a}) }

// Dismiss closes the question without answering it, for a front end
// that closes it without the user (it is quitting, or asks nobody
// between turns).
func (q Question) Dismiss() { q.send(answer{dismissed: true}) }

// DismissByUser closes the question without answering it because the
// user said so (Esc, an empty line): the extension gets ErrDismissed, as
// with Dismiss, and when the user dismisses several of one extension's
// questions in a row, panto stops showing its questions (mute.go).
func (q Question) DismissByUser() { q.send(answer{dismissed: true, byUser: true}) }

// NoUser closes the question as one nobody can answer here (a front
// end that cannot show a select or an input): the extension gets
// ErrNoUser, as in print mode.
func (q Question) NoUser() { q.send(answer{noUser: true}) }

func (q Question) send(a answer) {
	select {
	case q.answer <- a:
	default:
	}
}

// QuestionClosed says a question was withdrawn before it was answered:
// its deadline passed, the extension stopped waiting, or the session is
// closing. Take it off the screen.
type QuestionClosed struct {
	ID  int64
	Err error
}

// Status is an extension's status segment: Text empty clears it.
type Status struct {
	By, Key, Text string
}

var questionIDs atomic.Int64

// ask puts an extension's question to the user (see Question).
func (s *Session) ask(ctx context.Context, by string, q extension.Question) (extension.Answer, error) {
	return s.askWith(ctx, by, q, nil)
}

// askWith is ask of a question whose choices are of the kinds given
// (panto's permission questions; nil for the others).
func (s *Session) askWith(ctx context.Context, by string, q extension.Question, kinds []PermissionKind) (extension.Answer, error) {
	closing, ok := s.asks.enter()
	if !ok {
		return extension.Answer{}, ErrClosing
	}
	defer s.asks.leave()
	if !s.interactive.Load() {
		if q.Kind == extension.AskConfirm && s.confirm != "" {
			return extension.Answer{Yes: s.confirm == "yes"}, nil
		}
		return extension.Answer{}, ErrNoUser
	}
	if s.mutes.muted(by) {
		return extension.Answer{}, errMuted(by)
	}
	ctx, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	ch := make(chan answer, 1)
	ev := Question{ID: questionIDs.Add(1), By: by, Type: q.Kind, Title: q.Title, Message: q.Message,
		Options: q.Options, Placeholder: q.Placeholder, Highlight: q.Highlight, ToolCallID: q.ToolCall, Permission: kinds, answer: ch}
	if d, ok := ctx.Deadline(); ok {
		ev.Deadline = d
	}
	s.emit(ev)
	select {
	case a := <-ch:
		switch {
		case a.dismissed:
			if a.byUser && s.mutes.dismissed(by, time.Now()) {
				s.notice(NoticeWarning, mutedNotice(by))
			}
			return extension.Answer{}, ErrDismissed
		case a.noUser:
			return extension.Answer{}, ErrNoUser
		}
		s.mutes.answered(by)
		return a.a, nil
	case <-ctx.Done():
		err := fmt.Errorf("%w (%v)", ErrNoAnswer, context.Cause(ctx))
		s.emit(QuestionClosed{ID: ev.ID, Err: err})
		return extension.Answer{}, err
	case <-closing:
		s.emit(QuestionClosed{ID: ev.ID, Err: ErrClosing})
		return extension.Answer{}, ErrClosing
	}
}

// askGate is closed when the session starts to close: no question is
// asked from then on. Its zero value is open.
type askGate struct {
	mu    sync.Mutex
	ch    chan struct{} // closed by close
	shut  bool
	n     int        // Asks under way
	empty *sync.Cond // n became 0 after shut
}

func (g *askGate) chLocked() chan struct{} {
	if g.ch == nil {
		g.ch = make(chan struct{})
		g.empty = sync.NewCond(&g.mu)
	}
	return g.ch
}

// enter counts an Ask in and returns the channel close closes; false
// once the session is closing.
func (g *askGate) enter() (<-chan struct{}, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch := g.chLocked()
	if g.shut {
		return nil, false
	}
	g.n++
	return ch, true
}

// leave counts an Ask out.
func (g *askGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	if g.n == 0 && g.shut {
		g.empty.Broadcast()
	}
}

// close refuses every question from now on, withdraws those asked, and
// waits until their Asks have returned (at once: each has been told),
// so that their QuestionClosed events precede the end of the events.
func (g *askGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch := g.chLocked()
	if !g.shut {
		g.shut = true
		close(ch)
	}
	for g.n > 0 {
		g.empty.Wait()
	}
}

// notify shows an extension's notice.
// A level other than info, warning or error is info (rules.NoticeLevel,
// as sdk/sdktest shows it).
func (s *Session) notify(by, level, text string) {
	l := NoticeLevel(rules.NoticeLevel(level))
	if !s.told.allow(by, time.Now()) {
		if s.told.dropped(by) {
			time.AfterFunc(noticeFlush, func() { s.tellDropped(by) })
		}
		return
	}
	s.emit(Notice{Level: l, Text: text, By: by})
}

// tellDropped says how many of by's notices were dropped since it last
// said so.
func (s *Session) tellDropped(by string) {
	if n := s.told.takeDropped(by); n > 0 {
		s.notice(NoticeWarning, fmt.Sprintf("%d notices from %s dropped (an extension's notices are shown %d at once, then %d a second)", n, by, noticeBurst, noticeRate))
	}
}

// tellAllDropped says, for each extension, how many of its notices were
// dropped and not told yet: the session is closing, its events end.
func (s *Session) tellAllDropped() {
	s.told.mu.Lock()
	var names []string
	for by, t := range s.told.by {
		if t.drops > 0 {
			names = append(names, by)
		}
	}
	s.told.mu.Unlock()
	slices.Sort(names)
	for _, by := range names {
		s.tellDropped(by)
	}
}

// setStatus sets an extension's status segment. A segment beyond an
// extension's maxStatusKeys is not shown.
func (s *Session) setStatus(by, key, text string) {
	if !s.told.statusKey(by, key, text != "") {
		return
	}
	s.emit(Status{By: by, Key: key, Text: text})
}

// How many notices of one extension are shown: noticeBurst at once, then
// noticeRate a second; the drops are told noticeFlush after the first.
// maxStatusKeys is how many status segments one extension may have.
const (
	noticeBurst   = 20
	noticeRate    = 5
	noticeFlush   = time.Second
	maxStatusKeys = 8
)

// notices is what the session told the user for each extension: a token
// bucket of notices, the count of those dropped, and the status keys
// set. Its zero value is ready.
type notices struct {
	mu sync.Mutex
	by map[string]*told
}

type told struct {
	tokens  float64
	last    time.Time
	drops   int
	telling bool // a tellDropped is scheduled
	status  map[string]bool
}

func (n *notices) of(by string) *told {
	if n.by == nil {
		n.by = map[string]*told{}
	}
	t := n.by[by]
	if t == nil {
		t = &told{tokens: noticeBurst}
		n.by[by] = t
	}
	return t
}

// allow takes a token from by's bucket at now, if it has one.
func (n *notices) allow(by string, now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.of(by)
	if !t.last.IsZero() {
		t.tokens = min(noticeBurst, t.tokens+now.Sub(t.last).Seconds()*noticeRate)
	}
	t.last = now
	if t.tokens < 1 {
		return false
	}
	t.tokens--
	return true
}

// dropped counts one dropped notice of by's; true when the drops are to
// be told (no tellDropped is scheduled yet).
func (n *notices) dropped(by string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.of(by)
	t.drops++
	if t.telling {
		return false
	}
	t.telling = true
	return true
}

// takeDropped returns by's drops not yet told, and zeroes them.
func (n *notices) takeDropped(by string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.of(by)
	d := t.drops
	t.drops, t.telling = 0, false
	return d
}

// statusKey reports whether by may set (or clear) its segment key.
func (n *notices) statusKey(by, key string, set bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.of(by)
	if t.status == nil {
		t.status = map[string]bool{}
	}
	switch {
	case !set:
		delete(t.status, key)
	case !t.status[key] && len(t.status) >= maxStatusKeys:
		return false
	default:
		t.status[key] = true
	}
	return true
}
