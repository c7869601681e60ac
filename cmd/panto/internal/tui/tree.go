package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/editor"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/picker"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

// The session tree (/tree, /label, /fork) and other sessions (/resume).
//
// /tree is a page: the tree's rows on the left, the system prompt as of
// the row under the cursor on the right — the derivation over that
// entry's path, exact, as panto prompt --at shows it. Enter continues
// from the row (host MoveTo); l labels it; f forks the path up to it
// into a new session. The tree and each prompt are read in commands
// (they read the log), never in Update.

// treeLoadedMsg is the tree read for the navigator.
type treeLoadedMsg struct {
	rows []treeview.Row
	full bool
	// keep is the row to put the cursor on ("" for the current one).
	keep string
	err  error
}

// promptAtMsg is the prompt as of an entry, for the side pane.
type promptAtMsg struct {
	id     string
	blocks []conversation.SystemText
	err    error
}

// treeNav is the /tree page.
type treeNav struct {
	pk   *picker.Model
	rows map[string]treeview.Row
	full bool
	// prompts are the prompts read so far, by entry; asked those being
	// read.
	prompts map[string]promptAtMsg
	asked   map[string]bool
	// label is the label being typed, for entry labelID.
	label   *editor.Model
	labelID string
}

// loadTree reads the tree in the background.
func (m *Model) loadTree(full bool, keep string) tea.Cmd {
	sess := m.sess
	return func() tea.Msg {
		t, err := sess.Tree()
		if err != nil {
			return treeLoadedMsg{err: err}
		}
		rows, err := treeview.Build(t, treeview.Options{Full: full})
		return treeLoadedMsg{rows: rows, full: full, keep: keep, err: err}
	}
}

// treeLoaded opens the navigator (or refreshes it after a label).
func (m *Model) treeLoaded(msg treeLoadedMsg) tea.Cmd {
	if msg.err != nil {
		m.say(transcript.Error, "/tree: "+errText(msg.err))
		return m.next()
	}
	if len(msg.rows) == 0 {
		m.say(transcript.Quiet, "/tree: the session has no entries yet")
		return m.next()
	}
	nav, _ := m.ov.(*treeNav)
	if nav == nil {
		if m.ov != nil || len(m.asks) > 0 {
			return nil // something else took the screen meanwhile
		}
		nav = &treeNav{prompts: map[string]promptAtMsg{}, asked: map[string]bool{}}
	}
	nav.full = msg.full
	nav.rows = make(map[string]treeview.Row, len(msg.rows))
	items := make([]picker.Item, 0, len(msg.rows))
	here := ""
	for _, r := range msg.rows {
		nav.rows[r.ID] = r
		items = append(items, treeItem(r))
		if r.Here {
			here = r.ID
		}
	}
	if nav.pk == nil {
		nav.pk = picker.New("", items)
		nav.pk.OwnFilter = false
		nav.pk.ListShare = 50
		nav.pk.Preview = func(it picker.Item, w, h int) []string { return nav.preview(m, it.Value, w, h) }
	} else {
		nav.pk.SetItems(items)
	}
	nav.pk.Select(cmp.Or(msg.keep, here))
	m.ov = nav
	return nav.wantPrompt(m)
}

// treeItem is a row of the navigator: the tree's drawing, what the entry
// is, its label; * marks the current path, ● the entry the conversation
// is at.
func treeItem(r treeview.Row) picker.Item {
	it := picker.Item{Value: r.ID}
	if r.OnPath {
		it.Mark = "*"
	}
	text := r.Text
	switch r.Kind {
	case treeview.KindUser:
		text = "› " + text
	case treeview.KindSystem:
		text = "⚙ " + r.Prompt
	case treeview.KindCompaction:
		text = "≡ compacted: " + text
	case treeview.KindBranchSummary:
		text = "↳ summary: " + text
	case treeview.KindElided:
		text = "⋯ " + text + " (Enter shows all)"
	}
	if r.Here {
		it.Mark = "●"
	}
	if r.Label != "" {
		text = "[" + r.Label + "] " + text
	}
	it.Title = r.Indent + text
	return it
}

