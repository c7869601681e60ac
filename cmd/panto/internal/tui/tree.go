package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/cmd/panto/internal/promptlog"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/editor"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/picker"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/internal/linediff"
)

// The session tree: /tree, /label (and /fork, /resume in sessions.go).
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
	sess, short := m.sess, m.shortSource()
	return func() tea.Msg {
		t, err := sess.Tree()
		if err != nil {
			return treeLoadedMsg{err: err}
		}
		rows, err := treeview.Build(t, treeview.Options{Full: full, Short: short})
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
// is not known yet; for a change of the prompt, the prompt as of the row
// above it too, for what changed here.
func (nav *treeNav) wantPrompt(m *Model) tea.Cmd {
	it, ok := nav.pk.Selected()
	row := nav.rows[it.Value]
	if !ok || row.Kind == treeview.KindElided {
		return nil
	}
	cmds := []tea.Cmd{nav.ask(m, row.ID)}
	if row.Kind == treeview.KindSystem && row.Parent != "" {
		cmds = append(cmds, nav.ask(m, row.Parent))
	}
	return tea.Batch(cmds...)
}

// ask reads the prompt as of the entry id, once.
func (nav *treeNav) ask(m *Model, id string) tea.Cmd {
	if nav.asked[id] {
		return nil
	}
	nav.asked[id] = true
	sess := m.sess
	return func() tea.Msg {
		blocks, err := sess.PromptAt(id)
		return promptAtMsg{id: id, blocks: blocks, err: err}
	}
}

// changedHere is the diff of the prompt a row of changes made: the
// prompt as of the row above it (none above the first row) against the
// prompt as of the row. ok is false while that is not known yet.
func (nav *treeNav) changedHere(row treeview.Row, after []conversation.SystemText) (hunks []linediff.Hunk, ok bool) {
	var before []conversation.SystemText
	if row.Parent != "" {
		p, known := nav.prompts[row.Parent]
		if !known || p.err != nil {
			return nil, false
		}
		before = p.blocks
	}
	return promptlog.Diff(before, after), true
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
		return m.closeOverlay()
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
		ti.SetValue(strings.Join(strings.Fields(row.Label), " ")) // a label is one line
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
			pg.name, pg.hint = "/tree · prompt as of "+termtext.Line(treeview.Short(row.ID)), fmt.Sprintf("%d block(s) · q goes back to the tree", len(p.blocks))
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
	short := termtext.Line(treeview.Short(id)) // the log's
	if !ok {
		return []string{th.Dim.Render("reading the prompt as of " + short + "…")}
	}
	if p.err != nil {
		return []string{th.Error.Render(ansi.Truncate("the prompt as of "+short+": "+termtext.Line(errText(p.err)), width, "…"))}
	}
	now, since := "differs from now", ""
	if m.sess != nil {
		cur := m.sess.EffectiveSystem()
		if sameBlocks(p.blocks, cur) {
			now = "as now"
		} else if d := describe.Diff(diffBlocks(p.blocks), diffBlocks(cur), m.prompts.short); len(d) > 0 {
			// Which blocks: in the transcript's words.
			since = "since then: " + termtext.Line(strings.Join(d, ", "))
		}
	}
	head := fmt.Sprintf("as of %s · %s · %d block(s)", short, now, len(p.blocks))
	out := []string{th.Bold.Render(ansi.Truncate(head, width, "…"))}
	if since != "" {
		for _, l := range strings.Split(ansi.Wrap(since, max(10, width), ""), "\n") {
			out = append(out, th.Warn.Render(l))
		}
	}
	if row.Kind == treeview.KindSystem {
		// What changed here: the diff of the prompt this row made.
		if hunks, ok := nav.changedHere(row, p.blocks); ok && len(hunks) > 0 {
			added, removed := promptlog.Counts(hunks)
			out = append(out, th.Bold.Render(ansi.Truncate(fmt.Sprintf("what changed here: +%d −%d lines", added, removed), width, "…")))
			out = append(out, transcript.DrawHunks(th, hunks, width)...)
			out = append(out, "")
		}
	}
	out = append(out, promptLines(th, p.blocks, width, m.prompts.long)...)
	if len(out) > height {
		out = append(out[:height-1], th.Dim.Render(fmt.Sprintf("… %d more lines: p shows it whole", len(out)-height+1)))
	}
	return out
}

// diffBlocks is a prompt as describe.Diff compares it.
func diffBlocks(bs []conversation.SystemText) []describe.Block {
	out := make([]describe.Block, len(bs))
	for i, b := range bs {
		// A re-seed's first block came from where the seed comes from.
		out[i] = describe.Block{Key: b.Key, Source: strings.TrimPrefix(b.Source, host.ReseedSource), Text: b.Text}
	}
	return out
}

// shortSource shortens a block's source as the transcript does, for the
// tree's rows (built off the UI's thread: a copy of what it needs).
func (m *Model) shortSource() func(string) string {
	p := &promptTracker{cwd: m.prompts.cwd, home: m.prompts.home}
	return p.short
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
	a, err := treeview.ParseArgs(args, m.o.BranchSummary)
	if err != nil {
		m.say(transcript.Error, err.Error())
		return m.next()
	}
	if a.Ref == "" {
		return m.loadTree(a.Full, "")
	}
	return m.jumpTo(treeview.Row{ID: a.Ref}, a.Summarize)
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
			if to, typed, err := app.Jump(t, id); err == nil {
				id, retype = to, typed
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
func (m *Model) moved(ev host.Moved) tea.Cmd {
	text := "moved to " + treeview.Short(ev.To) + ": the conversation and the system prompt are those of that path"
	if ev.Left > 0 {
		text += fmt.Sprintf("; the branch left (%d message(s)) stays in the log, /tree shows it", ev.Left)
	}
	n := &transcript.Notice{Level: transcript.Info, Text: text}
	if ev.Summary != "" {
		n.Set(transcript.Info, text+"; a summary of it was recorded (Ctrl-O shows it)", ev.Summary)
	}
	return m.redraw(n)
}

// redraw shows the session's conversation afresh, from its messages,
// the notice after it.
func (m *Model) redraw(notice *transcript.Notice) tea.Cmd {
	m.resetTranscript()
	items := historyItems(m.sess.Messages(), &m.prompts)
	return m.showHistory(items, notice)
}

// resetTranscript empties the transcript and what follows it: a move or
// a switch draws another conversation.
func (m *Model) resetTranscript() {
	m.list.Reset()
	m.printed = 0
	m.system, m.reply, m.retryItem, m.compaction = nil, nil, nil, nil
	m.runs, m.noticeCount = nil, 0
	clear(m.tools)
	m.prompts = promptTracker{cwd: m.o.CWD, home: m.o.Home}
}

// labelCmd is /label [TEXT]: labels the row of the current leaf.
func (m *Model) labelCmd(args string) tea.Cmd {
	sess, short := m.sess, m.shortSource()
	return func() tea.Msg {
		t, err := sess.Tree()
		if err != nil {
			return commandDoneMsg{name: "label", err: err}
		}
		rows, err := treeview.Build(t, treeview.Options{Short: short})
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
