package contextview

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// sourceWidth is the widest the source column gets, in runes: a longer
// source keeps its end (a path's file name).
const sourceWidth = 52

// Write shows b as a table: each part with its source or key, its
// estimate and, when the provider's count of the last request is known,
// its share of it; the totals; then the last request and the window.
// panto prompt --tokens shows it.
func Write(w io.Writer, b Breakdown) { WriteWidth(w, b, 0) }

// WriteWidth is Write with the table fitted to width columns, where it
// can be, by cutting the sources (0: no limit): /context.
func WriteWidth(w io.Writer, b Breakdown, width int) {
	shares := b.Scaled > 0
	head := []string{"PART", "SOURCE · KEY", "ESTIMATE"}
	if shares {
		head = append(head, "≈ SHARE OF THE REAL "+Num(b.Last.Real))
	}
	rows := [][]string{head}
	// paths are the rows whose source is a block's: cut at the start,
	// where a path's file name survives; the others keep their start.
	paths := map[int]bool{}
	add := func(part, from string, est int, share *int) {
		r := []string{part, from, "~" + Num(est)}
		if shares {
			s := ""
			if share != nil {
				s = Num(*share)
			}
			r = append(r, s)
		}
		rows = append(rows, r)
	}
	group := func(k Kind, name, from string) {
		est, share, _, ok := b.sum(k)
		if ok {
			add(name, from, est, &share)
		} else {
			add(name, from, est, nil)
		}
	}

	_, _, blocks, _ := b.sum(System)
	group(System, "system prompt", plural(blocks, "block"))
	for _, p := range b.Parts {
		if p.Kind == System {
			paths[len(rows)] = true
			add("  "+p.Name, blockFrom(p), p.Estimate, p.Share)
		}
	}
	if _, _, n, _ := b.sum(Tools); n > 0 {
		tools := 0
		for _, p := range b.Parts {
			if p.Kind == Tools {
				tools += p.Count
			}
		}
		group(Tools, "tools", plural(tools, "tool")+" of "+plural(n, "extension")+" (schemas)")
		for _, p := range b.Parts {
			if p.Kind == Tools {
				add("  "+termtext.Line(p.Name), b.toolsFrom(p), p.Estimate, p.Share)
			}
		}
	} else {
		rows = append(rows, []string{"tools", "none offered"})
	}
	msgs, est, share, ok := 0, 0, 0, true
	for _, p := range b.Parts {
		if p.Kind == Summary || p.Kind == Messages {
			msgs += p.Count
			est += p.Estimate
			if p.Share == nil {
				ok = false
			} else {
				share += *p.Share
			}
		}
	}
	if ok && msgs > 0 {
		add("conversation", plural(msgs, "message"), est, &share)
	} else {
		add("conversation", plural(msgs, "message"), est, nil)
	}
	for _, p := range b.Parts {
		if p.Kind == Summary || p.Kind == Messages {
			add("  "+roleName(p), plural(p.Count, "message"), p.Estimate, p.Share)
		}
	}
	for _, p := range b.Parts {
		if p.Kind == Framing {
			what := "the reply's start"
			if _, _, n, _ := b.sum(Tools); n > 0 {
				what += ", the tools' preamble"
			}
			add("framing", what, p.Estimate, p.Share)
		}
	}
	for _, p := range b.Parts {
		if p.Kind == Since {
			add(p.Name, "its reply and after: "+plural(p.Count, "message"), p.Estimate, p.Share)
		}
	}
	if shares {
		add("total", "the next request", b.Estimate, &b.Scaled)
	} else {
		add("total", "the next request", b.Estimate, nil)
	}
	writeTable(w, rows, paths, width)

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Estimates split text as GPT-4o's tokenizer does and add the wire's framing; a provider's count is what to trust.")
	switch l := b.Last; {
	case l == nil:
		fmt.Fprintln(w, "the last request: no request recorded (no provider count to compare with)")
	case l.Estimate == 0:
		fmt.Fprintf(w, "the last request: %s input tokens as %s counted them%s; it cannot be told apart in the conversation now (compacted since), so no shares\n",
			Num(l.Real), provider(l.Usage), cacheNote(l.Usage))
	default:
		as := "as rebuilt from the log"
		if !l.Rebuilt {
			as = "with the system prompt and tools as now"
		}
		fmt.Fprintf(w, "the last request: %s input tokens as %s counted them%s; estimated ~%s for it, %s (%s)\n",
			Num(l.Real), provider(l.Usage), cacheNote(l.Usage), Num(l.Estimate), as, off(l.Estimate, l.Real))
	}
	if b.Window > 0 && b.Left != nil {
		left := *b.Left
		if left < 0 {
			fmt.Fprintf(w, "window: %s tokens; the next request is over it by %s\n", Num(b.Window), Num(-left))
		} else {
			fmt.Fprintf(w, "window: %s tokens, %s left (%d%%)\n", Num(b.Window), Num(left), left*100/b.Window)
		}
	} else {
		fmt.Fprintln(w, "window: not known (config context_window sets it)")
	}
}

