package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
)

// /resume's own keys, beside picking: the filter finds a session by the
// text of any of its messages (read from the logs in the background once
// the picker is up, the newest maxSearched sessions'); Ctrl-A switches
// between this directory's sessions and every directory's (one of
// another directory is not opened here: panto says how to resume it
// there); Ctrl-R renames the session under the cursor (/name; a log
// another panto is running is refused); Ctrl-D deletes it, once y
// confirms (never the session in use, nor one running elsewhere).

// maxSearched is how many sessions' messages the filter reads.
const maxSearched = 200

// minSearch is how long a filter must be to look in every message (a
// letter or two would match nearly every session).
const minSearch = 3

// resumeExtra is the state of those keys.
type resumeExtra struct {
	all bool
	// texts are the sessions' messages (app.SearchText), by log path.
	texts map[string]string
	// renaming is set while a new name is typed; name is it so far.
	renaming bool
	name     string
	// deleting is the log a delete waits for y on.
	deleting string
	// note is said in the footer until the next key.
	note string
}

// searchTextsMsg are the sessions' messages, read.
type searchTextsMsg struct {
	rp    *resumePicker
	texts map[string]string
}

// resumeDoneMsg is a rename's or a delete's end.
type resumeDoneMsg struct {
	rp   *resumePicker
	said string
	err  error
}

// loadTexts reads the messages of the sessions listed, off the update
// loop.
func (rp *resumePicker) loadTexts(list []SessionItem) tea.Cmd {
	if rp.texts != nil {
		return nil // a reload keeps what was read
	}
	var paths []string
	for _, s := range list {
		if s.Err == nil && len(paths) < maxSearched {
			paths = append(paths, s.Path)
		}
	}
	return func() tea.Msg {
		texts := map[string]string{}
		for _, p := range paths {
			if t, err := app.SearchText(p); err == nil {
				texts[p] = t
			}
		}
		return searchTextsMsg{rp: rp, texts: texts}
	}
}

// refilter matches the filter against every message too: an item whose
// messages hold it is matched as if its title began with it.
func (rp *resumePicker) refilter() {
	q := strings.ToLower(strings.TrimSpace(rp.pk.Filter()))
	items := rp.pk.Items()
	for i := range items {
		s := rp.items[items[i].Value]
		base := s.ID + " " + s.Name + " " + s.First
		items[i].Match = base
		if len(q) >= minSearch && strings.Contains(rp.texts[items[i].Value], q) {
			items[i].Match = q + " " + base
		}
	}
	rp.pk.SetItems(items)
}

// extraKey takes the picker's own keys; ok is false for the others.
func (rp *resumePicker) extraKey(m *Model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	ks := k.String()
	rp.note = ""
	switch {
	case rp.deleting != "":
		path := rp.deleting
		rp.deleting = ""
		if ks != "y" {
			return nil, true // kept
		}
		return func() tea.Msg {
			if err := app.DeleteLog(path); err != nil {
				return resumeDoneMsg{rp: rp, err: err}
			}
			return resumeDoneMsg{rp: rp, said: "deleted the session log " + path}
		}, true
	case rp.renaming:
		switch ks {
		case "esc":
			rp.renaming = false
		case "enter":
			rp.renaming = false
			return rp.rename(m), true
		case "backspace":
			if r := []rune(rp.name); len(r) > 0 {
				rp.name = string(r[:len(r)-1])
			}
		default:
			if k.Text != "" {
				rp.name += k.Text
			}
		}
		return nil, true
	}
	it, ok := rp.pk.Selected()
	switch ks {
	case "ctrl+a":
		return m.loadSessions(!rp.all, rp), true
	case "ctrl+r":
		if ok {
			rp.renaming, rp.name = true, rp.items[it.Value].Name
		}
		return nil, true
	case "ctrl+d":
		switch {
		case !ok:
		case m.sess != nil && it.Value == m.sess.Info().Path:
			rp.note = "the session in use is not deleted (/new, then delete it from there)"
		default:
			rp.deleting = it.Value
		}
		return nil, true
	}
	return nil, false
}

// rename names the session under the cursor rp.name: the one in use
// through it, another by appending to its log.
func (rp *resumePicker) rename(m *Model) tea.Cmd {
	it, ok := rp.pk.Selected()
	if !ok {
		return nil
	}
	path, name, sess := it.Value, rp.name, m.sess
	return func() tea.Msg {
		var got string
		var err error
		if sess != nil && path == sess.Info().Path {
			got, err = sess.SetName(name)
		} else {
			got, err = app.NameLog(path, name)
		}
		switch {
		case err != nil:
			return resumeDoneMsg{rp: rp, err: err}
		case got == "":
			return resumeDoneMsg{rp: rp, said: "removed the session's name"}
		}
		return resumeDoneMsg{rp: rp, said: fmt.Sprintf("named the session %q", got)}
	}
}

// resumeDone says what a rename or a delete did and lists the sessions
// again.
func (m *Model) resumeDone(msg resumeDoneMsg) tea.Cmd {
	if msg.err != nil {
		m.say(transcript.Error, "/resume: "+errText(msg.err))
	} else {
		m.say(transcript.Info, termtext.Line(msg.said))
	}
	if m.ov != msg.rp {
		return nil
	}
	return m.loadSessions(msg.rp.all, msg.rp)
}

// loadSessions lists the sessions for the picker: this directory's, or
// with all every directory's; keep is the picker a reload replaces.
func (m *Model) loadSessions(all bool, keep *resumePicker) tea.Cmd {
	a := m.o.App
	return func() tea.Msg {
		var l []SessionItem
		var err error
		if all {
			l, err = a.AllSessions()
		} else {
			l, err = a.Sessions()
		}
		return sessionsMsg{list: l, err: err, all: all, keep: keep}
	}
}

// footer is the picker's last line: the keys, or the rename or delete
// under way.
func (rp *resumePicker) footer(m *Model, width int) string {
	switch {
	case rp.renaming:
		return m.th.Accent.Render(ansi.Truncate("name: "+termtext.Line(rp.name)+"▏  Enter saves (empty removes the name) · Esc leaves it", width, "…"))
	case rp.note != "":
		return m.th.Warn.Render(ansi.Truncate(rp.note, width, "…"))
	case rp.deleting != "":
		s := rp.items[rp.deleting]
		return m.th.Warn.Render(ansi.Truncate("delete session "+treeview.Short(s.ID)+" and its log? y deletes · any other key keeps it", width, "…"))
	}
	return m.th.Dim.Render(ansi.Truncate("↑↓ move · Enter switches to the session (this one is closed) · Ctrl-A scope · Ctrl-R rename · Ctrl-D delete · Esc closes", width, "…"))
}
