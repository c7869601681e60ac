// Package linediff computes, writes and reads back the line diffs that
// the edit and write tools append to their results, and the word-level
// difference of a changed line that the UI and the export highlight.
//
// The text form is a plain unified diff without file headers: hunks
// "@@ -OLD,N +NEW,M @@" followed by lines marked ' ', '-' or '+'. A
// model reads it as it reads any diff, and a reader finds the line
// numbers in the hunk headers. Format writes it, Parse reads it back out
// of a tool result (the text before the first hunk is the result's own
// words).
//
// What does not belong here: how a diff is drawn (the UI's transcript
// and the export each draw it), and anything that touches files.
package linediff

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Kind says what a diff line is.
type Kind byte

// The kinds of diff line, as the unified form marks them.
const (
	Context Kind = ' '
	Delete  Kind = '-'
	Insert  Kind = '+'
)

// Line is one line of a hunk, without its newline.
type Line struct {
	Kind Kind
	Text string
}

// Hunk is a run of changed lines with their context. OldStart and
// NewStart are the 1-based numbers of its first line in the old and the
// new file (for a hunk with no old lines, the line before it, as diff
// does; 0 at the top of the file).
type Hunk struct {
	OldStart, NewStart int
	Lines              []Line
}

// Counts returns how many old and new lines the hunk spans.
func (h Hunk) Counts() (old, new int) {
	for _, l := range h.Lines {
		switch l.Kind {
		case Delete:
			old++
		case Insert:
			new++
		default:
			old++
			new++
		}
	}
	return old, new
}

// Numbered calls f with each line of h and its number: the old file's
// for a deleted line, the new file's for the others.
func (h Hunk) Numbered(f func(n int, l Line)) {
	o, n := h.OldStart, h.NewStart
	if oc, _ := h.Counts(); oc == 0 {
		o++
	}
	if _, nc := h.Counts(); nc == 0 {
		n++
	}
	for _, l := range h.Lines {
		switch l.Kind {
		case Delete:
			f(o, l)
			o++
		case Insert:
			f(n, l)
			n++
		default:
			f(n, l)
			o++
			n++
		}
	}
}

// Diff returns the hunks that turn before into after, each with context
// lines of unchanged text around its changes. Equal texts have none.
//
// The lines both texts share at their start and end are set aside
// before the diff is computed, so an edit in a large file costs little
// more than a pass over it.
func Diff(before, after string, context int) []Hunk {
	if before == after {
		return nil
	}
	a, b := split(before), split(after)
	// The shared head and tail, then the diff of what is between.
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var ds []lcs.Diff
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	if len(ma) > 0 || len(mb) > 0 {
		for _, d := range diffLines(ma, mb, refineDepth) {
			d.Start += head
			d.End += head
			d.ReplStart += head
			d.ReplEnd += head
			ds = append(ds, d)
		}
	}
	var out []Hunk
	var h *Hunk
	ai, bi := 0, 0 // the next old and new line not yet in a hunk
	for _, d := range ds {
		if h != nil && d.Start-ai > 2*context {
			// Too far from the last change: close the hunk.
			for k := 0; k < context && ai+k < len(a); k++ {
				h.Lines = append(h.Lines, Line{Context, a[ai+k]})
			}
			out = append(out, *h)
			h = nil
		}
		if h == nil {
			from := max(d.Start-context, 0)
			skip := d.Start - from
			h = &Hunk{OldStart: from + 1, NewStart: d.ReplStart - skip + 1}
			ai, bi = from, d.ReplStart-skip
		}
		for ; ai < d.Start; ai, bi = ai+1, bi+1 {
			h.Lines = append(h.Lines, Line{Context, a[ai]})
		}
		for ; ai < d.End; ai++ {
			h.Lines = append(h.Lines, Line{Delete, a[ai]})
		}
		for ; bi < d.ReplEnd; bi++ {
			h.Lines = append(h.Lines, Line{Insert, b[bi]})
		}
	}
	if h != nil {
		for k := 0; k < context && ai+k < len(a); k++ {
			h.Lines = append(h.Lines, Line{Context, a[ai+k]})
		}
		out = append(out, *h)
	}
	for i := range out {
		// diff numbers an empty side by the line before it.
		if oc, nc := out[i].Counts(); oc == 0 {
			out[i].OldStart--
		} else if nc == 0 {
			out[i].NewStart--
		}
	}
	return out
}

// refineDepth is how many times diffLines diffs again a block the
// search gave up on.
const refineDepth = 4

