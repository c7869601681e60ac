package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/attach"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/history"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// key handles a key press, in order: a second Ctrl-C that quits, an
// extension's question, then what is on screen (screenKey).
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	k, bound := m.keys.apply(k) // [keys] in config.toml
	if !bound {
		return nil
	}
	ks := k.String()
	if (ks == "ctrl+c" || ks == "ctrl+d") && !m.quitArmed.IsZero() && m.now().Sub(m.quitArmed) < quitWindow {
		return m.quit() // whatever is asked or open: Ctrl-C twice leaves
	}
	if ks != "ctrl+c" && ks != "ctrl+d" {
		m.quitArmed = time.Time{}
	}
	if len(m.asks) > 0 {
		return m.questionKey(k)
	}
	m.typed = m.now()
	return m.screenKey(k)
}

// screenKey handles a key as what is on screen takes it, questions
// aside: an overlay, the keys that work everywhere, the completion
// popup, the editor.
func (m *Model) screenKey(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	if m.ov != nil {
		return m.ov.key(m, k)
	}
	if cmd, ok := m.actionKey(ks); ok {
		return cmd
	}
	switch ks {
	case "ctrl+c":
		return m.ctrlC()
	case "esc":
		if m.comp.open() {
			m.comp.dismiss(m.ed.value())
			if m.ed.value() == "/" {
				m.ed.reset() // the palette's "/": what is typed next is no command
			}
			return nil
		}
		if !m.normal() && !m.list.Following() {
			// Scrolled up, Esc goes to the end first, running or not;
			// a second Esc interrupts.
			m.list.Bottom()
			return nil
		}
		if m.busy != idle {
			return m.interrupt()
		}
		return nil
	case "ctrl+d":
		if m.ed.empty() {
			if m.busy == turning {
				// Mid-reply, Ctrl-D stops the turn first (what it
				// recorded stays) and quits on a second press.
				return tea.Batch(m.interrupt(), m.armQuit("Ctrl-D again to quit"))
			}
			return m.quit()
		}
	case "ctrl+l":
		m.list.Changed()
		return tea.ClearScreen
	case "ctrl+z":
		return tea.Suspend
	case "pgup":
		if m.normal() {
			return m.openTranscript(false)
		}
		m.list.ScrollUp(m.ctxFor(), m.transcriptHeight(), max(1, m.transcriptHeight()-2))
		return nil
	case "pgdown":
		m.list.ScrollDown(m.ctxFor(), m.transcriptHeight(), max(1, m.transcriptHeight()-2))
		return nil
	case "ctrl+o":
		return m.toggleFocused()
	case "ctrl+shift+o":
		if m.normal() {
			return m.openTranscript(true)
		}
		m.toggleAll()
		return nil
	case "alt+up":
		return m.restoreQueued()
	case "shift+tab":
		m.cyclePermissionMode()
		return nil
	}
	if m.comp.open() {
		if cmd, done := m.completionKey(k); done {
			return cmd
		}
	}
	switch ks {
	case "enter":
		return m.submit()
	case "ctrl+v":
		return m.pasteImage()
	case "backspace":
		if m.dropImage() {
			return nil
		}
	case "alt+enter":
		if m.busy == turning {
			return m.steer()
		}
	case "up":
		if m.ed.onFirstLine() {
			if s, ok := m.ed.hist.Prev(m.ed.message()); ok {
				m.ed.set(s)
				m.comp.close()
			}
			return nil
		}
	case "down":
		if m.ed.onLastLine() {
			if s, ok := m.ed.hist.Next(); ok {
				m.ed.set(s)
				m.comp.close()
			}
			return nil
		}
	case "tab":
		return nil // nothing to complete
	}
	if !m.ed.update(k) {
		return nil
	}
	return m.refreshCompletion()
}

// wheelLines is how far a turn of the wheel scrolls.
const wheelLines = 3

// wheel scrolls the transcript, a page, or the list of a picker.
func (m *Model) wheel(w tea.MouseWheelMsg) tea.Cmd {
	up := w.Button == tea.MouseWheelUp
	if w.Button != tea.MouseWheelUp && w.Button != tea.MouseWheelDown {
		return nil
	}
	switch {
	case len(m.asks) > 0:
		if m.asks[0].q.Type == extension.AskConfirm {
			for range wheelLines {
				if up {
					m.asks[0].scrollKey("up")
				} else {
					m.asks[0].scrollKey("down")
				}
			}
		}
		return nil
	case m.ov != nil:
		k := tea.KeyPressMsg{Code: tea.KeyDown}
		if up {
			k = tea.KeyPressMsg{Code: tea.KeyUp}
		}
		var cmd tea.Cmd
		for range wheelLines {
			cmd = m.ov.key(m, k)
		}
		return cmd
	case up:
		m.list.ScrollUp(m.ctxFor(), m.transcriptHeight(), wheelLines)
	default:
		m.list.ScrollDown(m.ctxFor(), m.transcriptHeight(), wheelLines)
	}
	return nil
}