// wantPrompt asks for the prompt as of the row under the cursor, when it
// is not known yet.
func (nav *treeNav) wantPrompt(m *Model) tea.Cmd {
	it, ok := nav.pk.Selected()
	if !ok || nav.rows[it.Value].Kind == treeview.KindElided || nav.asked[it.Value] {
		return nil
	}
	id := it.Value
	nav.asked[id] = true
	sess := m.sess
	return func() tea.Msg {
		blocks, err := sess.PromptAt(id)
		return promptAtMsg{id: id, blocks: blocks, err: err}
	}
}

func (m *Model) promptAt(msg promptAtMsg) tea.Cmd {
	if nav, ok := m.ov.(*treeNav); ok {
		nav.prompts[msg.id] = msg
	}
	return nil
}

func (nav *treeNav) page() bool    { return true }
func (nav *treeNav) title() string { return "/tree" }

func (nav *treeNav) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	if nav.label != nil {
		return nav.labelKey(m, k)
	}
	it, ok := nav.pk.Selected()
	row := nav.rows[it.Value]
	switch k.String() {
	case "esc", "q", "ctrl+c":
		m.ov = nil
		m.list.Changed()
		return m.next()
	case "enter":
		if !ok {
			return nil
		}
		if row.Kind == treeview.KindElided {
			return m.loadTree(true, row.Parent)
		}
		m.ov = nil
		m.list.Changed()
		return m.jump(row)
	case "l":
		if !ok || row.Kind == treeview.KindElided {
			return nil
		}
		ti := editor.New()
		ti.Single, ti.MaxHeight = true, 1
		ti.Prompt, ti.Continuation = "label: ", "       "
		ti.Placeholder = "a name for this entry (empty removes the label)"
		ti.SetValue(row.Label)
		nav.label, nav.labelID = ti, row.ID
		return nil
	case "f":
		if !ok || row.Kind == treeview.KindElided {
			return nil
		}
		m.ov = nil
		m.list.Changed()
		return m.fork(cmp.Or(row.To, row.ID))
	case "p":
		if p, ok := nav.prompts[row.ID]; ok && p.err == nil {
			pg := newPromptPager(p.blocks, m.prompts.long)
			pg.name, pg.hint = "/tree · prompt as of "+treeview.Short(row.ID), fmt.Sprintf("%d block(s) · q goes back to the tree", len(p.blocks))
			pg.back = nav
			m.ov = pg
		}
		return nil
	case "a":
		if !nav.full {
			return m.loadTree(true, row.ID)
		}
		return nil
	}
	nav.pk.Update(k)
	return nav.wantPrompt(m)
}

// labelKey edits the label being typed.
func (nav *treeNav) labelKey(m *Model, k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc", "ctrl+c":
		nav.label = nil
		return nil
	case "enter":
		id, text := nav.labelID, nav.label.Value()
		nav.label = nil
		sess, full := m.sess, nav.full
		return func() tea.Msg {
			if _, err := sess.Label(id, text); err != nil {
				return treeLoadedMsg{err: fmt.Errorf("label: %w", err)}
			}
			return m.loadTree(full, id)()
		}
	}
	nav.label.Update(k)
	return nil
}

func (nav *treeNav) view(m *Model, width, height int) []string {
	th := m.th
	head := th.AccentBold.Render("/tree") + th.Dim.Render(fmt.Sprintf(" · %d rows · * the current path · ● here · ⚙ a change of the prompt", len(nav.rows)))
	foot := "↑↓ move · Enter continues from there · l label · f fork · p the prompt whole · Esc closes"
	if !nav.full {
		foot += " · a shows all"
	}
	out := []string{ansi.Truncate(head, width, "…")}
	body := height - 2
	var input []string
	if nav.label != nil {
		nav.label.SetWidth(max(10, width))
		input, _, _ = nav.label.View(th)
		body -= len(input)
	}
	lines := nav.pk.View(th, width, max(1, body))
	for len(lines) < body {
		lines = append(lines, "")
	}
	out = append(out, lines[:max(0, body)]...)
	out = append(out, input...)
	return append(out, th.Dim.Render(ansi.Truncate(foot, width, "…")))
}