// diffLines is the line diff of a and b. The LCS search bounds its
// effort: past some 50 changes it gives up and replaces a whole stretch
// that holds both changed and equal lines; such a stretch is diffed again
// on its own, up to depth times, so a file with many scattered changes
// still shows them one by one.
func diffLines(a, b []string, depth int) []lcs.Diff {
	ds := lcs.DiffLines(a, b)
	if depth == 0 {
		return ds
	}
	var out []lcs.Diff
	for _, d := range ds {
		la, lb := d.End-d.Start, d.ReplEnd-d.ReplStart
		if la > 1 && lb > 1 && (len(ds) > 1 || la < len(a) || lb < len(b)) {
			sub := diffLines(a[d.Start:d.End], b[d.ReplStart:d.ReplEnd], depth-1)
			if len(sub) != 1 || sub[0].End-sub[0].Start != la || sub[0].ReplEnd-sub[0].ReplStart != lb {
				for _, x := range sub {
					out = append(out, lcs.Diff{Start: x.Start + d.Start, End: x.End + d.Start,
						ReplStart: x.ReplStart + d.ReplStart, ReplEnd: x.ReplEnd + d.ReplStart})
				}
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// split cuts s into lines without their newlines; a final newline ends
// the last line rather than starting an empty one.
func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Limits of Format: a diff the model reads costs what it is long.
const (
	// MaxLines is the most diff lines Format writes.
	MaxLines = 200
	// MaxLineBytes is the most bytes of one line Format writes.
	MaxLineBytes = 400
)

// Format writes hunks in the unified form, at most MaxLines lines of
// MaxLineBytes bytes each (a CRLF file's lines without their CR); a diff
// cut short ends with a line that says so. No hunks is "".
func Format(hunks []Hunk) string { return format(hunks, MaxLines, MaxLineBytes) }

// FormatAll writes hunks in the unified form as Format does, but whole:
// every line, each as long as it is. It is for a diff a person asked
// for (panto prompt diff), which must not be cut silently; what the model
// reads goes through Format.
func FormatAll(hunks []Hunk) string { return format(hunks, 0, 0) }

// format writes at most maxLines lines of maxLineBytes bytes each; 0 is
// no limit.
func format(hunks []Hunk, maxLines, maxLineBytes int) string {
	var b strings.Builder
	left := maxLines
	hidden := 0
	for _, h := range hunks {
		if maxLines > 0 {
			if left <= 0 {
				hidden += len(h.Lines)
				continue
			}
			if len(h.Lines) > left {
				hidden += len(h.Lines) - left
				h.Lines = h.Lines[:left]
			}
			left -= len(h.Lines)
		}
		oc, nc := h.Counts()
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", span(h.OldStart, oc), span(h.NewStart, nc))
		for _, l := range h.Lines {
			b.WriteByte(byte(l.Kind))
			text := strings.TrimSuffix(l.Text, "\r")
			if maxLineBytes > 0 {
				text = cut(text, maxLineBytes)
			}
			b.WriteString(text)
			b.WriteByte('\n')
		}
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "[diff cut: %d more lines not shown]\n", hidden)
	}
	return b.String()
}

// span is a hunk header's range: "3,7", or "3" for one line.
func span(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

// cut shortens s to at most n bytes, on a character boundary, marking
// the cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

var header = regexp.MustCompile(`^@@ -([0-9]+)(?:,([0-9]+))? \+([0-9]+)(?:,([0-9]+))? @@`)

// Parse reads the diff out of a tool result: the text before its first
// hunk header (trimmed), the hunks, and whether the diff was cut (see
// Format). A result without a diff is all head and no hunks. A hunk whose
// lines do not match its header ends the diff there.
func Parse(result string) (head string, hunks []Hunk, cutShort bool) {
	lines := strings.Split(strings.ReplaceAll(result, "\r\n", "\n"), "\n")
	first := -1
	for i, l := range lines {
		if header.MatchString(l) {
			first = i
			break
		}
	}
	if first < 0 {
		return strings.TrimSpace(result), nil, false
	}
	head = strings.TrimSpace(strings.Join(lines[:first], "\n"))
	i := first
	for i < len(lines) {
		m := header.FindStringSubmatch(lines[i])
		if m == nil {
			break
		}
		h := Hunk{OldStart: atoi(m[1]), NewStart: atoi(m[3])}
		oc, nc := count(m[2]), count(m[4])
		i++
		for (oc > 0 || nc > 0) && i < len(lines) {
			l := lines[i]
			if l == "" {
				l = " " // a context line whose space was trimmed
			}
			k := Kind(l[0])
			switch {
			case k == Delete && oc > 0:
				oc--
			case k == Insert && nc > 0:
				nc--
			case k == Context && oc > 0 && nc > 0:
				oc--
				nc--
			default:
				return head, append(hunks, h), false
			}
			h.Lines = append(h.Lines, Line{k, l[1:]})
			i++
		}
		hunks = append(hunks, h)
	}
	if i < len(lines) && strings.HasPrefix(lines[i], "[diff cut:") {
		cutShort = true
	}
	return head, hunks, cutShort
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// count is a header range's count: absent means 1.
func count(s string) int {
	if s == "" {
		return 1
	}
	return atoi(s)
}

// Seg is a piece of a changed line: Changed when the other line of its
// pair does not have it.
type Seg struct {
	Text    string
	Changed bool
}

// HunkWords pairs each run of deleted lines with the run of inserted
// lines after it, line by line, and returns for each line its pieces as
// Words cuts them: nil for a context line, for a line without a partner,
// and for a pair that shares too little.
func HunkWords(lines []Line) [][]Seg {
	out := make([][]Seg, len(lines))
	for i := 0; i < len(lines); {
		if lines[i].Kind != Delete {
			i++
			continue
		}
		d := i
		for i < len(lines) && lines[i].Kind == Delete {
			i++
		}
		a := i
		for i < len(lines) && lines[i].Kind == Insert {
			i++
		}
		for k := 0; k < a-d && k < i-a; k++ {
			out[d+k], out[a+k] = Words(lines[d+k].Text, lines[a+k].Text)
		}
	}
	return out
}

// maxWordTokens bounds the word diff of one pair of lines.
const maxWordTokens = 400

// Words returns the word-level difference of an old line and the new
// line that replaced it: each as its pieces, the ones the other line
// lacks marked Changed. When the lines share too little for a word
// highlight to help (less than a third of their text), or are very long,
// it returns nil, nil: the whole line is the change.
func Words(old, new string) (a, b []Seg) {
	ta, tb := tokens(old), tokens(new)
	if len(ta) > maxWordTokens || len(tb) > maxWordTokens || old == new {
		return nil, nil
	}
	ds := lcs.DiffLines(ta, tb)
	same := len(old)
	for _, d := range ds {
		for _, t := range ta[d.Start:d.End] {
			same -= len(t)
		}
	}
	if same*3 < max(len(old), len(new)) || strings.TrimSpace(commonText(ta, ds)) == "" {
		return nil, nil
	}
	a = segs(ta, ds, func(d lcs.Diff) (int, int) { return d.Start, d.End })
	b = segs(tb, ds, func(d lcs.Diff) (int, int) { return d.ReplStart, d.ReplEnd })
	return a, b
}

// commonText is what of ta no diff removes.
func commonText(ta []string, ds []lcs.Diff) string {
	var b strings.Builder
	at := 0
	for _, d := range ds {
		b.WriteString(strings.Join(ta[at:d.Start], ""))
		at = d.End
	}
	b.WriteString(strings.Join(ta[at:], ""))
	return b.String()
}

// segs cuts toks into pieces at the ranges that ds changes.
func segs(toks []string, ds []lcs.Diff, span func(lcs.Diff) (int, int)) []Seg {
	var out []Seg
	add := func(t string, changed bool) {
		if t == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Changed == changed {
			out[n-1].Text += t
			return
		}
		out = append(out, Seg{t, changed})
	}
	at := 0
	for _, d := range ds {
		s, e := span(d)
		add(strings.Join(toks[at:s], ""), false)
		add(strings.Join(toks[s:e], ""), true)
		at = e
	}
	add(strings.Join(toks[at:], ""), false)
	return out
}

// tokens cuts a line into words (letters, digits, '_'), runs of spaces,
// runs of operator characters ("<=", ":="), and single brackets, quotes
// and separators.
func tokens(s string) []string {
	var out []string
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		cls := class(r)
		if cls == 0 {
			out = append(out, s[:n])
			s = s[n:]
			continue
		}
		i := n
		for i < len(s) {
			r2, n2 := utf8.DecodeRuneInString(s[i:])
			if class(r2) != cls {
				break
			}
			i += n2
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// class groups the characters that make one token: 1 word, 2 space, 3
// operator, 0 each on its own.
func class(r rune) int {
	switch {
	case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
		return 1
	case unicode.IsSpace(r):
		return 2
	case strings.ContainsRune("()[]{}\"'`,;", r):
		return 0
	case unicode.IsPunct(r) || unicode.IsSymbol(r):
		return 3
	}
	return 0
}
