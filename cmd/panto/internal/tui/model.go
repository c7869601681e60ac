package tui

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/panto-dev/panto/cmd/panto/internal/attach"
	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/host"
)

// Options configure the UI.
type Options struct {
	// App opens the session and the others /resume and /fork switch to;
	// nil opens none (tests of what the UI shows before).
	App App
	// CWD and Home shorten paths; CWD is where @ completes files from.
	CWD, Home string
	// Version is panto's, for /session.
	Version string
	// Models are the configured models /model offers besides the one in
	// use: config's model (the run's default) first, then its models
	// list. The provider's list is added once fetched (Session.Models).
	Models []string
	// Prices price the tokens of the session's log, for /session (the
	// status line has each request's cost from its Usage event).
	Prices prices.Table
	// Theme is "auto" (ask the terminal), "light" or "dark".
	Theme string
	// NoColor drops colour (NO_COLOR): attributes stay.
	NoColor bool
	// AltScreen draws the UI on the terminal's alternate screen, the
	// whole transcript in the frame (config screen = "alt"); otherwise
	// the conversation goes into the terminal's scrollback as it settles
	// (screen.go).
	AltScreen bool
	// NoMouse leaves the mouse to the terminal; otherwise the UI takes
	// it: the wheel scrolls (on the alternate screen), a click on a
	// block folds or expands it (text is selected with Shift held).
	NoMouse bool
	// HistoryFile keeps the messages sent in this project; empty keeps
	// none.
	HistoryFile string
	// Notices are said first (what panto warned about before the UI
	// started).
	Notices []string
	// Input and Output are the terminal; nil means stdin and stdout.
	Input  io.Reader
	Output io.Writer
	// Now is the clock (tests fix it); nil means time.Now.
	Now func() time.Time
	// BranchSummary is config branch_summary: a /tree jump asks the
	// model for a summary of the branch left.
	BranchSummary bool
	// OnInterrupt, when set, is given a function that interrupts as
	// Ctrl-C does: panto calls it on SIGINT from outside.
	OnInterrupt func(func())
	// Keys is config's [keys]: action name to key (Actions).
	Keys map[string]string
	// Getenv is the environment ($VISUAL, $EDITOR, PATH and the display
	// for /copy); nil means os.Getenv.
	Getenv func(string) string
	// First is a message sent as soon as the session opens (panto
	// "TEXT").
	First string
}

// busy is what the session is doing for the UI.
type busy int

const (
	idle busy = iota
	turning
	compacting
	commanding
)

// Model is the UI's root model.
type Model struct {
	o   Options
	ctx context.Context

	op   *opener
	sess Session
	// last is the session opened last (sess is nil while a switch
	// runs): the one Shutdown closes.
	last    Session
	opening bool
	openErr error
	info    host.Info
	// listed is the models /model offers, the provider's list in it,
	// once fetched.
	listed *host.ModelList

	width, height int
	th            *theme.Theme
	themeFixed    bool

	ed     *composer
	list   *transcript.List
	comp   *completion
	ov     overlay
	asks   []*question
	status status
	// ctxUsage is the last request's usage, for /context.
	ctxUsage *lastUsage

	// sub is the session's subscription, where all its events come
	// from; unsubscribe ends it (the session is switched away from).
	sub         <-chan host.Event
	unsubscribe context.CancelFunc

	// The running work.
	busy      busy
	busyWhat  string
	busySince time.Time
	cancel    context.CancelFunc
	reply     *transcript.Reply
	tools     map[string]*transcript.Tool
	// retryItem is the retry notice the next retry updates;
	// compaction the running compaction's.
	retryItem, compaction *transcript.Notice
	// queued are messages sent while busy (or before the session
	// opened), sent in order after; steered the ones given to the
	// running turn (Session.Steer) and not delivered yet. Both show
	// above the editor, not in the transcript, until they are sent.
	queued  []queuedMsg
	steered []string
	// attached are the images that go with the next message (images.go).
	attached []attach.Image
	// printed is how many of the transcript's items went into the
	// scrollback (the normal screen, screen.go); printedAny says
	// something did, this run.
	printed    int
	printedAny bool
	// printQ is what waits to be printed while a print is under way
	// (printing).
	printQ   []string
	printing bool
	// printHeld holds prints until the program has drawn on the normal
	// screen at its size; holds counts the holds begun.
	printHeld bool
	holds     int
	// printSettle is how long a hold lasts (printSettleTime; the
	// tests' harness makes it short).
	printSettle time.Duration
	// switchSays is what a /resume or /fork switch did, said once;
	// reprinting is unset while the same log is opened again (/reload):
	// what it holds is in the scrollback already.
	switchSays string
	reprinting bool
	// profile is the terminal's colours, as the program found them.
	profile colorprofile.Profile
	// flushing is set while a streaming frame tick is pending;
	// ticking while the animation tick is.
	flushing, ticking bool
	frame             int

	// quitArmed is when Ctrl-C on an empty editor (or on a question) was
	// pressed: a second within quitWindow quits, whatever is up.
	quitArmed time.Time
	// typed is when a key (or a paste) last went to the screen rather
	// than to a question: a question takes keys only a typingPause after.
	typed time.Time
	// closing is set once the UI quits: a question that comes after is
	// dismissed unseen, wherever it is read (Shutdown, a stale reader).
	closing atomic.Bool
	// flash is a transient line in the activity bar.
	flash      string
	flashUntil time.Time
	quitting   bool

	// runs are the notice runs that keep notices (oldest first), and
	// noticeCount how many they keep in all.
	runs        []*transcript.NoticeRun
	noticeCount int

	prompts promptTracker
	// system is the run of prompt changes being added to, or nil.
	system *transcript.System

	files      []string
	filesAsked bool
	// historyBroken is set once the history file was refused: it is
	// said once, and not tried again.
	historyBroken bool

	// cache of the last frame's parts
	view viewCache
	// keys is [keys] applied.
	keys keymap

	// thinkingShown: Ctrl-T shows every reply's thinking whole.
	thinkingShown bool

	// shellContext are the shell commands run with ! (and their output)
	// since the last message: the next one takes them to the model.
	shellContext []string

	// execProcess runs a process with the terminal; nil is
	// tea.ExecProcess (tests run it directly).
	execProcess execFunc

	// unguarded leaves safeFrame out (tests of what the surfaces make
	// safe themselves).
	unguarded bool
}