// preview is the side pane: the prompt as of the entry, each block under
// where it came from.
func (nav *treeNav) preview(m *Model, id string, width, height int) []string {
	th := m.th
	row := nav.rows[id]
	if row.Kind == treeview.KindElided {
		return []string{th.Dim.Render("rows folded away: Enter (or a) shows them")}
	}
	p, ok := nav.prompts[id]
	if !ok {
		return []string{th.Dim.Render("reading the prompt as of " + treeview.Short(id) + "…")}
	}
	if p.err != nil {
		return []string{th.Error.Render("the prompt as of " + treeview.Short(id) + ": " + errText(p.err))}
	}
	now := "differs from now"
	if m.sess != nil && sameBlocks(p.blocks, m.sess.EffectiveSystem()) {
		now = "as now"
	}
	head := fmt.Sprintf("as of %s · %s · %d block(s)", treeview.Short(id), now, len(p.blocks))
	out := []string{th.Bold.Render(ansi.Truncate(head, width, "…"))}
	out = append(out, promptLines(th, p.blocks, width, m.prompts.long)...)
	if len(out) > height {
		out = append(out[:height-1], th.Dim.Render(fmt.Sprintf("… %d more lines: p shows it whole", len(out)-height+1)))
	}
	return out
}

// sameBlocks reports whether two prompts say the same.
func sameBlocks(a, b []conversation.SystemText) bool {
	return slices.EqualFunc(a, b, func(x, y conversation.SystemText) bool { return x.Text == y.Text && x.Key == y.Key })
}

// moveDoneMsg is a /tree jump's end.
type moveDoneMsg struct {
	res host.MoveResult
	err error
	// retype is the message of the user's row jumped to: the move went
	// to before it, and it is put back in the editor.
	retype string
}

// treeCmd is /tree [--full] or /tree [--summary|--no-summary] ID: the
// navigator, or a jump to the entry ID names, as in the line loop.
func (m *Model) treeCmd(args string) tea.Cmd {
	full, ref := false, ""
	summarize := m.o.BranchSummary
	for _, a := range strings.Fields(args) {
		switch a {
		case "--full":
			full = true
		case "--summary", "-s":
			summarize = true
		case "--no-summary":
			summarize = false
		default:
			if ref != "" || strings.HasPrefix(a, "-") {
				m.say(transcript.Error, fmt.Sprintf("/tree: unexpected %q (want /tree [--full] or /tree [--summary|--no-summary] ID)", a))
				return m.next()
			}
			ref = a
		}
	}
	if ref == "" {
		return m.loadTree(full, "")
	}
	return m.jumpTo(treeview.Row{ID: ref}, summarize)
}

// jump continues the conversation from row: a reply, a summary or a
// change of the prompt is continued after; a message of the user's is
// asked again — the move goes to before it, and its text is put back in
// the editor to edit and send.
func (m *Model) jump(row treeview.Row) tea.Cmd { return m.jumpTo(row, m.o.BranchSummary) }

func (m *Model) jumpTo(row treeview.Row, summarize bool) tea.Cmd {
	if m.busy != idle {
		m.say(transcript.Warning, "/tree: panto is busy; jump when the turn ends")
		return nil
	}
	sess := m.sess
	what := "moving"
	if summarize {
		what = "moving (summarising the branch left)"
	}
	return m.startBusy(commanding, what, func(ctx context.Context) commandDoneMsg {
		id, retype := cmp.Or(row.To, row.ID), ""
		if t, err := sess.Tree(); err == nil {
			if row.To == "" {
				if full, err := t.Resolve(id); err == nil {
					id = treeview.ContinueAt(t, full)
				}
			}
			if es, err := t.Entries(id); err == nil && es[0].Message != nil && es[0].Message.Role == conversation.RoleUser && es[0].ParentID != "" {
				retype, id = userText(*es[0].Message), es[0].ParentID
			}
		}
		res, err := sess.MoveTo(ctx, id, host.MoveOptions{Summarize: summarize})
		return commandDoneMsg{name: "tree", move: &moveDoneMsg{res: res, err: err, retype: retype}}
	})
}

