package tui

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/host/permissions"
	"github.com/panto-dev/panto/sessionlog"
)

// fakeSession is a Session whose turns follow a script. It records what
// it was asked.
type fakeSession struct {
	mu           sync.Mutex
	attachedSent [][]conversation.Block
	sent         []string
	turnCtx      []context.Context
	models       []string
	commands     []string
	// events is the session's event stream: what the tests and the
	// turns send; unread is what its first subscription gets first (what
	// Open said). done closes with Close: the subscriptions made before
	// end.
	events chan host.Event
	unread []host.Event
	done   chan struct{}
	msgs   []conversation.Message
	system []conversation.SystemText
	info   host.Info
	cmds   []extension.Command
	closed bool
	// busy is what Busy says.
	busy bool
	// onClose, when set, runs in Close (a session_end hook).
	onClose func()
	// turn scripts a turn: it sends its events on ch (and closes it).
	turn func(ctx context.Context, text string, ch chan<- host.Event)
	// perm is the permission state; its Mode "" means the session
	// decides no calls.
	perm sessionlog.Permissions
	// steered is what Steer was given and not taken back; steerable
	// says a turn takes it (otherwise Steer fails as the host's does).
	steered   []string
	steerable bool
	// extraTokens grows what ContextUsage says.
	extraTokens int
	// listed is the provider's list of models (nil: it has none, any
	// name is taken), configured the configured ones: SetModel checks
	// a name against them as the host does.
	listed, configured []string
	// name is what SetName recorded.
	name string
}

func newFake() *fakeSession {
	return &fakeSession{
		events: make(chan host.Event, 64),
		done:   make(chan struct{}),
		info:   host.Info{ID: "s1", Path: "/tmp/s1.jsonl", Provider: "echo", Model: "echo", Extensions: []string{"tools"}},
		turn:   echoTurn,
	}
}

// echoTurn answers "you said TEXT", streamed in two pieces.
func echoTurn(ctx context.Context, text string, ch chan<- host.Event) {
	ch <- host.TurnStart{Text: text}
	ch <- host.TextDelta{Text: "you said "}
	ch <- host.TextDelta{Text: "**" + text + "**"}
	ch <- host.Usage{Model: "echo"}
	ch <- host.Reply{Message: conversation.AssistantText("you said **" + text + "**"), Streamed: true}
	ch <- host.TurnEnd{}
}

// Turn runs the turn's script, which sends its events to the session's.
func (f *fakeSession) Turn(ctx context.Context, text string) error {
	return f.TurnWith(ctx, host.TurnInput{Text: text})
}

// TurnWith is Turn, the attached blocks kept (attachedSent).
func (f *fakeSession) TurnWith(ctx context.Context, in host.TurnInput) error {
	text := in.Text
	f.mu.Lock()
	f.attachedSent = append(f.attachedSent, in.Attached)
	f.sent = append(f.sent, text)
	f.turnCtx = append(f.turnCtx, ctx)
	f.mu.Unlock()
	go f.turn(ctx, text, f.events)
	return nil
}

func (f *fakeSession) Steer(text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.steerable {
		return host.ErrNoTurn
	}
	f.steered = append(f.steered, text)
	return nil
}

func (f *fakeSession) TakeSteered() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.steered
	f.steered = nil
	return out
}

