package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/history"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
)

// key handles a key press, in order: a second Ctrl-C that quits, an
// extension's question, then what is on screen (screenKey).
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	if ks == "ctrl+c" && !m.quitArmed.IsZero() && m.now().Sub(m.quitArmed) < quitWindow {
		return m.quit() // whatever is asked or open: Ctrl-C twice leaves
	}
	if ks != "ctrl+c" {
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
	switch ks {
	case "ctrl+c":
		return m.ctrlC()
	case "esc":
		if m.comp.open() {
			m.comp.dismiss(m.ed.value())
			return nil
		}
		if m.busy != idle {
			return m.interrupt()
		}
		if !m.list.Following() {
			m.list.Bottom()
		}
		return nil
	case "ctrl+d":
		if m.ed.empty() {
			return m.quit()
		}
	case "ctrl+l":
		m.list.Changed()
		return tea.ClearScreen
	case "ctrl+z":
		return tea.Suspend
	case "pgup":
		m.list.ScrollUp(m.ctxFor(), m.transcriptHeight(), max(1, m.transcriptHeight()-2))
		return nil
	case "pgdown":
		m.list.ScrollDown(m.ctxFor(), m.transcriptHeight(), max(1, m.transcriptHeight()-2))
		return nil
	case "ctrl+o":
		m.toggleNearest()
		return nil
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
	m.quitArmed = m.now()
	return m.setFlash("Ctrl-C again to quit (or Ctrl-D)", quitWindow)
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

// takeBackQueued puts the messages queued behind the turn back into the
// editor, ahead of what it holds, instead of sending them as the turn
// ends: the user stopped the turn, so what they queued waits for them
// to send it again, edited or not (it went out at once, as a new
// request that could run tools).
func (m *Model) takeBackQueued() {
	if len(m.queued) == 0 || m.sess == nil {
		return // before the session opened, nothing was interrupted
	}
	texts := make([]string, 0, len(m.queued)+1)
	for _, q := range m.queued {
		texts = append(texts, q.text)
		if q.item != nil {
			q.item.SetNote("taken back into the editor: not sent")
		}
	}
	n := len(m.queued)
	m.queued = nil
	if cur := m.ed.message(); strings.TrimSpace(cur) != "" {
		texts = append(texts, cur)
	}
	m.ed.set(strings.Join(texts, "\n"))
	m.comp.close()
	m.list.Changed()
	m.say(transcript.Quiet, fmt.Sprintf("%d queued message(s) put back into the editor: Enter sends them", n))
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
	m.ed.hist.Add(text)
	m.ed.reset()
	m.comp.close()
	m.list.Bottom()
	save := m.saveHistoryCmd(text)
	if c, ok := app.ParseCommand(text); ok {
		return tea.Batch(save, m.command(c.Name, c.Args))
	}
	return tea.Batch(save, m.send(text, nil))
}

// send starts a turn with text; while the session is opening or busy,
// the message waits its turn.
func (m *Model) send(text string, item *transcript.User) tea.Cmd {
	if item == nil {
		item = &transcript.User{Text: text}
		m.add(item)
	}
	switch {
	case m.sess == nil:
		item.SetNote("queued: sent once the extensions have started")
		m.queued = append(m.queued, queuedMsg{text: text, item: item})
		return nil
	case m.busy != idle:
		item.SetNote("queued: sent when the turn ends")
		m.queued = append(m.queued, queuedMsg{text: text, item: item})
		return nil
	}
	ctx, cancel := context.WithCancelCause(m.ctx)
	if err := m.sess.Turn(ctx, text); err != nil {
		cancel(nil)
		item.SetNote("not sent: " + errText(err))
		return nil
	}
	m.cancel = func() { cancel(errInterrupted) }
	m.busy, m.busyWhat, m.busySince = turning, "working", m.now()
	return m.ensureTick() // its events come on the subscription
}

// toggleNearest expands or folds the collapsible item nearest the bottom
// of the screen.
func (m *Model) toggleNearest() {
	first, last := m.list.Shown()
	try := func(i int) bool {
		if c, ok := m.list.At(i).(transcript.Collapsible); ok && c.Foldable() {
			c.Toggle()
			m.list.Changed()
			return true
		}
		return false
	}
	if first >= 0 {
		for i := last; i >= first; i-- {
			if try(i) {
				return
			}
		}
	}
	for i := m.list.Len() - 1; i >= 0; i-- {
		if try(i) {
			return
		}
	}
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
