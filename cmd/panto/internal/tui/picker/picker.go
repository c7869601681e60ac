// Package picker is a list to choose from: filtered as you type, with an
// optional preview pane beside it (or under it, on a narrow screen). The
// command palette, /model, and the session and tree views use it.
//
// It is a plain component, not a tea.Model: its owner feeds it keys and
// draws its lines where it wants them.
//
// Items hold outside text (file names, commands' descriptions, session
// summaries, a tree's rows): the picker shows each through termtext, and
// gives the owner the item as it was (a file name completed is the
// file's name). A preview's lines are the owner's, made safe by it.
package picker

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

// Item is one choice.
type Item struct {
	// Title is what the row shows first; Desc follows it, dimmed.
	Title, Desc string
	// Mark is shown before the title ("*" for the model in use).
	Mark string
	// Value is what the choice means to the owner; Title when empty.
	Value string
	// Match is the text the filter matches; Title when empty.
	Match string
}

func (it Item) value() string {
	if it.Value != "" {
		return it.Value
	}
	return it.Title
}

// Key returns the item's value.
func (it Item) Key() string { return it.value() }

func (it Item) match() string {
	if it.Match != "" {
		return it.Match
	}
	return it.Title
}

// Action is what a key did.
type Action int

// The actions.
const (
	// None: the key moved the cursor or changed the filter (or nothing).
	None Action = iota
	// Choose: Enter on an item.
	Choose
	// Cancel: Esc.
	Cancel
)

// Model is a picker.
type Model struct {
	// Title heads the list ("Models"); Hint is the dimmed line under it.
	Title, Hint string
	// Preview, when set, draws the preview pane of the item under the
	// cursor, at most width×height cells.
	Preview func(it Item, width, height int) []string
	// OwnFilter makes typed text filter the list; without it the owner
	// sets the filter (the palette follows the editor).
	OwnFilter bool
	// Empty is said when nothing matches.
	Empty string
	// ListShare is the list's share of a wide screen beside a preview,
	// in percent (40 when 0).
	ListShare int

	items  []Item
	shown  []int
	cursor int
	offset int
	filter string
}

// New returns a picker of items.
func New(title string, items []Item) *Model {
	m := &Model{Title: title, OwnFilter: true, Empty: "nothing matches"}
	m.SetItems(items)
	return m
}

// SetItems replaces the items, keeping the filter.
func (m *Model) SetItems(items []Item) {
	m.items = items
	m.refilter()
}

// Items returns the items.
func (m *Model) Items() []Item { return m.items }

// SetFilter filters the list by q.
func (m *Model) SetFilter(q string) {
	if q == m.filter {
		return
	}
	m.filter = q
	m.refilter()
}

// Filter returns the filter.
func (m *Model) Filter() string { return m.filter }

// Len is how many items match the filter.
func (m *Model) Len() int { return len(m.shown) }

// Select puts the cursor on the item whose value is v, if it shows.
func (m *Model) Select(v string) {
	for i, idx := range m.shown {
		if m.items[idx].value() == v {
			m.cursor = i
			return
		}
	}
}

// Selected returns the item under the cursor.
func (m *Model) Selected() (Item, bool) {
	if len(m.shown) == 0 {
		return Item{}, false
	}
	return m.items[m.shown[m.cursor]], true
}

// Move moves the cursor by n rows (wrapping at the ends for ±1).
func (m *Model) Move(n int) {
	if len(m.shown) == 0 {
		return
	}
	c := m.cursor + n
	switch {
	case (n == 1 || n == -1) && c < 0:
		c = len(m.shown) - 1
	case (n == 1 || n == -1) && c >= len(m.shown):
		c = 0
	}
	m.cursor = min(max(c, 0), len(m.shown)-1)
}

// Update takes a key.
func (m *Model) Update(k tea.KeyPressMsg) Action {
	switch k.String() {
	case "up", "ctrl+p":
		m.Move(-1)
	case "down", "ctrl+n", "tab":
		m.Move(1)
	case "shift+tab":
		m.Move(-1)
	case "pgup":
		m.Move(-10)
	case "pgdown":
		m.Move(10)
	case "home":
		m.cursor = 0
	case "end":
		m.cursor = max(0, len(m.shown)-1)
	case "enter":
		if len(m.shown) > 0 {
			return Choose
		}
	case "esc", "ctrl+c":
		return Cancel
	case "backspace":
		if m.OwnFilter && m.filter != "" {
			_, n := utf8.DecodeLastRuneInString(m.filter)
			m.SetFilter(m.filter[:len(m.filter)-n])
		}
	case "ctrl+u":
		if m.OwnFilter {
			m.SetFilter("")
		}
	default:
		if m.OwnFilter && k.Text != "" {
			m.SetFilter(m.filter + k.Text)
		}
	}
	return None
}