// interruptMsg is SIGINT from outside: it acts as Ctrl-C.
type interruptMsg struct{}

// quitMsg is a signal that ends panto: the UI quits.
type quitMsg struct{}

type queuedMsg struct {
	text   string
	images []attach.Image
}

// quitWindow is how soon a second Ctrl-C on an empty editor quits.
const quitWindow = 2 * time.Second

// New returns the UI's model; Run runs it.
func New(ctx context.Context, o Options) *Model {
	if o.Now == nil {
		o.Now = time.Now
	}
	dark := true
	fixed := false
	switch o.Theme {
	case "light":
		dark, fixed = false, true
	case "dark":
		fixed = true
	}
	th := theme.New(dark, o.NoColor)
	m := &Model{
		o: o, ctx: ctx, th: th, themeFixed: fixed,
		ed:      newComposer(),
		list:    transcript.New(),
		tools:   map[string]*transcript.Tool{},
		opening: o.App != nil,
		width:   80, height: 24,
		prompts: promptTracker{cwd: o.CWD, home: o.Home},
		// Until the terminal's size came and a frame was drawn.
		printHeld: true, printSettle: printSettleTime, reprinting: true,
	}
	m.status.cwd = shortCWD(shortPath(o.CWD, "", o.Home))
	m.comp = newCompletion()
	if o.App != nil {
		m.op = startOpen(ctx, o.App)
	}
	m.list.Append(&transcript.Notice{Level: transcript.Quiet, Text: welcome(o.Version)})
	for _, n := range o.Notices {
		m.list.Append(&transcript.Notice{Level: transcript.Warning, Text: n})
	}
	var bad []string
	m.keys, bad = newKeymap(o.Keys)
	for _, b := range bad {
		m.list.Append(&transcript.Notice{Level: transcript.Warning, Text: b})
	}
	m.sendFirst()
	m.layout()
	return m
}

// welcome is the first line of every start: what panto this is, and the
// keys a newcomer needs first.
func welcome(version string) string {
	if version == "" {
		version = "dev"
	}
	return "panto " + version + " · /help · Esc stops a turn · Ctrl-O expands a block · Ctrl-D quits"
}

// openCmd waits for the session to open.
func (m *Model) openCmd() tea.Cmd {
	op := m.op
	if op == nil {
		return nil
	}
	return tea.Batch(m.ensureTick(), func() tea.Msg {
		<-op.done
		return openedMsg{sess: op.sess, err: op.err}
	})
}

// shortCWD keeps a long working directory to its last two names.
func shortCWD(p string) string {
	if len([]rune(p)) <= 32 {
		return p
	}
	parts := strings.Split(p, "/")
	if len(parts) > 2 {
		return "…/" + strings.Join(parts[len(parts)-2:], "/")
	}
	return p
}

// now is the model's clock.
func (m *Model) now() time.Time { return m.o.Now() }

