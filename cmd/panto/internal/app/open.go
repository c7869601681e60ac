package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/host/permissions"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// Session is a running session as the front ends drive it. *host.Session
// is one; a front end's tests fake it. App hands every front end this
// (Open, Reopen), so an interface of the app a front end defines for its
// tests (tui.App) is implemented by *App as it is.
type Session interface {
	// Subscribe is where every event comes from, Open's first (the
	// first subscription); Turn starts a turn whose events, TurnEnd
	// last, come there.
	Subscribe(ctx context.Context) <-chan host.Event
	Turn(ctx context.Context, text string) error
	// Steer gives the running turn a message, read before its next
	// request (host.ErrNoTurn when none runs); TakeSteered takes back
	// what was not delivered yet.
	Steer(text string) error
	TakeSteered() []string
	Info() host.Info
	Commands() []extension.Command
	RunCommand(ctx context.Context, name, args string) (string, error)
	Compact(ctx context.Context) (host.CompactResult, error)
	// SetModel refuses a name neither configured nor in the provider's
	// list (host.UnknownModelError); ForceModel takes any; Models is
	// what /model offers (it may fetch the provider's list: call it off
	// a UI's thread).
	SetModel(name string) error
	ForceModel(name string) error
	Models(ctx context.Context) host.ModelList
	ContextUsage() (tokens, window int)
	Messages() []conversation.Message
	MessageCount() int
	// Busy says a turn, move, compaction or model change runs: after an
	// Overflow, whether the TurnEnd awaited was among the events missed.
	Busy() bool
	EffectiveSystem() []conversation.SystemText
	Close(ctx context.Context) error

	// The session tree.
	Tree() (*sessionlog.Tree, error)
	MoveTo(ctx context.Context, ref string, opt host.MoveOptions) (host.MoveResult, error)
	Label(ref, text string) (string, error)
	// SetName names the session in its log ("" removes the name): /name;
	// Name is the name.
	SetName(name string) (string, error)
	Name() (string, error)
	PromptAt(ref string) ([]conversation.SystemText, error)

	// The permission policy of the tool calls (/permissions, Shift+Tab).
	PermissionState() (st sessionlog.Permissions, tmpDir string, ok bool)
	SetPermissionMode(mode permissions.Mode) error
}

var _ Session = (*host.Session)(nil)

// Prepare readies the session run the flags ask for, and does
// everything that can fail before a log is written or a front end takes
// the terminal: it tells the config's notices (Env.Notify), picks the
// log (new, --session, -c, --resume; an unreadable log passed over is
// told), checks --from against it, builds the provider and finds the
// extensions (one that may not run is told). interactive says the front
// end answers the extensions' questions (host.Config.Interactive).
// Call it once, before Open.
func (a *App) Prepare(interactive bool) error {
	a.tellStart()
	path, id, err := a.store.Pick(a.flags.Log, time.Now())
	if errors.Is(err, ErrNothingToContinue) && a.flags.Log.From == "" {
		// -c where no session was ever started: start one, as pi does.
		path, id = NewPath(a.dirs.SessionDir(), time.Now())
		a.env.notify(fmt.Sprintf("no session to continue in %s: starting a new one", a.dirs.CWD))
		err = nil
	}
	if err != nil {
		return err
	}
	if err := checkFrom(a.flags.Log.From, path, id); err != nil {
		return err
	}
	prov, err := a.newProvider()
	if err != nil {
		return err
	}
	specs, err := a.extensionSpecs()
	if err != nil {
		return err
	}
	a.path, a.id, a.prov, a.specs, a.interactive, a.prepared = path, id, prov, specs, interactive, true
	return nil
}

// checkFrom checks --from against the log it names an entry of, before
// the session opens: a move that would fail records nothing (no
// lifecycle entry, no re-seed, no new log).
func checkFrom(from, path, id string) error {
	if from == "" {
		return nil
	}
	if path == "" || id != "" {
		return usageErrorf("--from %s: name the session to continue (--session FILE, -c or --resume ID)", from)
	}
	tree, err := sessionlog.Scan(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--from %s: %s does not exist: --from continues a recorded session", from, path)
	}
	if err != nil {
		return fmt.Errorf("--from %s: %w", from, err)
	}
	if _, err := host.CheckMove(tree, from); err != nil {
		return fmt.Errorf("--from %s: %w", from, err)
	}
	return nil
}

