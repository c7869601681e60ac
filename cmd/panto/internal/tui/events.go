package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/attach"
	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

// errInterrupted is the cause of a turn the user interrupted.
var errInterrupted = errors.New("interrupted by the user")

// opener opens the session in the background: New starts it, so the
// extensions start while the first frame is drawn.
type opener struct {
	cancel context.CancelFunc
	done   chan struct{}
	sess   Session
	err    error
}

func startOpen(ctx context.Context, a App) *opener {
	ctx, cancel := context.WithCancel(ctx)
	op := &opener{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(op.done)
		op.sess, _, op.err = a.Open(ctx)
	}()
	return op
}

type openedMsg struct {
	sess Session
	err  error
}

// eventsMsg is a batch of events read from a session's subscription.
type eventsMsg struct {
	ch     <-chan host.Event
	evs    []host.Event
	closed bool
}

// readEvents reads what the channel has: one event, waiting for it, then
// whatever else is already there (a burst of deltas becomes one update).
// Once the UI is closing, a question it reads is dismissed there: the
// program may no longer be there to show it.
func (m *Model) readEvents(ch <-chan host.Event) tea.Cmd {
	closing := &m.closing
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{ch: ch, closed: true}
		}
		dismissIfClosing(closing, ev)
		evs := []host.Event{ev}
		for len(evs) < 256 {
			select {
			case ev, ok := <-ch:
				if !ok {
					return eventsMsg{ch: ch, evs: evs, closed: true}
				}
				dismissIfClosing(closing, ev)
				evs = append(evs, ev)
			default:
				return eventsMsg{ch: ch, evs: evs}
			}
		}
		return eventsMsg{ch: ch, evs: evs}
	}
}

// dismissIfClosing dismisses a question read while the UI closes.
func dismissIfClosing(closing *atomic.Bool, ev host.Event) {
	if !closing.Load() {
		return
	}
	switch q := ev.(type) {
	case host.Question:
		q.Dismiss()
	case asker:
		q.asked().Dismiss()
	}
}

// opened takes the open session: the conversation so far is drawn (from
// the bottom, lazily), then what happened while it opened (its first
// subscription's events), and what was typed meanwhile is sent.
func (m *Model) opened(msg openedMsg) tea.Cmd {
	m.opening = false
	if msg.err != nil {
		m.openErr = msg.err
		m.quitting = true
		return tea.Quit
	}
	m.sess, m.last = msg.sess, msg.sess
	m.subscribe()
	m.info = m.sess.Info()
	m.status.provider, m.status.model = m.info.Provider, m.info.Model
	m.refreshPermissionMode()
	if len(m.info.Extensions) == 0 {
		// A panto built alone, its extensions not installed: say why
		// the model has no tools before it says it cannot act.
		m.say(transcript.Warning, "no extensions are loaded, so the model has no tools (read, edit, bash): make install puts panto's own in the base layer, --extension PATH loads one")
	}
	m.offeredTemplates() // a template a command's name takes is told now
	msgs := m.sess.Messages()
	// What the session's start recorded is told by its events: the
	// history is what the log held before.
	var cmds []tea.Cmd
	if m.info.Resumed {
		cmds = append(cmds, m.history(msgs[:min(m.info.Loaded, len(msgs))]))
	}
	cmds = append(cmds, m.readEvents(m.sub), m.usageCmd())
	// What was typed while panto started.
	cmds = append(cmds, m.next())
	m.list.Changed()
	return tea.Batch(cmds...)
}

// history puts a resumed conversation's items in front of the list.
func (m *Model) history(msgs []conversation.Message) tea.Cmd {
	items := historyItems(msgs, &m.prompts)
	if len(items) == 0 {
		return nil
	}
	n := &transcript.Notice{Level: transcript.Quiet, Text: fmt.Sprintf("resumed: %d messages · PgUp scrolls back", len(msgs))}
	if m.normal() {
		n.Text = fmt.Sprintf("resumed: %d messages", len(msgs))
	}
	if m.switchSays != "" {
		n.Level, n.Text = transcript.Info, m.switchSays
		m.switchSays = ""
	}
	return m.showHistory(items, n)
}