// moveDone ends a jump: the redraw came with the Moved event.
func (m *Model) moveDone(d *moveDoneMsg) tea.Cmd {
	var veto *host.VetoError
	switch {
	case errors.Is(d.err, host.ErrAlreadyThere):
		m.say(transcript.Quiet, "already there: the next message continues from this entry")
	case errors.As(d.err, &veto):
		m.say(transcript.Warning, "/tree: "+errText(d.err))
		return nil
	case d.err != nil:
		m.say(transcript.Error, "/tree: "+errText(d.err))
		return nil
	}
	if d.retype != "" && m.ed.empty() {
		m.ed.ta.SetValue(d.retype)
		return m.setFlash("your message there is back in the editor: edit it and send", 4*time.Second)
	}
	return nil
}

// moved redraws the conversation of the new path.
func (m *Model) moved(ev host.Moved) {
	m.redraw()
	text := "moved to " + treeview.Short(ev.To) + ": the conversation and the system prompt are those of that path"
	if ev.Left > 0 {
		text += fmt.Sprintf("; the branch left (%d message(s)) stays in the log, /tree shows it", ev.Left)
	}
	n := m.say(transcript.Info, text)
	if ev.Summary != "" {
		n.Set(transcript.Info, text+"; a summary of it was recorded (Ctrl-O shows it)", ev.Summary)
	}
}

// redraw shows the session's conversation afresh, from its messages.
func (m *Model) redraw() {
	m.list.Reset()
	m.system, m.reply, m.retryItem, m.compaction = nil, nil, nil, nil
	clear(m.tools)
	m.prompts = promptTracker{cwd: m.o.CWD, home: m.o.Home}
	msgs := m.sess.Messages()
	m.list.InsertFront(historyItems(msgs, &m.prompts)...)
}

// labelCmd is /label [TEXT]: labels the row of the current leaf.
func (m *Model) labelCmd(args string) tea.Cmd {
	sess := m.sess
	return func() tea.Msg {
		t, err := sess.Tree()
		if err != nil {
			return commandDoneMsg{name: "label", err: err}
		}
		rows, err := treeview.Build(t, treeview.Options{})
		if err != nil {
			return commandDoneMsg{name: "label", err: err}
		}
		var id string
		for _, r := range rows {
			if r.Here {
				id = r.ID
			}
		}
		if id == "" {
			return commandDoneMsg{name: "label", err: errors.New("the session has no entries yet")}
		}
		if _, err := sess.Label(id, args); err != nil {
			return commandDoneMsg{name: "label", err: err}
		}
		if strings.TrimSpace(args) == "" {
			return commandDoneMsg{name: "label", output: "removed the label of " + treeview.Short(id)}
		}
		return commandDoneMsg{name: "label", output: fmt.Sprintf("labelled %s %q", treeview.Short(id), strings.TrimSpace(args))}
	}
}