// ctrlC interrupts a turn; otherwise clears the editor; on an empty
// editor, a second press quits.
func (m *Model) ctrlC() tea.Cmd {
	switch {
	case m.busy != idle:
		return m.interrupt()
	case !m.ed.empty():
		m.ed.reset()
		m.comp.close()
		m.quitArmed = time.Time{}
		return nil
	case !m.quitArmed.IsZero() && m.now().Sub(m.quitArmed) < quitWindow:
		return m.quit()
	}
	return m.armQuit("Ctrl-C again to quit (or Ctrl-D)")
}

// armQuit makes a second Ctrl-C (or Ctrl-D) within quitWindow quit.
func (m *Model) armQuit(say string) tea.Cmd {
	m.quitArmed = m.now()
	return m.setFlash(say, quitWindow)
}

// interrupt stops the running turn (or compaction, or command): the host
// records what it must so the log stays valid.
func (m *Model) interrupt() tea.Cmd {
	if m.cancel != nil {
		m.cancel()
	}
	m.busyWhat = "interrupting"
	m.takeBackQueued()
	return nil
}

// takeBackQueued puts the messages queued behind the turn, and those
// steered into it and not delivered yet, back into the editor, ahead of
// what it holds, instead of sending them as the turn ends: the user
// stopped the turn, so what they queued waits for them to send it
// again, edited or not (it went out at once, as a new request that
// could run tools).
func (m *Model) takeBackQueued() {
	if m.sess == nil {
		return // before the session opened, nothing was interrupted
	}
	m.restore("put back into the editor: Enter sends them")
}

// restoreQueued is Alt+↑: the queued and steered messages come back
// into the editor to be edited or dropped; the turn goes on.
func (m *Model) restoreQueued() tea.Cmd {
	if len(m.queued) == 0 && len(m.steered) == 0 {
		return m.setFlash("nothing is queued", 2*time.Second)
	}
	m.restore("back in the editor: edit them, Enter sends")
	return nil
}

// restore moves the queued and steered messages into the editor.
func (m *Model) restore(say string) {
	var texts []string
	if m.sess != nil && len(m.steered) > 0 {
		// What the host has not delivered yet: one delivered meanwhile
		// shows as sent (its Steered event).
		texts = append(texts, m.sess.TakeSteered()...)
	}
	m.steered = nil
	for _, q := range m.queued {
		texts = append(texts, q.text)
		m.attached = append(m.attached, q.images...)
	}
	m.queued = nil
	if len(texts) == 0 {
		return
	}
	n := len(texts)
	if cur := m.ed.message(); strings.TrimSpace(cur) != "" {
		texts = append(texts, cur)
	}
	m.ed.set(strings.Join(texts, "\n"))
	m.comp.close()
	m.list.Changed()
	m.say(transcript.Quiet, fmt.Sprintf("%d queued message(s) %s", n, say))
}

// steer is Alt+Enter while a turn runs: the message goes to the turn,
// read by the model after the tool calls running now, before its next
// request. With no turn to take it, it is sent as Enter sends it.
func (m *Model) steer() tea.Cmd {
	text := strings.TrimRight(m.ed.message(), "\n")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if _, ok := app.ParseCommand(text); ok || m.sess == nil {
		return m.submit()
	}
	text = conversation.ValidText(text)
	if err := m.sess.Steer(text); err != nil {
		return m.submit()
	}
	m.ed.hist.Add(text)
	m.ed.reset()
	m.comp.close()
	m.steered = append(m.steered, text)
	m.list.Changed()
	return m.saveHistoryCmd(text)
}

// pasteMsg takes a bracketed paste: one block, never sent by itself, and
// never an answer. With a question up it goes to the editor, as typing
// does (it was dropped: lost text), unless Tab took an input's field.
func (m *Model) pasteMsg(s string) tea.Cmd {
	if len(m.asks) > 0 && m.asks[0].ready(m.now(), m.typed) {
		if q := m.asks[0]; q.input != nil && q.focused {
			q.input.InsertString(normalise(s))
			return nil
		}
	}
	m.typed = m.now()
	if nav, ok := m.ov.(*treeNav); ok && nav.label != nil {
		// A label is one line.
		nav.label.InsertString(strings.Join(strings.Fields(normalise(s)), " "))
		return nil
	}
	if m.ov != nil {
		return nil
	}
	if m.pastedImage(s) {
		return nil
	}
	m.ed.paste(s)
	return m.refreshCompletion()
}