// showHistory puts items in front of the list, a notice after them. The
// normal screen prints their tail into the scrollback now (the rest
// stays in the log: a line says so); the alternate one shows them all,
// lazily, and prints their tail on exit.
func (m *Model) showHistory(items []transcript.Item, n *transcript.Notice) tea.Cmd {
	start := m.tailStart(items)
	if start > 0 && m.normal() {
		n.Text += fmt.Sprintf(" (the last %d blocks shown; PgUp shows them all, /tree the whole log)", len(items)-start)
	}
	items = append(items, n)
	m.list.InsertFront(items...)
	if !m.normal() {
		m.printed = start
		return nil
	}
	if !m.reprinting {
		// Printed before (the same log, reopened): the notice only.
		skip := len(items) - 1
		m.printed += skip
		items, start = items[skip:], 0
	}
	var b strings.Builder
	c := m.ctxFor()
	for _, it := range items[start:] {
		if m.printedAny {
			b.WriteByte('\n')
		}
		ls := it.Render(c)
		for j := range ls.Len() {
			b.WriteString(m.guard(ls.Line(j)))
			b.WriteByte('\n')
		}
		m.printedAny = true
	}
	m.printed += len(items)
	return m.print(b.String())
}

// historyItems are the transcript items of recorded messages: what a
// resume shows, and what a view of another branch (a preview pane) can
// show in a transcript.List of its own. prompts follows the system
// prompt through them (a zero promptTracker for a fresh one). Nothing
// renders here: a list renders what it shows.
func historyItems(msgs []conversation.Message, prompts *promptTracker) []transcript.Item {
	var items []transcript.Item
	var sys *transcript.System
	for i, msg := range msgs {
		if msg.Role != conversation.RoleSystem {
			sys = nil
		}
		switch msg.Role {
		case conversation.RoleSystem:
			for _, b := range msg.Content {
				by := host.Panto
				if rest, ok := strings.CutPrefix(b.Source, "extension "); ok {
					by = rest
				}
				says, more := prompts.apply(by, b.Mode.Normalize(), b.Key, b.Text, b.Source)
				if more && sys != nil {
					sys.Amend(says, "\n\n"+b.Text)
					continue
				}
				if sys == nil {
					sys = &transcript.System{}
					items = append(items, sys)
				}
				sys.Add(transcript.SystemChange{Says: says, Text: b.Text})
			}
		case conversation.RoleUser:
			text := msg.Typed()
			if strings.HasPrefix(text, "[Summary of the earlier conversation") {
				continue
			}
			items = append(items, &transcript.User{Text: text, Images: attach.Labels(msg)})
		case conversation.RoleAssistant:
			var text, thinking strings.Builder
			for _, b := range msg.Content {
				switch b.Type {
				case conversation.TypeText:
					text.WriteString(b.Text)
				case conversation.TypeThinking:
					thinking.WriteString(b.Thinking)
				}
			}
			if text.Len() > 0 || thinking.Len() > 0 {
				items = append(items, transcript.ReplyOf(text.String(), thinking.String()))
			}
			uses := msg.ToolUses()
			results := map[string]conversation.Block{}
			if len(uses) > 0 {
				// The results are in the next message that is not the
				// system's (ids repeat across replies).
				for _, next := range msgs[i+1:] {
					if next.Role == conversation.RoleSystem {
						continue
					}
					if next.Role == conversation.RoleTool {
						for _, b := range next.Content {
							if b.Type == conversation.TypeToolResult {
								results[b.ToolUseID] = b
							}
						}
					}
					break
				}
			}
			for _, u := range uses {
				t := transcript.NewTool(u.ID, u.Name, u.Input, time.Time{})
				if r, ok := results[u.ID]; ok {
					t.End(r.ResultText(), r.IsError, 0)
				} else {
					t.Abandon("no result recorded")
				}
				items = append(items, t)
			}
		}
	}
	return items
}

// subscribe reads the session's events from now on, and ends the
// subscription of the session before it (switched away from: closing).
func (m *Model) subscribe() {
	if m.unsubscribe != nil {
		m.unsubscribe()
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(m.ctx))
	m.sub, m.unsubscribe = m.sess.Subscribe(ctx), cancel
}