// Subscribe forwards the session's events, what Open said first (to the
// first subscription), until ctx is done or the session closed.
func (f *fakeSession) Subscribe(ctx context.Context) <-chan host.Event {
	f.mu.Lock()
	first, done := f.unread, f.done
	f.unread = nil
	f.mu.Unlock()
	out := make(chan host.Event)
	go func() {
		defer close(out)
		send := func(ev host.Event) bool {
			select {
			case out <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for _, ev := range first {
			if !send(ev) {
				return
			}
		}
		for {
			select {
			case ev := <-f.events:
				if ctx.Err() != nil {
					f.events <- ev // for the subscription after this one
					return
				}
				if !send(ev) {
					return
				}
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return out
}

// Info is the session's info; a resumed one's Loaded counts its messages
// unless the test says otherwise.
func (f *fakeSession) Info() host.Info {
	i := f.info
	if i.Resumed && i.Loaded == 0 {
		i.Loaded = len(f.msgs)
	}
	return i
}
func (f *fakeSession) Commands() []extension.Command { return f.cmds }
func (f *fakeSession) RunCommand(ctx context.Context, name, args string) (string, error) {
	f.mu.Lock()
	f.commands = append(f.commands, name+" "+args)
	f.mu.Unlock()
	return "ran " + name, nil
}
func (f *fakeSession) Compact(ctx context.Context) (host.CompactResult, error) {
	return host.CompactResult{MessagesBefore: 10, MessagesAfter: 3}, nil
}
func (f *fakeSession) Models(context.Context) host.ModelList {
	f.mu.Lock()
	defer f.mu.Unlock()
	return host.ModelList{Provider: f.info.Provider, Current: f.info.Model, Configured: f.configured, Listed: f.listed}
}
func (f *fakeSession) SetModel(name string) error {
	if err := f.Models(context.Background()).Check(name); err != nil {
		return err
	}
	return f.ForceModel(name)
}
func (f *fakeSession) ForceModel(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.models = append(f.models, name)
	f.info.Model = name
	return nil
}
func (f *fakeSession) PermissionState() (sessionlog.Permissions, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.perm, "/tmp/t", f.perm.Mode != ""
}
func (f *fakeSession) SetPermissionMode(mode permissions.Mode) error {
	if _, err := permissions.ParseMode(string(mode)); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.perm.Mode = string(mode)
	return nil
}
func (f *fakeSession) ContextUsage() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return 1234 + f.extraTokens, 200000
}
func (f *fakeSession) Messages() []conversation.Message           { return f.msgs }
func (f *fakeSession) EffectiveSystem() []conversation.SystemText { return f.system }
func (f *fakeSession) Close(ctx context.Context) error {
	if f.onClose != nil {
		f.onClose()
	}
	// The subscriptions end; a test that opens the fake again (a
	// reopen) gets new ones.
	f.mu.Lock()
	close(f.done)
	f.done = make(chan struct{})
	f.mu.Unlock()
	f.closed = true
	return nil
}
func (f *fakeSession) Tree() (*sessionlog.Tree, error) { return nil, host.ErrNotRecorded }
func (f *fakeSession) MoveTo(context.Context, string, host.MoveOptions) (host.MoveResult, error) {
	return host.MoveResult{}, host.ErrNotRecorded
}
func (f *fakeSession) Label(string, string) (string, error) { return "", host.ErrNotRecorded }
func (f *fakeSession) SetName(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.info.Path == "" {
		return "", host.ErrNotRecorded
	}
	f.name = name
	return name, nil
}
func (f *fakeSession) Name() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.name, nil
}
func (f *fakeSession) PromptAt(string) ([]conversation.SystemText, error) {
	return nil, host.ErrNotRecorded
}
func (f *fakeSession) sentTexts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sent...)
}

func (f *fakeSession) MessageCount() int { return len(f.msgs) }

func (f *fakeSession) Busy() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.busy
}

func (f *fakeSession) setBusy(b bool) {
	f.mu.Lock()
	f.busy = b
	f.mu.Unlock()
}

// fakeApp is an App whose methods are the test's functions: open opens
// the session (nil: none opens), sessions lists the others, reopen opens
// one of them and fork writes a fork (nil: each fails).
type fakeApp struct {
	open     func(context.Context) (Session, error)
	sessions func() ([]SessionItem, error)
	reopen   func(context.Context, string) (Session, error)
	fork     func(context.Context, Session, string) (app.Forked, error)
	// newSess opens /new's session; export writes /export's file (nil:
	// each fails).
	newSess func(context.Context) (Session, error)
	// allSessions lists every directory's (nil: sessions).
	allSessions func() ([]SessionItem, error)
	export      func(context.Context, Session, string) (string, error)
}

func (a *fakeApp) AllSessions() ([]SessionItem, error) {
	if a.allSessions == nil {
		return a.Sessions()
	}
	return a.allSessions()
}

func (a *fakeApp) New(ctx context.Context) (Session, error) {
	if a.newSess == nil {
		return nil, errors.New("fakeApp: cannot start a new session")
	}
	return a.newSess(ctx)
}

func (a *fakeApp) Export(ctx context.Context, s Session, path string) (string, error) {
	if a.export == nil {
		return "", errors.New("fakeApp: cannot export")
	}
	return a.export(ctx, s, path)
}

var _ App = (*fakeApp)(nil)

func (a *fakeApp) Open(ctx context.Context) (Session, bool, error) {
	if a.open == nil {
		return nil, false, errors.New("fakeApp: no session")
	}
	s, err := a.open(ctx)
	return s, false, err
}

func (a *fakeApp) Sessions() ([]SessionItem, error) {
	if a.sessions == nil {
		return nil, errors.New("fakeApp: no sessions")
	}
	return a.sessions()
}

func (a *fakeApp) Reopen(ctx context.Context, path string) (Session, error) {
	if a.reopen == nil {
		return nil, errors.New("fakeApp: cannot reopen")
	}
	return a.reopen(ctx, path)
}

func (a *fakeApp) Fork(ctx context.Context, s Session, ref string) (app.Forked, error) {
	if a.fork == nil {
		return app.Forked{}, errors.New("fakeApp: cannot fork")
	}
	return a.fork(ctx, s, ref)
}

// appOf is the fake app of o, made when o has none.
func appOf(o *Options) *fakeApp {
	if o.App == nil {
		o.App = &fakeApp{}
	}
	return o.App.(*fakeApp)
}

// altScreen runs the UI on the alternate screen (config screen = "alt"):
// the tests of what panto's own scrolling shows.
func altScreen(o *Options) { o.AltScreen = true }

