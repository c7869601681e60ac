package tui

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
)

// Ctrl-G opens what the editor holds in $VISUAL (or $EDITOR) and puts
// the text saved back in the editor, to be sent with Enter. The text is
// written to a temporary file (a paste's token expanded to its text);
// the editor runs through sh -c, so a value with arguments ("code
// --wait") works as git takes it, in the session's directory, with the
// terminal handed to it (tea.ExecProcess) until it exits. An editor that
// fails (a non-zero exit) leaves the message as it was.

// editedMsg is the external editor's end.
type editedMsg struct {
	text   string
	err    error
	editor string
}

// execFunc runs a process with the terminal (tea.ExecProcess; tests run
// it directly).
type execFunc func(*exec.Cmd, tea.ExecCallback) tea.Cmd

// externalEditor is Ctrl-G.
func (m *Model) externalEditor() tea.Cmd {
	ed := strings.TrimSpace(cmp.Or(m.getenv("VISUAL"), m.getenv("EDITOR")))
	if ed == "" {
		m.say(transcript.Warning, "Ctrl-G edits the message in your editor: set $VISUAL or $EDITOR (export EDITOR=vim, say) and start panto again")
		return nil
	}
	f, err := os.CreateTemp("", "panto-message-*.md")
	if err != nil {
		m.say(transcript.Error, "Ctrl-G: "+errText(err))
		return nil
	}
	path := f.Name()
	_, err = f.WriteString(m.ed.message())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		m.say(transcript.Error, fmt.Sprintf("Ctrl-G: write %s: %s", path, errText(err)))
		return nil
	}
	c := exec.Command("/bin/sh", "-c", ed+` "$@"`, ed, path)
	c.Dir = m.o.CWD
	// The terminal itself, never the UI's reader of it (the paste guard):
	// a reader not an *os.File would be copied into the editor by a
	// goroutine Run waits for, which reads the terminal after the
	// editor has exited.
	c.Stdin, c.Stdout, c.Stderr = m.terminalFiles()
	run := m.execProcess
	if run == nil {
		run = tea.ExecProcess
	}
	return run(c, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editedMsg{err: err, editor: ed}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return editedMsg{err: fmt.Errorf("read %s: %w", path, err), editor: ed}
		}
		return editedMsg{text: string(data), editor: ed}
	})
}

// edited puts the external editor's text in the editor.
func (m *Model) edited(msg editedMsg) tea.Cmd {
	m.list.Changed()
	if msg.err != nil {
		m.say(transcript.Error, fmt.Sprintf("Ctrl-G: %s: %s; the message is as it was", msg.editor, errText(msg.err)))
		return nil
	}
	text := strings.TrimRight(conversation.ValidText(normalise(msg.text)), "\n")
	m.ed.reset()
	m.ed.ta.InsertString(text)
	m.comp.close()
	return nil
}

// terminalFiles are the terminal's files, for a process that takes it
// over: Options.Input and Output where they are files, else the
// process's stdin and stdout (stderr too goes to the terminal: panto's
// may be redirected to a file).
func (m *Model) terminalFiles() (in, out, errw *os.File) {
	in, out = os.Stdin, os.Stdout
	if f, ok := m.o.Input.(*os.File); ok {
		in = f
	}
	if f, ok := m.o.Output.(*os.File); ok {
		out = f
	}
	return in, out, out
}