// events shows a batch of events and reads on.
func (m *Model) events(msg eventsMsg) tea.Cmd {
	if msg.ch != m.sub {
		return nil // a session switched away from: it is closing
	}
	var cmds []tea.Cmd
	shows := false
	for _, ev := range msg.evs {
		switch ev.(type) {
		case host.TextDelta, host.ThinkingDelta:
			// Shown at the next frame tick, not now.
		default:
			shows = true
		}
		cmds = append(cmds, m.event(ev))
	}
	if !msg.closed {
		cmds = append(cmds, m.readEvents(msg.ch))
	}
	if shows {
		m.list.Changed()
	}
	return tea.Batch(cmds...)
}

// event shows one event.
func (m *Model) event(ev host.Event) tea.Cmd {
	switch ev := ev.(type) {
	case host.TurnStart:
	case host.Steered:
		if i := slices.Index(m.steered, ev.Text); i >= 0 {
			m.steered = slices.Delete(m.steered, i, i+1)
		}
		u := &transcript.User{Text: ev.Text, Note: "steered into the turn: the model reads it before it goes on"}
		m.add(u)
	case host.TextDelta:
		m.replyItem().Text(ev.Text)
		m.retryItem = nil
		return m.scheduleFlush()
	case host.ThinkingDelta:
		m.replyItem().Thinking(ev.Text)
		return m.scheduleFlush()
	case host.Usage:
		m.status.addUsage(ev)
		m.noteUsage(ev)
		return m.usageCmd()
	case host.Reply:
		m.finishReply(ev)
	case host.ToolStart:
		t := transcript.NewTool(ev.ID, ev.Name, ev.Input, m.now())
		m.tools[ev.ID] = t
		m.add(t)
		return m.ensureTick()
	case host.ToolProgress:
		if t := m.tools[ev.ID]; t != nil {
			t.Progress(ev.Tail)
		}
	case host.ToolEnd:
		if t := m.tools[ev.ID]; t != nil {
			t.End(ev.Result, ev.IsError, ev.Duration)
			delete(m.tools, ev.ID)
		}
	case host.SystemChanged:
		m.systemChanged(ev.By, ev.Mode, ev.Key, ev.Text, ev.Source)
		// The next request's size changed with it (/system-append left
		// the status line's ctx stale).
		return m.usageCmd()
	case host.SystemRefused:
		m.say(transcript.Warning, fmt.Sprintf("%s's system prompt edit was refused (nothing recorded): %v", ev.By, ev.Err))
	case host.CompactionStart:
		why := "compacting older messages"
		if ev.Auto {
			why = fmt.Sprintf("the context is near its limit (~%s tokens): compacting older messages", kilo(ev.Tokens))
		}
		m.compaction = m.say(transcript.Quiet, why+"…")
		return m.ensureTick()
	case host.CompactionDone:
		n := m.compaction
		if n == nil {
			n = m.say(transcript.Quiet, "")
		}
		if ev.Err != nil {
			n.Set(transcript.Error, "compaction failed: "+errText(ev.Err), "")
		} else {
			n.Set(transcript.Quiet, fmt.Sprintf("compacted: the next request is ~%s tokens; the system prompt is unchanged", kilo(ev.Tokens)), "")
		}
		m.compaction = nil
		return m.usageCmd()
	case host.Retry:
		text := fmt.Sprintf("%s, retry %d of %d in %.1f s", retryWhy(ev.Reason), ev.Attempt, ev.Max, ev.Wait.Seconds())
		if m.retryItem == nil {
			m.retryItem = m.say(transcript.Warning, text)
		}
		m.retryItem.Set(transcript.Warning, text, oneLine(ev.Reason, 300))
	case host.Notice:
		level := transcript.Info
		switch ev.Level {
		case host.NoticeWarning:
			level = transcript.Warning
		case host.NoticeError:
			level = transcript.Error
		}
		m.notice(&transcript.Notice{Level: level, By: ev.By, Text: clip(ev.Text, maxNoticeText)})
	case host.Error:
		if errors.Is(ev.Err, errInterrupted) {
			return nil // the turn's end says so
		}
		if errors.Is(ev.Err, host.ErrTruncated) {
			m.streamCut(ev.Err)
			return nil
		}
		m.say(transcript.Error, errText(ev.Err))
	case host.TurnEnd:
		return m.turnEnded(ev)
	case host.Overflow:
		// The UI fell too far behind the session (its subscription
		// ended): read it afresh.
		m.subscribe()
		shown := m.redraw(&transcript.Notice{Level: transcript.Warning, Text: "the screen fell behind the session: redrawn from its messages"})
		read := m.readEvents(m.sub)
		if m.busy == turning && !m.sess.Busy() {
			// Its TurnEnd was among the events missed.
			return tea.Sequence(shown, tea.Batch(m.turnEnded(host.TurnEnd{}), read))
		}
		return tea.Sequence(shown, read)
	case host.Question:
		return m.ask(askedOf(ev))
	case asker:
		return m.ask(ev.asked())
	case host.QuestionClosed:
		return m.questionClosed(ev)
	case host.Status:
		m.status.setExt(ev.By, ev.Key, ev.Text)
	case host.Moved:
		return tea.Sequence(m.moved(ev), m.usageCmd())
	case host.Labeled:
		// The navigator says it by redrawing; /label by its reply.
	case host.ToolsChanged:
		m.say(transcript.Quiet, describe.ToolsChange(ev.Reason, ev.Added, ev.Removed, ev.Changed))
	case host.ModelChanged:
		m.status.model = ev.Model
		m.say(transcript.Quiet, "model "+ev.Model+" (recorded: a resume goes on with it)")
	}
	return nil
}

