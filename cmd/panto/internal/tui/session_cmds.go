package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
)

// /new and /export: a new session in this directory, and the session
// written as HTML to a file.

// newSession is /new: the session is closed and a new one opened in
// its place, in the same directory with the same flags and extensions
// (app.Switch, with App.New opening the path "").
func (m *Model) newSession() tea.Cmd {
	switch {
	case m.o.App == nil:
		m.say(transcript.Error, "/new: this panto cannot switch sessions")
		return nil
	case m.busy != idle:
		m.say(transcript.Warning, "/new: panto is busy; start a new session when the turn ends")
		return nil
	}
	a := m.o.App
	left := m.sess.Info()
	open := func(ctx context.Context, path string) (Session, error) {
		if path == "" {
			return a.New(ctx)
		}
		return a.Reopen(ctx, path)
	}
	return m.switchVia(open, func() (string, func(Session) string, error) {
		return "", func(s Session) string {
			said := "a new session " + treeview.Short(s.Info().ID)
			if left.Path != "" {
				said += fmt.Sprintf(" (the session left is %s: panto --resume %s)", left.ID, treeview.Short(left.ID))
			}
			return said
		}, nil
	})
}

// exportedMsg is /export's end.
type exportedMsg struct {
	path string
	err  error
}

// exportCmd is /export [PATH].
func (m *Model) exportCmd(args string) tea.Cmd {
	switch {
	case m.sess == nil:
		m.say(transcript.Quiet, "the session is still starting: /export in a moment")
		return nil
	case m.o.App == nil:
		m.say(transcript.Error, "/export: this panto cannot export")
		return nil
	}
	a, s, ctx, dst := m.o.App, m.sess, m.ctx, strings.TrimSpace(args)
	return func() tea.Msg {
		p, err := a.Export(ctx, s, dst)
		return exportedMsg{path: p, err: err}
	}
}

func (m *Model) exported(msg exportedMsg) tea.Cmd {
	if msg.err != nil {
		m.say(transcript.Error, "/export: "+errText(msg.err))
		return nil
	}
	m.say(transcript.Info, "exported the session as HTML to "+msg.path)
	return nil
}

// nameCmd is /name [TEXT]: the session named in its log, or its name
// shown.
func (m *Model) nameCmd(args string) tea.Cmd {
	sess := m.sess
	text := strings.TrimSpace(args)
	return func() tea.Msg {
		if text == "" {
			name, err := sess.Name()
			switch {
			case err != nil:
				return namedMsg{err: err}
			case name == "":
				return namedMsg{said: "the session has no name: /name TEXT names it"}
			}
			return namedMsg{said: "the session is named " + strconv.Quote(name)}
		}
		name, err := sess.SetName(text)
		if err != nil {
			return namedMsg{err: err}
		}
		return namedMsg{said: "named the session " + strconv.Quote(name) + " (/resume and panto session list show it)"}
	}
}

// namedMsg is /name's end.
type namedMsg struct {
	said string
	err  error
}

func (m *Model) named(msg namedMsg) tea.Cmd {
	if msg.err != nil {
		m.say(transcript.Error, "/name: "+errText(msg.err))
		return nil
	}
	m.say(transcript.Info, termtext.Line(msg.said))
	return nil
}
