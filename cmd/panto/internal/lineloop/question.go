package lineloop

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// Grace is how long after a question appears a line that ends is taken
// as typed before it was read, and ignored.
const Grace = 300 * time.Millisecond

// longMessage is the number of lines past which a question says how long
// its message was (to scroll back to).
const longMessage = 20

// A message of more than wholeMessage lines is shown as an excerpt, so
// that what matters stays in a terminal's scrollback (often 1,000 or
// 2,000 lines; a 5,000-line command pushed its own rm -rf out): its
// first and last excerptLines lines, and, between them, every line
// holding a highlighted part (at most maxHighlighted), each with its
// number. The note says what was left out.
const (
	wholeMessage   = 500
	excerptLines   = 60
	maxHighlighted = 60
)

// Decide is the answer a line typed gives q: a confirm is yes for the
// word yes alone; a select takes a number from its list; an input any
// text. An empty line (or, for a select, anything but a number from the
// list) dismisses it.
func Decide(q host.Question, text string) (a extension.Answer, dismiss bool, note string) {
	switch q.Type {
	case extension.AskConfirm:
		a.Yes = strings.EqualFold(text, "yes")
		if !a.Yes && text != "" && !strings.EqualFold(text, "no") && !strings.EqualFold(text, "n") {
			note = "(no: only the word yes confirms)"
		}
		return a, false, note
	case extension.AskSelect:
		var n int
		if _, err := fmt.Sscan(text, &n); err != nil || n < 1 || n > len(q.Options) || strings.TrimSpace(text) != strconv.Itoa(n) {
			return a, true, "(dismissed)"
		}
		a.Index = n - 1
		return a, false, ""
	}
	if text == "" {
		return a, true, "(dismissed)"
	}
	a.Text = text
	return a, false, ""
}

// Text is a question as the line loop shows it, ending with its
// choice line. Every text in it is the extension's, escaped: nothing in
// it can move the cursor, erase a line or hide the choice.
func Text(q host.Question) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n? %s asks: %s\n", termtext.Line(q.By), termtext.Line(q.Title))
	if msg := strings.TrimRight(q.Message, "\n"); msg != "" {
		lines := strings.Split(termtext.Sanitize(msg), "\n")
		marks := highlights(q.Highlight)
		show := func(l, prefix string) {
			if l == "" {
				b.WriteString("\n")
				return
			}
			pad := "  " + strings.Repeat(" ", ansi.StringWidth(prefix))
			if ansi.StringWidth(l) > maxLineCells {
				writeLongLine(&b, l, prefix, pad, marks)
				return
			}
			b.WriteString("  " + prefix + l + "\n")
			if c := caretLine(l, marks); c != "" {
				b.WriteString(pad + c + "\n")
			}
		}
		// Rows, not lines: one line of 400,000 characters wraps to
		// thousands of rows and pushed the question out of the
		// scrollback.
		rows, cut := 0, false
		for _, l := range lines {
			w := ansi.StringWidth(l)
			rows += max(1, (min(w, maxLineCells)+assumedWidth-1)/assumedWidth)
			cut = cut || w > maxLineCells
		}
		switch {
		case rows > wholeMessage && len(lines) > 2*excerptLines:
			writeExcerpt(&b, lines, marks, show)
		default:
			for _, l := range lines {
				show(l, "")
			}
			switch {
			case cut:
				fmt.Fprintf(&b, "  (%d lines; the longest are cut, and every highlighted part of what was cut is shown under its line)\n", len(lines))
			case len(lines) > longMessage:
				fmt.Fprintf(&b, "  (%d lines: the whole message is above)\n", len(lines))
			}
		}
	}
	switch q.Type {
	case extension.AskSelect:
		for i, o := range q.Options {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, termtext.Line(o))
		}
	case extension.AskConfirm:
	default:
		if q.Placeholder != "" {
			fmt.Fprintf(&b, "  (%s)\n", termtext.Line(q.Placeholder))
		}
	}
	b.WriteString(Choice(q))
	return b.String()
}

// A line wider than maxLineCells shows its first maxLineCells cells and,
// under it, each highlighted part of the rest with some context (at most
// maxCutParts); rows are counted at assumedWidth columns.
const (
	maxLineCells = 1000
	maxCutParts  = 20
	assumedWidth = 80
	cutContext   = 40
)

