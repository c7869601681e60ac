package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
)

// The commands and keys added beside the core ones (issue 20's "keys
// and commands people reach for"), each in its own file: /copy
// (copy.go), Ctrl-G (external_editor.go), !cmd (shell.go), /new, /name
// and /export (session_cmds.go). keysBuiltin and keysMsg are their one
// hook each into runBuiltin and update.

// keysBuiltin runs the builtins of those files; ok is false for any
// other name.
func (m *Model) keysBuiltin(name, args string) (cmd tea.Cmd, ok bool) {
	switch name {
	case "copy":
		return m.copyCmd(args), true
	case "new":
		return m.newSession(), true
	case "export":
		return m.exportCmd(args), true
	case "name":
		return m.nameCmd(args), true
	}
	return nil, false
}

// actionKey runs the key bound to one of those files' actions; ok is
// false for any other key.
func (m *Model) actionKey(ks string) (cmd tea.Cmd, ok bool) {
	switch ks {
	case "ctrl+g":
		return m.externalEditor(), true
	case "ctrl+t":
		return m.toggleThinking(), true
	}
	return nil, false
}

// keysMsg takes the messages of those files' commands.
func (m *Model) keysMsg(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case copiedMsg:
		return m.copied(msg)
	case editedMsg:
		return m.edited(msg)
	case shellDoneMsg:
		return m.shellDone(msg)
	case exportedMsg:
		return m.exported(msg)
	case namedMsg:
		return m.named(msg)
	case searchTextsMsg:
		if m.ov == msg.rp {
			msg.rp.texts = msg.texts
			msg.rp.refilter()
		}
		return nil
	case resumeDoneMsg:
		return m.resumeDone(msg)
	}
	return nil
}

// sendFirst queues Options.First (panto "TEXT") as typed before the
// session opened: it is sent (or, a /command, run) once it has.
func (m *Model) sendFirst() {
	text := strings.TrimSpace(m.o.First)
	if text == "" {
		return
	}
	m.ed.hist.Add(text)
	if c, ok := app.ParseCommand(text); ok {
		m.command(c.Name, c.Args)
		return
	}
	images, err := m.takeImages(text)
	if err != nil {
		m.ed.set(text)
		m.say(transcript.Error, "not sent: "+err.Error())
		return
	}
	m.send(text, images) // the session is not open yet: it waits its turn
}

// toggleThinking is Ctrl-T: every reply's thinking shown whole, the
// replies to come too, or folded again to its one line.
func (m *Model) toggleThinking() tea.Cmd {
	m.thinkingShown = !m.thinkingShown
	for _, it := range m.list.Items() {
		if r, ok := it.(*transcript.Reply); ok && r.Foldable() {
			r.SetExpanded(m.thinkingShown)
		}
	}
	m.list.Changed()
	if m.thinkingShown {
		return m.setFlash("thinking shown · Ctrl-T folds it", 2*time.Second)
	}
	return m.setFlash("thinking folded · Ctrl-T shows it", 2*time.Second)
}

// unknownCommand says /name is no command, with the nearest one's name
// when one is close (/hlep: did you mean /help?).
func (m *Model) unknownCommand(name string) {
	names := []string{"exit"}
	for _, b := range builtins {
		names = append(names, b.name)
	}
	if m.sess != nil {
		for _, c := range m.sess.Commands() {
			names = append(names, c.Name)
		}
	}
	if s := app.Suggest(name, names); s != "" {
		m.say(transcript.Error, fmt.Sprintf("unknown command /%s: did you mean /%s? (see /help)", termtext.Line(name), termtext.Line(s)))
		return
	}
	m.say(transcript.Error, fmt.Sprintf("unknown command /%s (see /help)", termtext.Line(name)))
}
