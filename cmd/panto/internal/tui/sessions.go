package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/picker"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/host"
)

// Other sessions: /fork and /resume switch the UI to another log. The
// session is closed and the other opened through Options.App, by the
// rule every front end follows (app.Switch: a session not recorded,
// which cannot be opened again, is closed only after).

// fork copies the path up to ref ("" the current leaf) into a new
// session and switches to it.
func (m *Model) fork(ref string) tea.Cmd {
	info := m.sess.Info()
	switch {
	case info.Path == "":
		m.say(transcript.Error, "/fork: "+host.ErrNotRecorded.Error())
		return nil
	case m.o.App == nil:
		m.say(transcript.Error, "/fork: this panto cannot switch sessions")
		return nil
	case m.busy != idle:
		m.say(transcript.Warning, "/fork: panto is busy; fork when the turn ends")
		return nil
	}
	a, sess, ctx := m.o.App, m.sess, m.ctx
	return m.switchTo(func() (string, func(Session) string, error) {
		f, err := a.Fork(ctx, sess, ref)
		if err != nil {
			return "", nil, fmt.Errorf("/fork: %w", err)
		}
		return f.Path, func(Session) string {
			return fmt.Sprintf("forked into a new session, log %s (the session left is %s: panto --resume %s)",
				shortPath(f.Path, m.o.CWD, m.o.Home), info.ID, treeview.Short(info.ID))
		}, nil
	})
}

// switchedMsg is a session switch's end.
type switchedMsg struct {
	sess Session
	// kept is set when nothing was closed (the target failed): sess is
	// the session still open.
	kept bool
	// err says what failed; with a sess not kept, the new log could not
	// be opened and the session left was opened again.
	err  error
	what string
}

// switchTo closes the session and opens another log in its place:
// target names it (and what to say of the session opened), or fails
// before anything is closed. When the log cannot be opened, the session
// left is opened again (app.Switch).
func (m *Model) switchTo(target func() (path string, what func(Session) string, err error)) tea.Cmd {
	return m.switchVia(m.o.App.Reopen, target)
}

// switchVia is switchTo with the sessions opened by reopen (app.Switch's
// open).
func (m *Model) switchVia(reopen func(context.Context, string) (Session, error), target func() (path string, what func(Session) string, err error)) tea.Cmd {
	old := m.sess
	m.sess = nil // what is typed meanwhile waits, as at the start
	if m.unsubscribe != nil {
		// What the session left says from now on (while it closes) is
		// not shown.
		m.unsubscribe()
		m.sub, m.unsubscribe = nil, nil
	}
	m.busy, m.busyWhat, m.busySince = commanding, "switching sessions", m.now()
	ctx := m.ctx
	return tea.Batch(m.ensureTick(), func() tea.Msg {
		path, what, err := target()
		if err != nil {
			return switchedMsg{sess: old, kept: true, err: err}
		}
		sw := app.Switch(ctx, old, path, reopen)
		switch {
		case sw.Kept:
			return switchedMsg{sess: old, kept: true, err: fmt.Errorf("opening %s: %w", path, sw.Err)}
		case sw.Session == nil:
			return switchedMsg{err: fmt.Errorf("opening %s: %w; reopening the session left failed too", path, sw.Err)}
		case sw.Err != nil:
			return switchedMsg{sess: sw.Session, err: fmt.Errorf("opening %s: %w (back in the session left)", path, sw.Err)}
		}
		said := what(sw.Session)
		if sw.CloseErr != nil {
			said += " (closing the session left: " + errText(sw.CloseErr) + ")"
		}
		return switchedMsg{sess: sw.Session, what: said}
	})
}