// submit sends what the editor holds: a /command, or a message.
func (m *Model) submit() tea.Cmd {
	text := strings.TrimRight(m.ed.message(), "\n")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	text = conversation.ValidText(text)
	var images []attach.Image
	if _, isCmd := app.ParseCommand(text); !isCmd && !strings.HasPrefix(text, "!") {
		var err error
		if images, err = m.takeImages(text); err != nil {
			// The message stays in the editor, to be mended.
			m.say(transcript.Error, "not sent: "+err.Error())
			return nil
		}
	}
	m.ed.hist.Add(text)
	m.ed.reset()
	m.comp.close()
	m.list.Bottom()
	save := m.saveHistoryCmd(text)
	if cmd, ok := m.shellSubmit(text); ok {
		return tea.Batch(save, cmd)
	}
	if c, ok := app.ParseCommand(text); ok {
		return tea.Batch(save, m.command(c.Name, c.Args))
	}
	return tea.Batch(save, m.send(text, images))
}

// sendWith starts a turn whose message panto added to (a template's
// expansion, a skill): the transcript shows what was typed.
func (m *Model) sendWith(in host.TurnInput) tea.Cmd {
	tw, ok := m.sess.(app.TurnWith)
	if !ok {
		return m.send(in.Text, nil)
	}
	item := &transcript.User{Text: in.Text}
	m.add(item)
	ctx, cancel := context.WithCancelCause(m.ctx)
	if err := tw.TurnWith(ctx, in); err != nil {
		cancel(nil)
		item.SetNote("not sent: " + errText(err))
		return nil
	}
	m.cancel = func() { cancel(errInterrupted) }
	m.busy, m.busyWhat, m.busySince = turning, "working", m.now()
	return m.ensureTick()
}

// send starts a turn with text; while the session is opening or busy,
// the message waits its turn above the editor.
func (m *Model) send(text string, images []attach.Image) tea.Cmd {
	if m.sess == nil || m.busy != idle {
		m.queued = append(m.queued, queuedMsg{text: text, images: images})
		m.list.Changed()
		return nil
	}
	blocks, labels := imageBlocks(images)
	item := &transcript.User{Text: text, Images: labels}
	m.add(item)
	full := m.withShellContext(text, item) // what !cmd ran since the last message
	ctx, cancel := context.WithCancelCause(m.ctx)
	start := func() error { return m.sess.Turn(ctx, full) }
	if len(blocks) > 0 {
		start = func() error {
			tw, ok := m.sess.(app.TurnWith)
			if !ok {
				return errors.New("this session takes no images")
			}
			return tw.TurnWith(ctx, host.TurnInput{Text: full, Attached: blocks})
		}
	}
	if err := start(); err != nil {
		cancel(nil)
		item.SetNote("not sent: " + errText(err))
		return nil
	}
	m.cancel = func() { cancel(errInterrupted) }
	m.busy, m.busyWhat, m.busySince = turning, "working", m.now()
	return m.ensureTick() // its events come on the subscription
}

// History I/O, off the update loop. A history file that cannot be
// read or written (a symbolic link planted at its path, say) is said
// once, and the session goes on without it.

type historyMsg struct {
	entries []string
	err     error
}

func (m *Model) loadHistoryCmd() tea.Cmd {
	path := m.o.HistoryFile
	if path == "" {
		return nil
	}
	return func() tea.Msg {
		entries, err := history.Load(path)
		return historyMsg{entries, err}
	}
}

func (m *Model) saveHistoryCmd(text string) tea.Cmd {
	path := m.o.HistoryFile
	if path == "" || m.historyBroken {
		return nil
	}
	return func() tea.Msg {
		if err := history.Append(path, text); err != nil {
			return historyMsg{err: err}
		}
		return nil
	}
}

// historyLoaded takes the history read, or says why it could not be
// kept.
func (m *Model) historyLoaded(msg historyMsg) {
	m.ed.hist.Prepend(msg.entries)
	if msg.err != nil && !m.historyBroken {
		m.historyBroken = true
		m.say(transcript.Warning, errText(msg.err)+": the messages you send are not kept for ↑ (remove it to keep them)")
	}
}