// fixedNow is the clock of the tests.
var fixedNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// harness drives a Model as the program would, but in the test's
// goroutine: Update is called here, commands run in goroutines and their
// messages come back on a channel that settle and wait read.
type harness struct {
	t     *testing.T
	m     *Model
	sess  *fakeSession
	now   time.Time
	msgs  chan tea.Msg
	quit  bool
	clear bool
	// scrollback is what the UI printed above itself, plain.
	scrollback []string
	// clipboard is what the UI last wrote to the terminal's clipboard
	// (OSC 52, tea.SetClipboard).
	clipboard string
}

func newHarness(t *testing.T, sess *fakeSession, opts ...func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, sess: sess, now: fixedNow, msgs: make(chan tea.Msg, 1024)}
	o := Options{CWD: t.TempDir(), Home: "/home/ann", Now: func() time.Time { return h.now }, NoColor: true}
	if sess != nil {
		appOf(&o).open = func(context.Context) (Session, error) { return sess, nil }
	}
	for _, f := range opts {
		f(&o)
	}
	h.m = New(context.Background(), o)
	h.m.printSettle = 5 * time.Millisecond // the harness draws no frame to wait for
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.exec(h.m.Init())
	if sess != nil {
		h.wait(func() bool { return h.m.sess != nil }, "the session opens")
	}
	h.settle()
	return h
}

// exec runs a command as the program does: in a goroutine, its message
// sent back.
func (h *harness) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go h.run(cmd)
}

// run runs a command here and delivers its message: a batch's commands
// at once, a sequence's one after the other, as the program does.
func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			h.exec(c)
		}
		return
	}
	if v := reflect.ValueOf(msg); v.IsValid() && v.Type().String() == "tea.sequenceMsg" {
		for _, c := range v.Convert(reflect.TypeFor[[]tea.Cmd]()).Interface().([]tea.Cmd) {
			h.run(c)
		}
		return
	}
	if msg != nil {
		h.msgs <- msg
	}
}

// send updates the model with msg, now.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	switch msg.(type) {
	case tea.QuitMsg:
		h.quit = true
		return
	}
	switch fmt.Sprintf("%T", msg) {
	case "tea.clearScreenMsg":
		h.clear = true
		return
	case "tea.printLineMessage":
		// What the program prints above itself: the scrollback.
		h.scrollback = append(h.scrollback, strings.Split(ansi.Strip(reflect.ValueOf(msg).Field(0).String()), "\n")...)
		return
	case "tea.setClipboardMsg":
		h.clipboard = fmt.Sprint(msg)
		return
	}
	_, cmd := h.m.Update(msg)
	h.exec(cmd)
}

// settle takes the messages that come until none comes for a moment.
func (h *harness) settle() {
	h.t.Helper()
	for {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-time.After(40 * time.Millisecond):
			return
		}
	}
}

// wait takes messages until cond holds.
func (h *harness) wait(cond func() bool, what string) {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			h.t.Fatalf("never: %s\nscreen:\n%s", what, h.screen())
		}
	}
}

func (h *harness) key(k tea.KeyPressMsg) { h.t.Helper(); h.send(k); h.settle() }

func (h *harness) typ(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	h.settle()
}

func (h *harness) enter() { h.key(tea.KeyPressMsg{Code: tea.KeyEnter}) }

// yes answers a confirm as a person does: y, then, a moment later, Enter.
func (h *harness) yes() {
	h.t.Helper()
	h.key(tea.KeyPressMsg{Code: 'y', Text: "y"})
	h.now = h.now.Add(100 * time.Millisecond)
	h.enter()
}

func ctrl(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl} }

// screen is the frame as plain text, lines right-trimmed; on the normal
// screen, below what the UI printed into the scrollback (the terminal
// shows the frame under it).
func (h *harness) screen() string {
	v := h.m.View()
	var lines []string
	content := ansi.Strip(v.Content)
	if !v.AltScreen && len(h.scrollback) > 0 {
		content = strings.Join(h.scrollback, "\n") + "\n" + content
	}
	for _, l := range strings.Split(content, "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.Join(lines, "\n")
}

func (h *harness) idle() {
	h.t.Helper()
	h.wait(func() bool { return h.m.busy == idle }, "the turn ends")
	h.settle()
}

var _ = require.New

// askEvent is a question event made by a test (a host.Question cannot
// be made outside package host).
type askEvent struct{ a asked }

func (askEvent) Kind() string   { return "question" }
func (e askEvent) asked() asked { return e.a }

// testAnswer is how a test question was answered.
type testAnswer struct {
	extension.Answer
	Dismissed bool
}

// newAsk returns a question event and the channel its answer comes on.
func newAsk(a asked) (host.Event, <-chan testAnswer) {
	ch := make(chan testAnswer, 1)
	// As the host's: a second answer is ignored.
	send := func(x testAnswer) {
		select {
		case ch <- x:
		default:
		}
	}
	a.Answer = func(x extension.Answer) { send(testAnswer{Answer: x}) }
	a.Dismiss = func() { send(testAnswer{Dismissed: true}) }
	return askEvent{a}, ch
}