// switched takes the session opened in the old one's place.
func (m *Model) switched(msg switchedMsg) tea.Cmd {
	m.busy, m.busyWhat = idle, ""
	if msg.sess == nil {
		m.openErr = msg.err
		m.quitting = true
		return tea.Quit
	}
	if msg.kept {
		// Nothing was closed: the fork could not be written.
		m.sess = msg.sess
		m.subscribe()
		m.say(transcript.Error, errText(msg.err))
		return tea.Batch(m.readEvents(m.sub), m.next())
	}
	// The same log opened again (/reload): its conversation is in the
	// scrollback already, not printed twice.
	m.reprinting = m.last == nil || m.last.Info().Path != msg.sess.Info().Path || msg.sess.Info().Path == ""
	m.resetTranscript()
	m.status = status{cwd: m.status.cwd, branch: m.status.branch}
	// What the switch did is said once: after the conversation it drew,
	// in the place of "resumed: N messages" (it said so twice).
	m.switchSays = msg.what
	cmd := m.opened(openedMsg{sess: msg.sess})
	m.reprinting = true
	if msg.err != nil {
		m.say(transcript.Error, errText(msg.err))
	} else if m.switchSays != "" {
		m.say(transcript.Info, m.switchSays)
	}
	m.switchSays = ""
	return cmd
}

type sessionsMsg struct {
	list []SessionItem
	err  error
	// all: every directory's sessions (Ctrl-A in the picker).
	all bool
	// keep is the picker state a reload keeps (nil: a new picker).
	keep *resumePicker
}

// resumePicker is /resume: this directory's sessions, newest first.
type resumePicker struct {
	pk    *picker.Model
	items map[string]SessionItem
	// The picker's own keys (resume_picker.go): the scope, the text of
	// every message to filter on, a rename or a delete under way.
	resumeExtra
}

func (m *Model) resumeCmd(args string) tea.Cmd {
	if m.o.App == nil {
		m.say(transcript.Error, "/resume: this panto cannot switch sessions")
		return nil
	}
	a := m.o.App
	return func() tea.Msg {
		l, err := a.Sessions()
		return sessionsMsg{list: l, err: err}
	}
}

func (m *Model) sessionsLoaded(msg sessionsMsg) tea.Cmd {
	if msg.err != nil {
		m.say(transcript.Error, "/resume: "+errText(msg.err))
		return m.next()
	}
	if msg.keep != nil && m.ov != msg.keep {
		return nil // closed meanwhile
	}
	if msg.keep == nil && (m.ov != nil || len(m.asks) > 0) {
		return nil
	}
	current := ""
	if m.sess != nil {
		current = m.sess.Info().Path
	}
	rp := &resumePicker{items: map[string]SessionItem{}}
	if msg.keep != nil {
		rp.resumeExtra = msg.keep.resumeExtra
	}
	rp.all = msg.all
	var items []picker.Item
	for _, s := range msg.list {
		rp.items[s.Path] = s
		it := picker.Item{Value: s.Path, Title: treeview.Short(s.ID) + "  " + updated(s), Match: s.ID + " " + s.Name + " " + s.First}
		if s.Name != "" {
			it.Title += "  " + oneLine(s.Name, 40)
		}
		if msg.all && s.Cwd != "" {
			it.Title += "  " + shortPath(s.Cwd, "", m.o.Home)
		}
		if s.Err != nil {
			it.Desc = "unreadable: " + oneLine(errText(s.Err), 60)
		} else {
			it.Desc = fmt.Sprintf("%d msgs · %s", s.Messages, oneLine(cmp.Or(s.First, "(no message yet)"), 60))
		}
		if s.Path == current {
			it.Mark = "*"
		}
		items = append(items, it)
	}
	if len(items) == 0 && msg.keep == nil {
		m.say(transcript.Quiet, "/resume: no sessions here yet")
		return m.next()
	}
	title := "Sessions in " + m.status.cwd
	if msg.all {
		title = "Sessions of every directory"
	}
	rp.pk = picker.New(title, items)
	if msg.keep != nil {
		rp.pk.SetFilter(msg.keep.pk.Filter())
	}
	rp.pk.Hint = "type to filter (every message) · Enter switches · * this one · Ctrl-A every directory · Ctrl-R rename · Ctrl-D delete · Esc closes"
	rp.pk.ListShare = 60
	rp.pk.Preview = func(it picker.Item, w, h int) []string { return rp.preview(m.th, it.Value, w, h) }
	m.ov = rp
	rp.refilter()
	return rp.loadTexts(msg.list)
}

func (rp *resumePicker) page() bool    { return true }
func (rp *resumePicker) title() string { return "/resume" }

