package tui

// The question box as drawn: the subject wrapped and highlighted, the
// choice line always on screen (question.go takes the keys).

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/host/extension"
)

// layout wraps the subject at width: the title when it is too long for
// the head line, then the message, its highlighted parts styled.
func (d *question) layout(th *theme.Theme, width int, titleInBody bool) {
	if d.bodyW == width && d.bodyTh == th && d.body != nil {
		return
	}
	d.bodyW, d.bodyTh = width, th
	d.body, d.hl = nil, nil
	if titleInBody {
		for _, l := range wrapPlain(d.q.Title, width) {
			d.body = append(d.body, th.Bold.Render(l))
			d.hl = append(d.hl, false)
		}
		if d.q.Message != "" {
			d.body = append(d.body, "")
			d.hl = append(d.hl, false)
		}
	}
	if d.q.Message != "" {
		lines, hl := highlightWrap(th, strings.TrimRight(d.q.Message, "\n"), d.q.Highlight, width)
		d.body = append(d.body, lines...)
		d.hl = append(d.hl, hl...)
	}
	if d.body == nil {
		d.body = []string{}
	}
	d.seen = make([]bool, len(d.body)) // a new wrap: seen again
}

// questionBox draws the question on top in at most maxRows lines of
// width cells: the head, the subject (scrolled), the choices, always.
func (m *Model) questionBox(width, maxRows int) []string {
	d := m.asks[0]
	th := m.th
	now := m.now()
	if d.shown.IsZero() {
		d.shown = now
	}
	ready := d.ready(now, m.typed)
	head := wrapPlain(d.q.By+" asks", width)
	titleInBody := false
	if d.q.Title != "" {
		h := wrapPlain(d.q.By+" asks: "+d.q.Title, width)
		if len(h) <= 2 {
			head = h
		} else {
			head, titleInBody = wrapPlain(d.q.By+" asks:", width), true
		}
	}
	out := make([]string, 0, maxRows)
	for _, l := range head {
		out = append(out, th.AccentBold.Render(l))
	}
	d.layout(th, width, titleInBody)

	// What follows the subject, always on screen.
	var foot []string
	choice := func(s string) string {
		if !ready {
			return th.Faint.Render(ansi.Strip(s))
		}
		return s
	}
	switch d.q.Type {
	case extension.AskConfirm:
		if d.yes {
			foot = append(foot, th.Bold.Render("yes?")+" Enter runs it · any other key takes it back")
		} else {
			foot = append(foot, choice(th.Bold.Render("[y]")+" yes   "+th.Bold.Render("[n]")+" no   "+th.Dim.Render("Esc dismisses")))
		}
	case extension.AskSelect:
		rows := min(10, len(d.q.Options)+2, max(3, maxRows-len(out)-6))
		for _, l := range d.pk.View(th, width, rows) {
			foot = append(foot, choice(l))
		}
		if it, ok := d.pk.Selected(); ok && ansi.StringWidth(it.Title) > width-4 {
			// The list cuts a long option: the one under the cursor in
			// full below it, so what is chosen can be read (at most 12
			// lines: an option is not a document).
			full := wrapPlain(it.Title, max(10, width-2))
			if len(full) > 12 {
				full = append(full[:11], "…")
			}
			for _, l := range full {
				foot = append(foot, th.Dim.Render("  "+l))
			}
		}
		foot = append(foot, th.Dim.Render("↑↓ then Enter chooses · Esc dismisses"))
	default:
		d.input.SetWidth(max(10, width))
		rows, _, _ := d.input.View(th)
		for _, l := range rows {
			foot = append(foot, choice(l))
		}
		if d.focused {
			foot = append(foot, th.Dim.Render("Enter answers · Esc dismisses"))
		} else {
			foot = append(foot, choice(th.Bold.Render("Tab")+" answers in the field · "+th.Dim.Render("Esc dismisses")))
		}
	}
	if !d.q.Deadline.IsZero() {
		left := max(0, d.q.Deadline.Sub(now).Round(time.Second))
		foot = append(foot, th.Dim.Render(fmt.Sprintf("no answer in %s counts as none", left)))
	}
	if len(m.asks) > 1 {
		foot = append(foot, th.Dim.Render(fmt.Sprintf("%d more question(s) waiting", len(m.asks)-1)))
	}
	switch {
	case d.typing(now, m.typed):
		foot = append(foot, th.Warn.Render("typing goes to your message; pause to answer"))
	case d.q.Type != extension.AskInput && !d.focused && !m.ed.empty():
		foot = append(foot, th.Warn.Render("your message holds text: Tab answers this (the message is kept)"))
	}

	// The subject gets what is left; a line says where it is when it
	// does not fit.
	room := maxRows - len(out) - len(foot)
	if len(d.body) > 0 {
		room-- // the blank line before the choices
	}
	if len(d.body) > room {
		room-- // the position line
	}
	room = max(1, room)
	if len(d.body) == 0 {
		room = 0
	}
	d.rows = min(room, len(d.body))
	d.off = min(max(0, d.off), max(0, len(d.body)-d.rows))
	if len(d.body) > d.rows {
		keys := "↑↓ PgDn"
		if d.q.Type != extension.AskConfirm {
			keys = "PgUp PgDn" // ↑↓ are the choice's, or the field's
		}
		pos := fmt.Sprintf("lines %d–%d of %d · %s", d.off+1, d.off+d.rows, len(d.body), keys)
		if n := d.unseen(); n > 0 {
			pos += fmt.Sprintf(" · Tab: %d highlighted not seen", n)
		}
		out = append(out, th.Dim.Render(ansi.Truncate(pos, width, "…")))
	}
	for i := d.off; i < d.off+d.rows; i++ {
		d.seen[i] = true
		out = append(out, d.body[i])
	}
	if len(d.body) > 0 {
		out = append(out, "")
	}
	if ready && !d.fits() && !d.allSeen() {
		switch d.q.Type {
		case extension.AskConfirm:
			foot[0] += th.Warn.Render("  · y once all is read")
		default:
			foot[len(foot)-1] += th.Warn.Render("  · answers once all is read")
		}
	}
	return append(out, foot...)
}

