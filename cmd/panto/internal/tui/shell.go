package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
)

// A message that starts with ! is a shell command of the user's: "!cmd"
// runs cmd with bash -c in the session's directory and shows its output
// in the transcript, and the model never sees it; "!!cmd" also hands
// the command and its output to the model with the next message sent
// (the model does not answer it by itself). pi has the two the other
// way round; issue 20 asked for these.
//
// The rules: it is the user's own command, typed at their terminal, so
// it runs as a shell would run it — not under the tool calls' permission
// policy nor in their sandbox — with panto's environment (which holds no
// provider key: internal/keys), stdin empty (the UI holds the terminal;
// Ctrl-Z for a program that needs it), stdout and stderr together. It
// runs only while panto is idle, and Esc stops it. What it printed past
// shellKeep bytes is cut (its end is kept).

// shellKeep is how much of a command's output is kept, from its end.
const shellKeep = 64 << 10

// shellDoneMsg is a shell command's end.
type shellDoneMsg struct {
	command string
	// send: the output goes to the model with the next message.
	send   bool
	output string
	cut    int
	status int
	err    error
	item   *transcript.Text
}

// shellSubmit runs text when it is a shell command (! or !!); ok is
// false for any other message.
func (m *Model) shellSubmit(text string) (cmd tea.Cmd, ok bool) {
	// !cmd is shown only; !!cmd also goes to the model (issue 20's
	// contract; pi has them the other way round).
	send := false
	command, isShell := strings.CutPrefix(text, "!")
	if !isShell {
		return nil, false
	}
	if c, twice := strings.CutPrefix(command, "!"); twice {
		command, send = c, true
	}
	command = strings.TrimSpace(command)
	if command == "" {
		return nil, false // a lone "!" is a message
	}
	if m.busy != idle {
		m.ed.set(text)
		m.say(transcript.Warning, "!"+oneLine(command, 40)+": panto is busy; run it when the turn ends (it is back in the editor)")
		return nil, true
	}
	title := "$ " + command
	if !send {
		title += "  (not sent to the model)"
	}
	// Shown when it ends (on the normal screen what is shown goes into
	// the scrollback as it is): meanwhile the activity bar says it runs.
	item := &transcript.Text{Title: title}
	cwd := m.o.CWD
	ctx, cancel := context.WithCancelCause(m.ctx)
	m.cancel = func() { cancel(errInterrupted) }
	m.busy, m.busyWhat, m.busySince = commanding, "!"+oneLine(command, 30), m.now()
	return tea.Batch(func() tea.Msg { return runShell(ctx, cwd, command, send, item) }, m.ensureTick()), true
}

// runShell runs command with bash -c in dir.
func runShell(ctx context.Context, dir, command string, send bool, item *transcript.Text) shellDoneMsg {
	c := exec.CommandContext(ctx, "bash", "-c", command)
	c.Dir = dir
	var out tailBuffer
	c.Stdout, c.Stderr = &out, &out
	c.WaitDelay = 2 * time.Second
	err := c.Run()
	res := shellDoneMsg{command: command, send: send, output: out.String(), cut: out.cut, item: item}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.err = errors.New("stopped (Esc)")
	case errors.As(err, &exit):
		res.status = exit.ExitCode()
	case err != nil:
		res.err = err
	}
	return res
}

// shellDone shows a shell command's output and keeps it for the next
// message when it goes to the model.
func (m *Model) shellDone(r shellDoneMsg) tea.Cmd {
	m.endBusy()
	body := strings.TrimRight(r.output, "\n")
	if r.cut > 0 {
		body = fmt.Sprintf("(%s cut from the start)\n", byteSize(r.cut)) + body
	}
	var tail []string
	switch {
	case r.err != nil:
		tail = append(tail, "("+errText(r.err)+")")
	case r.status != 0:
		tail = append(tail, fmt.Sprintf("(exit status %d)", r.status))
	case body == "":
		tail = append(tail, "(no output)")
	}
	if r.send {
		tail = append(tail, "· sent to the model with your next message (! runs a command the model never sees)")
	}
	if len(tail) > 0 {
		if body != "" {
			body += "\n"
		}
		body += strings.Join(tail, " ")
	}
	r.item.Body = body
	m.add(r.item)
	if r.send {
		m.shellContext = append(m.shellContext, shellForModel(r))
	}
	return m.next()
}

// shellForModel is how a command and its output reach the model.
func shellForModel(r shellDoneMsg) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "I ran this shell command:\n\n$ %s\n", r.command)
	out := strings.TrimRight(r.output, "\n")
	if r.cut > 0 {
		fmt.Fprintf(&sb, "(the first %d bytes of its output were cut)\n", r.cut)
	}
	if out != "" {
		fence := "```"
		for strings.Contains(out, fence) {
			fence += "`"
		}
		fmt.Fprintf(&sb, "\n%s\n%s\n%s\n", fence, out, fence)
	}
	switch {
	case r.err != nil:
		fmt.Fprintf(&sb, "\n(%s)\n", errText(r.err))
	case r.status != 0:
		fmt.Fprintf(&sb, "\n(exit status %d)\n", r.status)
	}
	return sb.String()
}

// withShellContext is text with the shell commands run since the last
// message before it, for the model; item (the message shown) says so.
func (m *Model) withShellContext(text string, item *transcript.User) string {
	if len(m.shellContext) == 0 {
		return text
	}
	n := len(m.shellContext)
	full := strings.Join(m.shellContext, "\n") + "\n" + text
	m.shellContext = nil
	if n == 1 {
		item.SetNote("with the output of the shell command above")
	} else {
		item.SetNote(fmt.Sprintf("with the output of the %d shell commands above", n))
	}
	return full
}

// tailBuffer keeps the last shellKeep bytes written to it.
type tailBuffer struct {
	buf bytes.Buffer
	cut int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if over := t.buf.Len() - shellKeep; over > 0 {
		t.cut += over
		t.buf.Next(over)
		b := append([]byte(nil), t.buf.Bytes()...)
		t.buf.Reset()
		t.buf.Write(b)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return t.buf.String() }