// blockFrom is a block's source and key.
func blockFrom(p Part) string {
	from := p.Source
	if from == "" {
		from = "(source not recorded)"
	}
	if p.Key != "" {
		from += " · " + p.Key
	}
	return from
}

// toolsFrom says what a tool set holds, and where its guidance is.
func (b Breakdown) toolsFrom(p Part) string {
	s := plural(p.Count, "tool")
	if p.Guidance > 0 {
		for _, q := range b.Parts {
			if q.Kind == System && strings.HasSuffix(q.Key, ":guidance") && strings.TrimSuffix(q.Key, ":guidance") == p.Name {
				s += fmt.Sprintf(" · guidance ~%s in %s", Num(p.Guidance), q.Name)
			}
		}
	}
	return s
}

func provider(u Usage) string {
	s := termtext.Line(u.Provider)
	if s == "" {
		s = "the provider"
	}
	return s
}

// cacheNote names the model and says how much of the input the prompt
// cache served.
func cacheNote(u Usage) string {
	var parts []string
	if u.Model != "" {
		parts = append(parts, termtext.Line(u.Model))
	}
	if u.CacheReadTokens > 0 {
		parts = append(parts, Num(u.CacheReadTokens)+" read from the cache")
	}
	if u.CacheWriteTokens > 0 {
		parts = append(parts, Num(u.CacheWriteTokens)+" written to it")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// off says how far an estimate is from the real count.
func off(est, real int) string {
	if real == 0 {
		return "no real count"
	}
	pct := float64(est-real) * 100 / float64(real)
	return fmt.Sprintf("%+.1f%%", pct)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// Num writes n with thousands separated: 12,345.
func Num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// writeTable writes rows in columns: the first two left-aligned, the
// numbers right-aligned, the second cut to fit (at its start for the
// rows in paths). Every cell is made safe for the terminal.
func writeTable(w io.Writer, rows [][]string, paths map[int]bool, fit int) {
	widths := func() []int {
		var width []int
		for _, r := range rows {
			for i, c := range r {
				if i >= len(width) {
					width = append(width, 0)
				}
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
		return width
	}
	for _, r := range rows {
		for i := range r {
			r[i] = termtext.Line(r[i])
		}
	}
	source := sourceWidth
	if fit > 0 {
		width := widths()
		total := 2 * (len(width) - 1)
		for i, n := range width {
			if i != 1 {
				total += n
			}
		}
		source = min(source, max(12, fit-total))
	}
	for i, r := range rows {
		switch {
		case len(r) < 2:
		case paths[i]:
			r[1] = cutLeft(r[1], source)
		default:
			r[1] = termtext.OneLine(r[1], source)
		}
	}
	width := widths()
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if i < 2 {
				line.WriteString(c + pad)
			} else {
				line.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
	}
}

// cutLeft cuts s to n runes, keeping its end.
func cutLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