// open opens the session recorded in l, as Prepare readied it.
func (a *App) open(ctx context.Context, l host.Log) (Session, error) {
	if !a.prepared {
		return nil, errors.New("app: Open before Prepare")
	}
	cfg := a.HostConfig(l, a.specs, a.prov)
	cfg.Interactive = a.interactive
	s, err := host.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Open opens the session Prepare readied: the log picked, and with
// --from moved to that entry. moved says it moved (its Moved event
// follows Opened on the first subscription); an entry that is the leaf
// already is no move. Subscribe to the session right after: the first
// subscription gets everything since the start began.
func (a *App) Open(ctx context.Context) (s Session, moved bool, err error) {
	s, err = a.open(ctx, host.Log{Path: a.path, ID: a.id})
	if err != nil || a.flags.Log.From == "" {
		return s, false, err
	}
	// --from ID: continue from that entry, as a new branch. It never
	// writes a branch summary.
	_, err = s.MoveTo(ctx, a.flags.Log.From, host.MoveOptions{})
	if err != nil && !errors.Is(err, host.ErrAlreadyThere) {
		s.Close(ctx)
		return nil, false, fmt.Errorf("--from %s: %w", a.flags.Log.From, err)
	}
	return s, err == nil, nil
}

// Reopen opens the log at path as a resume, with the flags and
// extensions of the session Prepare readied: what /resume and /fork
// switch to (Switch). A log that is gone (moved or deleted since it was
// listed) is refused: opening it would start a new session there.
func (a *App) Reopen(ctx context.Context, path string) (Session, error) {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the session log %s no longer exists", path)
	} else if err != nil {
		return nil, err
	}
	return a.open(ctx, host.Log{Path: path})
}

// Sessions are the working directory's sessions, newest first
// (Store.List): what /resume offers.
func (a *App) Sessions() ([]SessionItem, error) { return a.store.List() }

// OpenReadOnly opens, in memory, the session a run would start — the
// prompt files and flags, the extensions, nothing recorded — or with
// path, the one resuming that log would make, without writing to it
// (panto prompt). It has no provider: it runs no turn.
func (a *App) OpenReadOnly(ctx context.Context, path string) (*host.Session, error) {
	specs, err := a.extensionSpecs()
	if err != nil {
		return nil, err
	}
	log := host.Log{}
	if path != "" {
		log = host.Log{Path: path, ReadOnly: true}
	}
	cfg := a.HostConfig(log, specs, nil)
	cfg.MaxProcs = nil
	return host.Open(ctx, cfg)
}

// OpenCopy opens a copy of the log at path as OpenReadOnly opens a log,
// but writable: what the session records (a move, the sections kept
// current on the new path) goes to the copy, in a temporary directory
// that done removes. panto request --at ID --next moves there, as a
// continuation would, and shows the request that follows.
func (a *App) OpenCopy(ctx context.Context, path string) (sess *host.Session, done func(), err error) {
	dir, err := os.MkdirTemp("", "panto-copy-")
	if err != nil {
		return nil, nil, fmt.Errorf("copy session log %s: %w", path, err)
	}
	done = func() { os.RemoveAll(dir) }
	data, err := os.ReadFile(path)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, filepath.Base(path)), data, 0o600)
	}
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("copy session log %s: %w", path, err)
	}
	specs, err := a.extensionSpecs()
	if err != nil {
		done()
		return nil, nil, err
	}
	cfg := a.HostConfig(host.Log{Path: filepath.Join(dir, filepath.Base(path))}, specs, nil)
	cfg.MaxProcs = nil
	if sess, err = host.Open(ctx, cfg); err != nil {
		done()
		return nil, nil, err
	}
	return sess, done, nil
}