// Notices from outside are kept bounded, however fast they come (a
// Notify flood grew the UI's memory ~2 MB/s): notices in a row share one
// transcript item, a repeat of the last is counted on it ("×3"), at most
// maxNotices are kept in all — the oldest go, and a line says how many —
// and each keeps at most maxNoticeText bytes of its text.
const (
	maxNotices    = 200
	maxNoticeText = 4096
)

// notice adds a notice from outside to the run at the end of the
// transcript (a new run when something else came last).
func (m *Model) notice(n *transcript.Notice) {
	var run *transcript.NoticeRun
	if k := m.list.Len(); k > 0 {
		run, _ = m.list.At(k - 1).(*transcript.NoticeRun)
	}
	if run == nil {
		run = &transcript.NoticeRun{}
		m.add(run)
		m.runs = append(m.runs, run)
	}
	if run.Add(n) {
		m.noticeCount++
	}
	for m.noticeCount > maxNotices && len(m.runs) > 0 {
		old := m.runs[0]
		if old.Len() == 0 {
			m.runs = m.runs[1:]
			continue
		}
		old.DropOldest()
		m.noticeCount--
	}
	m.list.Changed()
}

// clip keeps the first n bytes of s (whole runes), saying how much went.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

// replyItem is the reply streaming now, made on its first piece.
func (m *Model) replyItem() *transcript.Reply {
	if m.reply == nil {
		m.reply = transcript.NewReply()
		m.add(m.reply)
	}
	return m.reply
}

// finishReply ends the reply being streamed; a reply that did not
// stream shows now.
func (m *Model) finishReply(ev host.Reply) {
	if !ev.Streamed {
		var text, thinking strings.Builder
		for _, b := range ev.Message.Content {
			switch b.Type {
			case conversation.TypeText:
				text.WriteString(b.Text)
			case conversation.TypeThinking:
				if m.reply == nil || !m.reply.HasText() {
					thinking.WriteString(b.Thinking)
				}
			}
		}
		if text.Len() > 0 || thinking.Len() > 0 {
			r := m.replyItem()
			r.Thinking(thinking.String())
			r.Text(text.String())
		}
	}
	if m.reply != nil {
		m.reply.Finish()
		m.reply = nil
	}
	if ev.StopReason == host.StopMaxTokens {
		m.say(transcript.Warning, "the reply was cut at max_tokens (config max_tokens)")
	}
}

