package export

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/linediff"
)

// resultDiff is the diff an edit's or a write's result carries (see
// linediff): the result's own words, the hunks, whether it was cut. ok
// is false for any other result, a failed one, and one without a diff
// (from a log written before results carried one): those show as text.
func resultDiff(tool string, b conversation.Block) (head string, hunks []linediff.Hunk, cutShort, ok bool) {
	if (tool != "edit" && tool != "write") || b.IsError || len(b.Content) != 1 || b.Content[0].Type != conversation.TypeText {
		return "", nil, false, false
	}
	head, hunks, cutShort = linediff.Parse(b.Content[0].Text)
	return head, hunks, cutShort, len(hunks) > 0
}

// numberWidth is how many digits the largest line number of hunks has.
func numberWidth(hunks []linediff.Hunk) int {
	nw := 1
	for _, h := range hunks {
		oc, nc := h.Counts()
		nw = max(nw, len(strconv.Itoa(h.OldStart+oc)), len(strconv.Itoa(h.NewStart+nc)))
	}
	return nw
}

// htmlDiff writes hunks as a <pre class="diff">: a line a span of its
// kind, with its number (the old file's for a deleted line) and its
// mark; the changed words of a changed line in <del> or <ins>.
func htmlDiff(h *htmlWriter, hunks []linediff.Hunk, cutShort bool) {
	nw := numberWidth(hunks)
	h.m(`<pre class="diff">` + "\n")
	for i, hk := range hunks {
		if i > 0 {
			h.m(`<span class="gap">`)
			h.text(strings.Repeat(" ", nw) + " ⋮")
			h.m("</span>\n")
		}
		words := linediff.HunkWords(hk.Lines)
		k := 0
		hk.Numbered(func(n int, l linediff.Line) {
			class, tag := markup("ctx"), markup("")
			switch l.Kind {
			case linediff.Delete:
				class, tag = "del", "del"
			case linediff.Insert:
				class, tag = "add", "ins"
			}
			h.m(`<span class="` + class + `"><span class="n">`)
			h.text(fmt.Sprintf("%*d", nw, n))
			h.m("</span> ")
			h.text(string(l.Kind) + " ")
			if words[k] == nil {
				h.text(l.Text)
			}
			for _, s := range words[k] {
				if s.Changed {
					h.m("<" + tag + ">")
					h.text(s.Text)
					h.m("</" + tag + ">")
				} else {
					h.text(s.Text)
				}
			}
			h.m("</span>\n")
			k++
		})
	}
	if cutShort {
		h.m(`<span class="gap">… the rest of the diff was cut</span>` + "\n")
	}
	h.m("</pre>")
}

// mdDiff is hunks as a fenced diff: each line its mark, its number (the
// old file's for a deleted line) and its text; "⋮" between hunks.
func mdDiff(hunks []linediff.Hunk, cutShort bool) string {
	nw := numberWidth(hunks)
	var b strings.Builder
	for i, h := range hunks {
		if i > 0 {
			fmt.Fprintf(&b, "  %*s\n", nw, "⋮")
		}
		h.Numbered(func(n int, l linediff.Line) {
			fmt.Fprintf(&b, "%c %*d  %s\n", l.Kind, nw, n, l.Text)
		})
	}
	if cutShort {
		b.WriteString("  … the rest of the diff was cut\n")
	}
	return fence(b.String(), "diff")
}