// Switched is what Switch did.
type Switched struct {
	// Session is the session in use now: the one opened at the path; the
	// one left, opened again, when that failed; the one left itself when
	// nothing was closed (Kept); nil when the one left could not be
	// opened again either (then the front end has none).
	Session Session
	// Kept says nothing was closed: the target could not be opened, and
	// the session left (one not recorded) is still open.
	Kept bool
	// Err is why the log at the path could not be opened; BackErr why
	// the session left could not be opened again after it (Session is
	// nil).
	Err, BackErr error
	// CloseErr is why closing the session left failed; the switch went
	// on.
	CloseErr error
}

// Switch closes from and opens the log at path in its place with open
// (App.Reopen, or a test's): /resume and /fork in every front end. The
// extensions see session_end, then session_start. A session not recorded
// cannot be opened again, so it is closed only once the other has
// opened; a recorded one is closed first (its log's lock released), and
// opened again when path fails, so the front end keeps a session.
func Switch(ctx context.Context, from Session, path string, open func(context.Context, string) (Session, error)) Switched {
	left := from.Info().Path
	if left == "" {
		s, err := open(ctx, path)
		if err != nil {
			return Switched{Session: from, Kept: true, Err: err}
		}
		return Switched{Session: s, CloseErr: from.Close(ctx)}
	}
	closeErr := from.Close(ctx)
	s, err := open(ctx, path)
	if err == nil {
		return Switched{Session: s, CloseErr: closeErr}
	}
	back, berr := open(ctx, left)
	if berr != nil {
		return Switched{Err: err, BackErr: berr, CloseErr: closeErr}
	}
	return Switched{Session: back, Err: err, CloseErr: closeErr}
}

// Forked is a fork written: a new session's log.
type Forked struct {
	// Path is the new log, beside the one forked.
	Path string
	// Header is its header: its id, and the session and entry it was
	// forked from.
	Header sessionlog.Header
}

// Fork copies the path of s's log up to the entry ref names (an id or
// a unique prefix; "" the current leaf) into a new session's log beside
// it: /fork in every front end. A fork at a reply holds the results of
// its tool calls (treeview.ContinueAt). Switch to it to go on there.
func (a *App) Fork(ctx context.Context, s Session, ref string) (Forked, error) {
	info := s.Info()
	if info.Path == "" {
		return Forked{}, host.ErrNotRecorded
	}
	if t, err := s.Tree(); err == nil && ref != "" {
		if full, err := t.Resolve(ref); err == nil {
			ref = treeview.ContinueAt(t, full)
		}
	}
	dst, id := NewPath(filepath.Dir(info.Path), time.Now())
	h, err := host.ForkContext(ctx, info.Path, ref, dst, id)
	if err != nil {
		return Forked{}, err
	}
	return Forked{Path: dst, Header: h}, nil
}

// Jump is the one rule of where a jump to the entry ref (an id or a
// unique prefix of one, in t) goes and what it hands back, for every
// front end (/tree ID, the UI's navigator, an ACP client's): past a
// reply's tool results; on a message of the user's, to before it — it is
// asked again — handing back what the user typed in it
// (conversation.Message.Typed: without what panto added) to send as it
// was or changed; retype is "" on any other entry. See treeview.Jump.
func Jump(t *sessionlog.Tree, ref string) (to, retype string, err error) {
	id, err := t.Resolve(ref)
	if err != nil {
		return "", "", err
	}
	to, retype = treeview.Jump(t, id)
	return to, retype, nil
}

// ForkLog copies the path of the log at src up to the entry at (an id or
// a unique prefix; "" its leaf) into a new session's log at dst, whole or
// not at all, with the session id id (panto session fork; NewPath names
// one beside src). What a fork killed outright left in dst's folder (never
// a log: see host.Fork) is removed first.
func ForkLog(ctx context.Context, src, at, dst, id string) (sessionlog.Header, error) {
	_, _ = atomicfile.RemoveStale(filepath.Dir(dst))
	return host.ForkContext(ctx, src, at, dst, id)
}