// fork copies the path up to ref ("" the current leaf) into a new
// session and switches to it.
func (m *Model) fork(ref string) tea.Cmd {
	info := m.sess.Info()
	switch {
	case info.Path == "":
		m.say(transcript.Error, "/fork: "+host.ErrNotRecorded.Error())
		return nil
	case m.o.Fork == nil || m.o.Reopen == nil:
		m.say(transcript.Error, "/fork: this panto cannot switch sessions")
		return nil
	case m.busy != idle:
		m.say(transcript.Warning, "/fork: panto is busy; fork when the turn ends")
		return nil
	}
	fork := m.o.Fork
	return m.switchTo(func() (string, string, error) {
		dst, err := fork(info.Path, ref)
		if err != nil {
			return "", "", fmt.Errorf("/fork: %w", err)
		}
		return dst, fmt.Sprintf("forked into a new session, log %s (the session left is %s: panto --resume %s)",
			shortPath(dst, m.o.CWD, m.o.Home), info.ID, treeview.Short(info.ID)), nil
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
// target names it (and what to say once there), or fails before
// anything is closed. When the log cannot be opened, the session left is
// opened again.
func (m *Model) switchTo(target func() (path, what string, err error)) tea.Cmd {
	return m.switchToSaying(func() (string, func(Session) string, error) {
		path, what, err := target()
		return path, func(Session) string { return what }, err
	})
}

// switchToSaying is switchTo, saying something of the session opened.
func (m *Model) switchToSaying(target func() (path string, what func(Session) string, err error)) tea.Cmd {
	old, reopen := m.sess, m.o.Reopen
	left := old.Info().Path
	m.sess = nil // what is typed meanwhile waits, as at the start
	m.busy, m.busyWhat, m.busySince = commanding, "switching sessions", m.now()
	ctx := m.ctx
	return tea.Batch(m.ensureTick(), func() tea.Msg {
		path, what, err := target()
		if err != nil {
			return switchedMsg{sess: old, kept: true, err: err}
		}
		if left == "" {
			// A session not recorded cannot be opened again: open the
			// other first, and close this one only once it has.
			sess, err := reopen(ctx, path)
			if err != nil {
				return switchedMsg{sess: old, kept: true, err: fmt.Errorf("opening %s: %w", path, err)}
			}
			said := what(sess)
			if cerr := old.Close(ctx); cerr != nil {
				said += " (closing the session left: " + errText(cerr) + ")"
			}
			return switchedMsg{sess: sess, what: said}
		}
		closeErr := old.Close(ctx)
		sess, err := reopen(ctx, path)
		if err != nil {
			if back, berr := reopen(ctx, left); berr == nil {
				return switchedMsg{sess: back, err: fmt.Errorf("opening %s: %w (back in the session left)", path, err)}
			}
			return switchedMsg{err: fmt.Errorf("opening %s: %w; reopening the session left failed too", path, err)}
		}
		said := what(sess)
		if closeErr != nil {
			said += " (closing the session left: " + errText(closeErr) + ")"
		}
		return switchedMsg{sess: sess, what: said}
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
		m.say(transcript.Error, errText(msg.err))
		return m.next()
	}
	m.list.Reset()
	m.system, m.reply, m.retryItem, m.compaction = nil, nil, nil, nil
	clear(m.tools)
	m.prompts = promptTracker{cwd: m.o.CWD, home: m.o.Home}
	m.status = status{cwd: m.status.cwd, branch: m.status.branch}
	cmd := m.opened(openedMsg{sess: msg.sess})
	if msg.err != nil {
		m.say(transcript.Error, errText(msg.err))
	} else if msg.what != "" {
		m.say(transcript.Info, msg.what)
	}
	return cmd
}

// SessionItem is a session /resume offers.
type SessionItem struct {
	Path, ID string
	// Summary: what the picker shows; Err when the log could not be
	// read.
	Last               string
	Messages, Branches int
	Labels             int
	First              string
	Err                error
}

type sessionsMsg struct {
	list []SessionItem
	err  error
}

// resumePicker is /resume: this directory's sessions, newest first.
type resumePicker struct {
	pk    *picker.Model
	items map[string]SessionItem
}

func (m *Model) resumeCmd(args string) tea.Cmd {
	if m.o.Sessions == nil || m.o.Reopen == nil {
		m.say(transcript.Error, "/resume: this panto cannot switch sessions")
		return nil
	}
	list := m.o.Sessions
	return func() tea.Msg {
		l, err := list()
		return sessionsMsg{list: l, err: err}
	}
}

func (m *Model) sessionsLoaded(msg sessionsMsg) tea.Cmd {
	if msg.err != nil {
		m.say(transcript.Error, "/resume: "+errText(msg.err))
		return m.next()
	}
	if m.ov != nil || len(m.asks) > 0 {
		return nil
	}
	current := ""
	if m.sess != nil {
		current = m.sess.Info().Path
	}
	rp := &resumePicker{items: map[string]SessionItem{}}
	var items []picker.Item
	for _, s := range msg.list {
		rp.items[s.Path] = s
		it := picker.Item{Value: s.Path, Title: treeview.Short(s.ID) + "  " + s.Last, Match: s.ID + " " + s.First}
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
	if len(items) == 0 {
		m.say(transcript.Quiet, "/resume: no sessions here yet")
		return m.next()
	}
	rp.pk = picker.New("Sessions in "+m.status.cwd, items)
	rp.pk.Hint = "type to filter · Enter switches · * this one · Esc closes"
	rp.pk.ListShare = 60
	rp.pk.Preview = func(it picker.Item, w, h int) []string { return rp.preview(m.th, it.Value, w, h) }
	m.ov = rp
	return nil
}

func (rp *resumePicker) page() bool    { return true }
func (rp *resumePicker) title() string { return "/resume" }

func (rp *resumePicker) key(m *Model, k tea.KeyPressMsg) tea.Cmd {
	switch rp.pk.Update(k) {
	case picker.Cancel:
		m.ov = nil
		m.list.Changed()
		return m.next()
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
		case m.busy != idle:
			m.say(transcript.Warning, "/resume: panto is busy; switch when the turn ends")
			return nil
		}
		return m.switchToSaying(func() (string, func(Session) string, error) {
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
	return append(out, m.th.Dim.Render(ansi.Truncate("↑↓ move · Enter switches to the session (this one is closed) · Esc closes", width, "…")))
}

// preview says what the session under the cursor holds.
func (rp *resumePicker) preview(th *theme.Theme, path string, width, _ int) []string {
	s := rp.items[path]
	out := []string{th.Bold.Render("session " + s.ID)}
	if s.Err != nil {
		return append(out, th.Error.Render(errText(s.Err)))
	}
	out = append(out,
		th.Dim.Render("last   ")+s.Last,
		th.Dim.Render("msgs   ")+fmt.Sprint(s.Messages),
		th.Dim.Render("branch ")+fmt.Sprint(s.Branches))
	if s.Labels > 0 {
		out = append(out, th.Dim.Render("labels ")+fmt.Sprint(s.Labels))
	}
	out = append(out, th.Dim.Render("log    ")+path, "", th.Dim.Render("first message:"))
	out = append(out, strings.Split(ansi.Wrap(cmp.Or(s.First, "(none yet)"), max(10, width), ""), "\n")...)
	return out
}

// promptLines draws prompt blocks, each under a line that says where it
// came from.
func promptLines(th *theme.Theme, blocks []conversation.SystemText, width int, short func(string) string) []string {
	var out []string
	for i, b := range blocks {
		from := short(b.Source)
		if b.Source == "" {
			from = fmt.Sprintf("message %d", b.Index+1)
		}
		if b.Key != "" {
			from += " · section " + b.Key
		}
		if i > 0 {
			out = append(out, "")
		}
		head := fmt.Sprintf("── block %d · %s ", i+1, from)
		if n := width - ansi.StringWidth(head); n > 0 {
			head += strings.Repeat("─", n)
		}
		out = append(out, th.AccentBold.Render(ansi.Truncate(head, width, "…")))
		for _, l := range strings.Split(strings.TrimRight(b.Text, "\n"), "\n") {
			l = strings.ReplaceAll(l, "\t", "    ")
			if ansi.StringWidth(l) <= width {
				out = append(out, l)
				continue
			}
			out = append(out, strings.Split(ansi.Wrap(l, width, ""), "\n")...)
		}
	}
	return out
}