// Init starts what the first frame does not wait for: the session, the
// history, the git branch, the terminal's background colour.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.openCmd(), m.loadHistoryCmd(), m.branchCmd()}
	if !m.themeFixed {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	page := m.onPage()
	cmd := m.update(msg)
	if _, sized := msg.(tea.WindowSizeMsg); sized || (page && !m.onPage()) {
		// Nothing is printed before the program drew on the normal
		// screen at its size: at the start, after a resize (the program
		// measures a print by the width it last drew at), and when a
		// page leaves the alternate screen (a print would land there,
		// and be lost).
		m.printHeld = true
		m.holds++
		n := m.holds
		cmd = tea.Batch(cmd, tea.Tick(m.printSettle, func(time.Time) tea.Msg { return printReleaseMsg{n} }))
	}
	if c := m.commit(); c != nil {
		cmd = tea.Sequence(c, cmd)
	}
	return m, cmd
}

// printSettle is how long prints wait for the program to draw on the
// normal screen.
const printSettleTime = 150 * time.Millisecond

// printReleaseMsg ends the hold it was sent for, unless a later one
// began.
type printReleaseMsg struct{ hold int }

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 6)
		m.layout()
		return nil
	case tea.ColorProfileMsg:
		m.profile = msg.Profile
		return nil
	case tea.BackgroundColorMsg:
		if !m.themeFixed {
			m.setTheme(theme.IsDarkColor(msg.Color))
		}
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseWheelMsg:
		return m.wheel(msg)
	case tea.MouseClickMsg:
		return m.click(msg)
	case tea.PasteMsg:
		return m.pasteMsg(msg.Content)
	case clipImageMsg:
		return m.clipImage(msg)
	case openedMsg:
		return m.opened(msg)
	case eventsMsg:
		return m.events(msg)
	case historyMsg:
		m.historyLoaded(msg)
		return nil
	case branchMsg:
		m.status.branch = string(msg)
		return nil
	case usageMsg:
		m.status.ctxTokens, m.status.ctxWindow = msg.tokens, msg.window
		return nil
	case sessionMsg:
		m.add(&transcript.Text{Title: "/session", Body: msg.text})
		return nil
	case filesMsg:
		m.files = msg.files
		m.refreshCompletion()
		return nil
	case commandDoneMsg:
		return m.commandDone(msg)
	case modelListMsg:
		m.modelList(msg)
		return nil
	case treeLoadedMsg:
		return m.treeLoaded(msg)
	case promptAtMsg:
		return m.promptAt(msg)
	case sessionsMsg:
		return m.sessionsLoaded(msg)
	case switchedMsg:
		return m.switched(msg)
	case flushMsg:
		return m.flush()
	case printedMsg:
		m.printing = false
		return m.printNext()
	case printReleaseMsg:
		if msg.hold == m.holds {
			m.printHeld = false
		}
		return m.printNext()
	case tickMsg:
		return m.tick()
	case quitMsg:
		return m.quit()
	case interruptMsg:
		return m.key(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	case questionTickMsg:
		return m.questionTick()
	case graceMsg:
		return m.graceOver()
	case tea.ResumeMsg:
		return nil
	}
	return m.keysMsg(msg)
}

// layout sizes the components for the screen.
func (m *Model) layout() {
	m.ed.setWidth(m.width)
	m.ed.setMaxHeight(min(8, max(1, m.height/3)))
	m.list.Changed()
}

// setTheme switches to a dark or light theme; every render is redone.
func (m *Model) setTheme(dark bool) {
	if m.th.Dark == dark {
		return
	}
	m.th = theme.New(dark, m.o.NoColor)
	m.list.Changed()
}

// ctxFor is what the transcript renders with.
func (m *Model) ctxFor() transcript.Ctx {
	return transcript.Ctx{Width: m.width, Theme: m.th, Now: m.now(), Frame: m.frame}
}

// say adds a notice to the transcript.
func (m *Model) say(level transcript.Level, text string) *transcript.Notice {
	n := &transcript.Notice{Level: level, Text: text}
	m.add(n)
	return n
}

// add appends an item; it ends a run of prompt changes.
func (m *Model) add(it transcript.Item) {
	if _, ok := it.(*transcript.System); !ok {
		m.system = nil
	}
	if r, ok := it.(*transcript.Reply); ok && m.thinkingShown {
		r.SetExpanded(true) // Ctrl-T
	}
	m.list.Append(it)
}

// setFlash shows a line in the activity bar for a while.
func (m *Model) setFlash(s string, d time.Duration) tea.Cmd {
	m.flash, m.flashUntil = s, m.now().Add(d)
	return m.ensureTick()
}

// Quitting reports whether the UI is quitting.
func (m *Model) Quitting() bool { return m.quitting }

// quit ends the UI: the questions up are dismissed (none shows after),
// a running turn is interrupted.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.closing.Store(true)
	m.dismissAll()
	if m.cancel != nil {
		m.cancel()
	}
	return tea.Quit
}

// errText is an error for a line: the host wraps causes in parentheses
// that say the same twice.
func errText(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if errors.Is(err, context.Canceled) {
		s = strings.ReplaceAll(s, ": context canceled", "")
	}
	return s
}