func (rp *resumePicker) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	if cmd, ok := rp.extraKey(m, k); ok {
		return cmd
	}
	before := rp.pk.Filter()
	act := rp.pk.Update(k)
	if rp.pk.Filter() != before {
		rp.refilter()
	}
	switch act {
	case picker.Cancel:
		return m.closeOverlay()
	case picker.Choose:
		it, _ := rp.pk.Selected()
		m.ov = nil
		m.list.Changed()
		s := rp.items[it.Value]
		switch {
		case s.Err != nil:
			m.say(transcript.Error, "/resume: "+errText(s.Err))
			return nil
		case m.sess != nil && s.Path == m.sess.Info().Path:
			m.say(transcript.Quiet, "already in that session")
			return nil
		case s.Cwd != "" && filepath.Clean(s.Cwd) != filepath.Clean(m.o.CWD):
			// Its tools would run here, under this directory's prompt.
			m.say(transcript.Info, fmt.Sprintf("that session is of %s: cd %s && panto --resume %s", s.Cwd, s.Cwd, treeview.Short(s.ID)))
			return nil
		case m.busy != idle:
			m.say(transcript.Warning, "/resume: panto is busy; switch when the turn ends")
			return nil
		}
		return m.switchTo(func() (string, func(Session) string, error) {
			if _, err := os.Lstat(s.Path); errors.Is(err, os.ErrNotExist) {
				// Gone since it was listed: keep the session open.
				return "", nil, fmt.Errorf("/resume: the session log %s no longer exists", s.Path)
			}
			return s.Path, func(sess Session) string {
				return fmt.Sprintf("resumed session %s (%d messages)", sess.Info().ID, len(sess.Messages()))
			}, nil
		})
	}
	return nil
}

func (rp *resumePicker) view(m *Model, width, height int) []string {
	out := rp.pk.View(m.th, width, height-1)
	for len(out) < height-1 {
		out = append(out, "")
	}
	return append(out, rp.footer(m, width))
}

// preview says what the session under the cursor holds. It is a log's
// (and its file name's): shown through termtext.
func (rp *resumePicker) preview(th *theme.Theme, path string, width, _ int) []string {
	s := rp.items[path]
	out := []string{th.Bold.Render("session " + termtext.Line(s.ID))}
	if s.Name != "" {
		out = append(out, th.Dim.Render("name   ")+termtext.Line(s.Name))
	}
	if s.Err != nil {
		return append(out, th.Error.Render(termtext.Line(errText(s.Err))))
	}
	out = append(out,
		th.Dim.Render("last   ")+updated(s),
		th.Dim.Render("msgs   ")+fmt.Sprint(s.Messages),
		th.Dim.Render("branch ")+fmt.Sprint(s.Branches))
	if len(s.Labels) > 0 {
		out = append(out, th.Dim.Render("labels ")+fmt.Sprint(len(s.Labels)))
	}
	out = append(out, th.Dim.Render("log    ")+termtext.Line(path), "", th.Dim.Render("first message:"))
	first := strings.ReplaceAll(termtext.Sanitize(cmp.Or(s.First, "(none yet)")), "\t", "    ")
	out = append(out, strings.Split(ansi.Wrap(first, max(10, width), ""), "\n")...)
	return out
}

// updated is when the session was last written, as the picker shows it.
func updated(s SessionItem) string { return s.Updated.Local().Format("2006-01-02 15:04") }

// reloader is an App that can read its config files again (/reload);
// *app.App is one.
type reloader interface{ Reload() error }

// reloadCmd is /reload: the config and prompt files read again and the
// session's own log opened again in its place, as a resume — every
// extension restarted, what changed recorded by the reconciliation — and
// a notice of what changed.
func (m *Model) reloadCmd() tea.Cmd {
	r, ok := m.o.App.(reloader)
	if !ok {
		m.say(transcript.Error, "/reload: this panto cannot reload")
		return nil
	}
	path, err := app.ReloadPath(m.sess)
	if err != nil {
		m.say(transcript.Error, errText(err))
		return nil
	}
	before := app.BeforeReload(m.sess)
	return m.switchTo(func() (string, func(Session) string, error) {
		if err := r.Reload(); err != nil {
			return "", nil, err
		}
		return path, func(s Session) string { return app.ReloadReport(before, s) }, nil
	})
}