// writeLongLine shows a line too long to show whole.
func writeLongLine(b *strings.Builder, l, prefix, pad string, marks []string) {
	head := ansi.Truncate(l, maxLineCells, "")
	rest := l[len(head):]
	b.WriteString("  " + prefix + head + " …\n")
	if c := caretLine(head, marks); c != "" {
		b.WriteString(pad + c + "\n")
	}
	fmt.Fprintf(b, "%s(the line goes on for %d more characters, not shown", pad, utf8.RuneCountInString(rest))
	var parts [][2]int
	for _, m := range marks {
		for off := 0; off < len(rest) && len(parts) <= maxCutParts; {
			i := strings.Index(rest[off:], m)
			if i < 0 {
				break
			}
			parts = append(parts, [2]int{off + i, off + i + len(m)})
			off += i + len(m)
		}
	}
	if len(parts) == 0 {
		b.WriteString("; none of it holds a highlighted part)\n")
		return
	}
	b.WriteString("; the highlighted parts in it:)\n")
	for k, p := range parts {
		if k == maxCutParts {
			b.WriteString(pad + "… and more highlighted parts\n")
			break
		}
		from, to := max(0, p[0]-cutContext), min(len(rest), p[1]+cutContext)
		for from > 0 && !utf8.RuneStart(rest[from]) {
			from--
		}
		for to < len(rest) && !utf8.RuneStart(rest[to]) {
			to++
		}
		snip := "…" + rest[from:to] + "…"
		b.WriteString(pad + snip + "\n")
		if c := caretLine(snip, marks); c != "" {
			b.WriteString(pad + c + "\n")
		}
	}
}

// writeExcerpt shows a long message's head, its highlighted lines and its
// tail (see wholeMessage), numbered, and says what it left out.
func writeExcerpt(b *strings.Builder, lines, marks []string, show func(l, prefix string)) {
	n := len(lines)
	width := len(strconv.Itoa(n))
	num := func(i int) string { return fmt.Sprintf("%*d│ ", width, i+1) }
	for i := range excerptLines {
		show(lines[i], num(i))
	}
	var hl []int
	for i := excerptLines; i < n-excerptLines; i++ {
		if caretLine(lines[i], marks) != "" {
			hl = append(hl, i)
		}
	}
	left := n - 2*excerptLines
	switch {
	case len(hl) == 0:
		fmt.Fprintf(b, "  … lines %d–%d are not shown (%d lines; none of them holds a highlighted part)\n", excerptLines+1, n-excerptLines, left)
	default:
		fmt.Fprintf(b, "  … lines %d–%d are not shown (%d lines) but for the %d that hold a highlighted part:\n", excerptLines+1, n-excerptLines, left, len(hl))
		for k, i := range hl {
			if k == maxHighlighted {
				fmt.Fprintf(b, "  … and %d more lines that hold a highlighted part\n", len(hl)-maxHighlighted)
				break
			}
			show(lines[i], num(i))
		}
		fmt.Fprintf(b, "  … the last %d lines:\n", excerptLines)
	}
	for i := n - excerptLines; i < n; i++ {
		show(lines[i], num(i))
	}
	fmt.Fprintf(b, "  (%d lines in all: too long to show whole here; only the lines above were shown)\n", n)
}

// Choice is the last line of a question: what to type.
func Choice(q host.Question) string {
	switch q.Type {
	case extension.AskConfirm:
		return "  type yes to confirm, anything else is no: "
	case extension.AskSelect:
		return "  number (empty to dismiss): "
	}
	return "  > "
}

// highlights are the pieces of the highlighted parts to mark, as they
// read escaped and line by line.
func highlights(parts []string) []string {
	var out []string
	for _, p := range parts {
		for _, piece := range strings.Split(termtext.Sanitize(p), "\n") {
			if strings.TrimSpace(piece) != "" {
				out = append(out, piece)
			}
		}
	}
	return out
}

// caretLine marks with ^ where the pieces occur in line (an escaped
// line of the message), or is "" when none does. It is aligned under the
// line: a tab under a tab, the width of each rune in spaces.
func caretLine(line string, pieces []string) string {
	if len(pieces) == 0 {
		return ""
	}
	marked := make([]bool, len(line))
	found := false
	for _, p := range pieces {
		for from := 0; from < len(line); {
			i := strings.Index(line[from:], p)
			if i < 0 {
				break
			}
			for k := from + i; k < from+i+len(p); k++ {
				marked[k] = true
			}
			found = true
			from += i + len(p)
		}
	}
	if !found {
		return ""
	}
	var b strings.Builder
	for i, r := range line {
		w := ansi.StringWidth(string(r))
		switch {
		case marked[i]:
			b.WriteString(strings.Repeat("^", w))
		case r == '\t':
			b.WriteByte('\t')
		default:
			b.WriteString(strings.Repeat(" ", w))
		}
	}
	return strings.TrimRight(b.String(), " \t")
}