// wrapPlain wraps plain text (made safe) to width, tabs as spaces.
func wrapPlain(s string, width int) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.ReplaceAll(l, "\t", "    ")
		if ansi.StringWidth(l) <= width {
			out = append(out, l)
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(l, width, ""), "\n")...)
	}
	return out
}

// maxHighlights bounds the parts of a question highlighted.
const maxHighlights = 64

// highlightWrap wraps text (made safe) to width, styling every
// occurrence of a highlighted part; hl says which lines hold one. A
// part spanning lines is matched line by line.
func highlightWrap(th *theme.Theme, text string, parts []string, width int) (lines []string, hl []bool) {
	var pieces []string
	for _, p := range parts {
		for _, q := range strings.Split(p, "\n") {
			if q = strings.TrimSpace(strings.ReplaceAll(q, "\t", "    ")); q != "" {
				pieces = append(pieces, q)
			}
		}
	}
	if len(pieces) > maxHighlights {
		pieces = pieces[:maxHighlights]
	}
	for _, line := range strings.Split(text, "\n") {
		s := strings.ReplaceAll(line, "\t", "    ")
		rs := []rune(s)
		mask := make([]bool, len(rs))
		if len(pieces) > 0 {
			// The rune each byte of s starts or belongs to.
			runeAt := make([]int, len(s)+1)
			k := 0
			for i := range s {
				for j := i; j < len(s) && (j == i || !utf8.RuneStart(s[j])); j++ {
					runeAt[j] = k
				}
				k++
			}
			runeAt[len(s)] = k
			for _, p := range pieces {
				for at := 0; at < len(s); {
					i := strings.Index(s[at:], p)
					if i < 0 {
						break
					}
					from, to := runeAt[at+i], runeAt[at+i+len(p)]
					for j := from; j < to; j++ {
						mask[j] = true
					}
					at += i + len(p)
				}
			}
		}
		for _, seg := range wrapRunes(rs, width) {
			var b strings.Builder
			any := false
			for i := seg[0]; i < seg[1]; {
				j := i
				for j < seg[1] && mask[j] == mask[i] {
					j++
				}
				if mask[i] {
					any = true
					b.WriteString(th.Highlight.Render(string(rs[i:j])))
				} else {
					b.WriteString(string(rs[i:j]))
				}
				i = j
			}
			lines = append(lines, b.String())
			hl = append(hl, any)
		}
	}
	return lines, hl
}

// wrapRunes cuts a line into rows of at most w cells, after a space when
// there is one: the rows' [start, end) rune ranges.
func wrapRunes(rs []rune, w int) [][2]int {
	w = max(1, w)
	var out [][2]int
	start := 0
	for {
		cells, i, lastSpace := 0, start, -1
		for i < len(rs) {
			cw := max(1, ansi.StringWidth(string(rs[i])))
			if cells+cw > w {
				break
			}
			cells += cw
			if rs[i] == ' ' {
				lastSpace = i
			}
			i++
		}
		if i >= len(rs) {
			return append(out, [2]int{start, len(rs)})
		}
		end := i
		if lastSpace >= start && lastSpace+1 < i {
			end = lastSpace + 1
		}
		if end == start {
			end = start + 1
		}
		out = append(out, [2]int{start, end})
		start = end
	}
}
