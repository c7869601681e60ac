package tui

import (
	tea "charm.land/bubbletea/v2"
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
	}
	return nil, false
}

// actionKey runs the key bound to one of those files' actions; ok is
// false for any other key.
func (m *Model) actionKey(ks string) (cmd tea.Cmd, ok bool) {
	switch ks {
	case "ctrl+g":
		return m.externalEditor(), true
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
	}
	return nil
}
