package transcript

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/internal/linediff"
)

// drawHunks draws the diff an edit or write result carries (see linediff):
// each line with its number in the file (the old file's for a deleted
// line), its mark and its text, the changed words of a changed line
// highlighted, and "⋮" between hunks. The text is outside text: it is
// made safe for the terminal here.
func drawHunks(th *theme.Theme, hunks []linediff.Hunk, cutShort bool, width int) []string {
	nw := 1
	for _, h := range hunks {
		oc, nc := h.Counts()
		nw = max(nw, len(strconv.Itoa(h.OldStart+oc)), len(strconv.Itoa(h.NewStart+nc)))
	}
	var out []string
	for i, h := range hunks {
		h.Lines = append([]linediff.Line(nil), h.Lines...)
		if i > 0 {
			out = append(out, th.Dim.Render(strings.Repeat(" ", nw)+" ⋮"))
		}
		// What the terminal shows of each line, then the words of it.
		for k := range h.Lines {
			h.Lines[k].Text = safeLine(h.Lines[k].Text)
		}
		words := linediff.HunkWords(h.Lines)
		k := 0
		h.Numbered(func(n int, l linediff.Line) {
			out = append(out, diffLine(th, nw, n, l, words[k], width))
			k++
		})
	}
	if cutShort {
		out = append(out, th.Dim.Render(cut(strings.Repeat(" ", nw)+" … the rest of the diff was cut", width)))
	}
	return out
}

// DrawHunks draws hunks as an edit's diff is drawn (drawHunks), for a
// diff of another text: the /tree pane's "what changed here" in the
// system prompt.
func DrawHunks(th *theme.Theme, hunks []linediff.Hunk, width int) []string {
	return drawHunks(th, hunks, false, width)
}

// drawNewFile draws a new file's content as added lines, numbered from 1.
func drawNewFile(th *theme.Theme, content string, width int) []string {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	h := linediff.Hunk{NewStart: 1}
	for _, l := range lines {
		h.Lines = append(h.Lines, linediff.Line{Kind: linediff.Insert, Text: l})
	}
	return drawHunks(th, []linediff.Hunk{h}, false, width)
}

// diffLine is one line: its number, its mark, its text (made safe).
func diffLine(th *theme.Theme, nw, n int, l linediff.Line, words []linediff.Seg, width int) string {
	num := th.Dim.Render(fmt.Sprintf("%*d ", nw, n))
	base, word := th.Dim, th.Dim
	switch l.Kind {
	case linediff.Delete:
		base, word = th.DiffDel, th.DiffDelWord
	case linediff.Insert:
		base, word = th.DiffAdd, th.DiffAddWord
	}
	var b strings.Builder
	b.WriteString(base.Render(string(l.Kind) + " "))
	if words == nil {
		b.WriteString(base.Render(l.Text))
	} else {
		for _, s := range words {
			if s.Changed {
				b.WriteString(word.Render(s.Text))
			} else {
				b.WriteString(base.Render(s.Text))
			}
		}
	}
	return num + cut(b.String(), max(width-nw-1, 1))
}

// safeLine is a file's line as the terminal may show it: sanitized, tabs
// as spaces.
func safeLine(s string) string { return expandTabs(termtext.Sanitize(s)) }

// diffStat is "+A -D", the lines a result's diff adds and removes; ""
// without a diff (or when it was cut: the count would be short).
func diffStat(result string) string {
	_, hunks, cutShort := linediff.Parse(result)
	if len(hunks) == 0 || cutShort {
		return ""
	}
	add, del := 0, 0
	for _, h := range hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case linediff.Insert:
				add++
			case linediff.Delete:
				del++
			}
		}
	}
	return fmt.Sprintf("+%d -%d", add, del)
}