// systemChanged adds a change of the prompt to the run of them.
func (m *Model) systemChanged(by string, mode conversation.Mode, key, text, source string) {
	says, more := m.prompts.apply(by, mode, key, text, source)
	if more && m.system != nil {
		m.system.Amend(says, "\n\n"+text)
		return
	}
	if m.system == nil || m.list.Len() == 0 || m.list.At(m.list.Len()-1) != m.system {
		m.system = &transcript.System{}
		m.add(m.system)
	}
	m.system.Add(transcript.SystemChange{Says: says, Text: text})
}

// streamCut says that the provider's stream ended before the reply did
// (a decoder's host.ErrTruncated): the half reply on screen is
// marked cut, and the error line says in words what happened and what
// the log holds, the decoder's error under it.
func (m *Model) streamCut(err error) {
	text := "the provider's stream ended before the reply did: nothing of the reply was recorded"
	if m.reply != nil && m.reply.HasText() {
		m.reply.SetNote("cut: the stream ended here; this half reply was not recorded")
		text = "the provider's stream ended before the reply did: the half reply above was not recorded"
	}
	text += " (the messages before it were); send a message to try again"
	m.say(transcript.Error, text).Set(transcript.Error, text, errText(err))
}

// turnEnded ends a turn: what is still open is closed, and the next
// queued message goes.
func (m *Model) turnEnded(ev host.TurnEnd) tea.Cmd {
	if m.busy != turning {
		return nil // a turn this UI did not start
	}
	interrupted := ev.Err != nil && errors.Is(ev.Err, errInterrupted)
	halfReply := m.reply != nil
	if m.reply != nil {
		if interrupted {
			m.reply.SetNote("interrupted: nothing of this half reply was recorded")
		}
		m.reply.Finish()
		m.reply = nil
	}
	cutShort := len(m.tools)
	for id, t := range m.tools {
		t.Abandon("interrupted")
		delete(m.tools, id)
	}
	m.retryItem = nil
	m.steered = nil
	if len(ev.Unsent) > 0 {
		// Steered into a turn that ended before another request: they
		// go next, ahead of the follow-ups.
		front := make([]queuedMsg, 0, len(ev.Unsent)+len(m.queued))
		for _, t := range ev.Unsent {
			front = append(front, queuedMsg{text: t})
		}
		m.queued = append(front, m.queued...)
	}
	switch {
	case interrupted && cutShort > 0:
		m.say(transcript.Quiet, "interrupted: the calls cut short were recorded with error results; the session goes on")
	case interrupted && !halfReply:
		m.say(transcript.Quiet, "interrupted: the session goes on")
	case ev.Err != nil && errors.Is(ev.Err, host.ErrMaxSteps):
		m.say(transcript.Warning, errText(ev.Err)+"; send a message to go on (config max_steps)")
	case ev.Err != nil && errors.Is(ev.Err, host.ErrBusy):
		m.say(transcript.Warning, "a turn is already running")
	}
	m.endBusy()
	return tea.Batch(m.usageCmd(), m.branchCmd(), m.next())
}

// endBusy says the session is idle again.
func (m *Model) endBusy() {
	m.busy, m.busyWhat = idle, ""
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
}

// next sends the first queued message, if the session is idle.
func (m *Model) next() tea.Cmd {
	if m.busy != idle || m.sess == nil || len(m.queued) == 0 {
		return nil
	}
	q := m.queued[0]
	m.queued = m.queued[1:]
	m.list.Changed()
	if c, ok := app.ParseCommand(q.text); ok {
		return m.command(c.Name, c.Args)
	}
	return m.send(q.text, q.images)
}

// retryWhy says in a word or two why a request failed.
func retryWhy(reason string) string {
	r := strings.ToLower(reason)
	switch {
	case strings.Contains(r, "overloaded") || strings.Contains(r, "529"):
		return "overloaded"
	case strings.Contains(r, "429") || strings.Contains(r, "rate limit"):
		return "rate limited"
	case strings.Contains(r, "connection refused") || strings.Contains(r, "dial tcp") || strings.Contains(r, "no such host"):
		return "cannot connect"
	case strings.Contains(r, "timeout") || strings.Contains(r, "deadline"):
		return "timed out"
	case strings.Contains(r, " 5") && strings.Contains(r, "status"):
		return "server error"
	}
	return "request failed"
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// kilo writes a token count short: 950, 12.3k, 1.2M.
func kilo(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 100_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0") + "k"
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
}