// refilter recomputes the rows that match, best first.
func (m *Model) refilter() {
	m.shown = m.shown[:0]
	q := strings.ToLower(strings.TrimSpace(m.filter))
	type scored struct{ idx, score int }
	var s []scored
	for i, it := range m.items {
		if sc, ok := Score(q, strings.ToLower(it.match())); ok {
			s = append(s, scored{i, sc})
		}
	}
	sort.SliceStable(s, func(a, b int) bool { return s[a].score < s[b].score })
	for _, x := range s {
		m.shown = append(m.shown, x.idx)
	}
	m.cursor = min(m.cursor, max(0, len(m.shown)-1))
	if q != "" {
		m.cursor = 0
	}
	m.offset = 0
}

// Score says how well q matches s (lower is better): a prefix, then a
// word's prefix, then a substring, then the letters in order.
func Score(q, s string) (int, bool) {
	switch {
	case q == "":
		return 0, true
	case strings.HasPrefix(s, q):
		return 0, true
	}
	if i := strings.Index(s, q); i >= 0 {
		if i > 0 && strings.ContainsRune(" -_/:.", rune(s[i-1])) {
			return 1, true
		}
		return 2, true
	}
	j := 0
	for _, r := range s {
		if j < len(q) && byte(r) == q[j] {
			j++
		}
	}
	if j == len(q) {
		return 3 + len(s) - len(q), true
	}
	return 0, false
}

// View draws the picker in width×height cells (fewer lines when the list
// is short): the title, the filter, the rows and the preview pane.
func (m *Model) View(th *theme.Theme, width, height int) []string {
	var head []string
	if m.Title != "" {
		head = append(head, th.AccentBold.Render(ansi.Truncate(termtext.Line(m.Title), width, "…")))
	}
	if m.OwnFilter {
		f := termtext.Line(m.filter)
		if f == "" {
			f = th.Dim.Render("type to filter")
		}
		head = append(head, th.Dim.Render("› ")+f)
	}
	if m.Hint != "" {
		head = append(head, th.Dim.Render(ansi.Truncate(termtext.Line(m.Hint), width, "…")))
	}
	rowsH := max(1, height-len(head))
	if m.Preview == nil {
		return append(head, m.rows(th, width, rowsH)...)
	}
	if width >= 70 {
		share := m.ListShare
		if share <= 0 {
			share = 40
		}
		lw := max(24, width*share/100)
		rows := m.rows(th, lw, rowsH)
		var pv []string
		if it, ok := m.Selected(); ok {
			pv = m.Preview(it, width-lw-3, rowsH)
		}
		n := max(len(rows), min(len(pv), rowsH))
		out := head
		for i := range n {
			l, r := "", ""
			if i < len(rows) {
				l = rows[i]
			}
			if i < len(pv) {
				r = ansi.Truncate(pv[i], width-lw-3, "…")
			}
			out = append(out, theme.Pad(l, lw)+th.Border.Render(" │ ")+r)
		}
		return out
	}
	// Narrow: the list, then the preview under it.
	rows := m.rows(th, width, max(1, rowsH/2))
	out := append(head, rows...)
	if it, ok := m.Selected(); ok && rowsH-len(rows) > 1 {
		out = append(out, th.Border.Render(strings.Repeat("─", width)))
		for _, l := range m.Preview(it, width, rowsH-len(rows)-1) {
			out = append(out, ansi.Truncate(l, width, "…"))
		}
	}
	return out
}

// rows draws the visible rows, the cursor's reversed.
func (m *Model) rows(th *theme.Theme, width, height int) []string {
	if len(m.shown) == 0 {
		return []string{th.Dim.Render(m.Empty)}
	}
	visible := height
	if len(m.shown) > height && height > 1 {
		visible = height - 1 // the last row says how many more
	}
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+visible {
		m.offset = m.cursor - visible + 1
	}
	// Descriptions line up after the widest title on screen.
	tw := 0
	for i := m.offset; i < len(m.shown) && i < m.offset+visible; i++ {
		tw = max(tw, ansi.StringWidth(termtext.Line(m.items[m.shown[i]].Title)))
	}
	tw = min(tw, width*2/5)
	var out []string
	for i := m.offset; i < len(m.shown) && len(out) < visible; i++ {
		it := m.items[m.shown[i]]
		title, desc := termtext.Line(it.Title), termtext.Line(it.Desc)
		mark := "  "
		if it.Mark != "" {
			mark = ansi.Truncate(termtext.Line(it.Mark), 1, "") + " "
		}
		line := mark + title
		if desc != "" {
			line = mark + theme.Pad(title, tw)
			room := width - ansi.StringWidth(line) - 2
			if room > 4 {
				line += "  " + th.Dim.Render(ansi.Truncate(desc, room, "…"))
			}
		}
		line = ansi.Truncate(line, width, "…")
		if i == m.cursor {
			line = th.Selected.Render(theme.Pad(ansi.Strip(line), width))
		}
		out = append(out, line)
	}
	if rest := len(m.shown) - m.offset - len(out); rest > 0 {
		out = append(out, th.Dim.Render(ansi.Truncate("  … "+strconv.Itoa(rest)+" more", width, "…")))
	}
	return out
}
