package linediff

import (
	"fmt"
	"strings"
	"testing"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestDiffFormat(t *testing.T) {
	loop := "package main\n\nfunc f(n int) {\n\tfor i := 0; i <= n; i++ {\n\t\tprintln(i)\n\t}\n}\n"
	tests := []struct {
		name          string
		before, after string
		want          string
	}{
		{"one changed line, whole line and 3 lines of context",
			loop, strings.Replace(loop, "i <= n", "i < n", 1),
			"@@ -1,7 +1,7 @@\n package main\n \n func f(n int) {\n-\tfor i := 0; i <= n; i++ {\n+\tfor i := 0; i < n; i++ {\n \t\tprintln(i)\n \t}\n }\n"},
		{"context is cut to 3 lines and far changes are two hunks",
			numbered(20), strings.Replace(strings.Replace(numbered(20), "line 2\n", "two\n", 1), "line 18\n", "eighteen\n", 1),
			"@@ -1,5 +1,5 @@\n line 1\n-line 2\n+two\n line 3\n line 4\n line 5\n" +
				"@@ -15,6 +15,6 @@\n line 15\n line 16\n line 17\n-line 18\n+eighteen\n line 19\n line 20\n"},
		{"near changes share a hunk",
			numbered(10), strings.Replace(strings.Replace(numbered(10), "line 3\n", "three\n", 1), "line 8\n", "eight\n", 1),
			"@@ -1,10 +1,10 @@\n line 1\n line 2\n-line 3\n+three\n line 4\n line 5\n line 6\n line 7\n-line 8\n+eight\n line 9\n line 10\n"},
		{"a new file", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"lines added at the end", "a\n", "a\nb\n", "@@ -1 +1,2 @@\n a\n+b\n"},
		{"equal", "a\n", "a\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Format(Diff(tt.before, tt.after, 3))
			if got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestParseRoundTrip(t *testing.T) {
	before := numbered(30)
	after := strings.Replace(strings.Replace(before, "line 4\n", "four\nfour and a half\n", 1), "line 25\n", "", 1)
	hunks := Diff(before, after, 3)
	result := "Edited a.txt: applied 2 edits (at line 4, 25).\n\n" + Format(hunks)
	head, got, cutShort := Parse(result)
	if head != "Edited a.txt: applied 2 edits (at line 4, 25)." || cutShort {
		t.Fatalf("head %q cut %v", head, cutShort)
	}
	if Format(got) != Format(hunks) {
		t.Fatalf("parsed back\n%s\nwant\n%s", Format(got), Format(hunks))
	}
	// The numbers a reader sees: the new file's, the old one's for a
	// deleted line.
	var nums []string
	for _, h := range got {
		h.Numbered(func(n int, l Line) { nums = append(nums, fmt.Sprintf("%d%c%s", n, l.Kind, l.Text)) })
	}
	want := "1 line 1,2 line 2,3 line 3,4-line 4,4+four,5+four and a half,6 line 5,7 line 6,8 line 7," +
		"23 line 22,24 line 23,25 line 24,25-line 25,26 line 26,27 line 27,28 line 28"
	if strings.Join(nums, ",") != want {
		t.Fatalf("numbers\n%s\nwant\n%s", strings.Join(nums, ","), want)
	}
}

func TestParseNoDiff(t *testing.T) {
	head, hunks, _ := Parse("Edited a.go: applied 1 edit (at line 3).")
	if head != "Edited a.go: applied 1 edit (at line 3)." || hunks != nil {
		t.Fatalf("got %q %v", head, hunks)
	}
	// A header whose lines do not follow ends the diff, without a panic.
	_, hunks, _ = Parse("x\n@@ -1,3 +1,3 @@\n a\nzzz\n")
	if len(hunks) != 1 || len(hunks[0].Lines) != 1 {
		t.Fatalf("got %+v", hunks)
	}
}

func TestFormatCut(t *testing.T) {
	out := Format(Diff("", numbered(MaxLines+50), 3))
	if !strings.HasSuffix(out, "[diff cut: 50 more lines not shown]\n") {
		t.Fatalf("tail: %q", out[len(out)-80:])
	}
	_, hunks, cutShort := Parse(out)
	if !cutShort || len(hunks) != 1 || len(hunks[0].Lines) != MaxLines {
		t.Fatalf("cut %v, %d hunks", cutShort, len(hunks))
	}
	long := strings.Repeat("é", MaxLineBytes)
	if l := strings.Split(Format(Diff("", long, 3)), "\n")[1]; len(l) > MaxLineBytes+len("+…") || !strings.HasSuffix(l, "…") {
		t.Fatalf("long line kept %d bytes", len(l))
	}
}

func TestFormatAllWhole(t *testing.T) {
	long := strings.Repeat("é", MaxLineBytes)
	out := FormatAll(Diff("", numbered(MaxLines+50)+long+"\n", 3))
	if strings.Contains(out, "diff cut") || strings.Contains(out, "…") {
		t.Fatalf("FormatAll cut the diff: %q", out[len(out)-80:])
	}
	_, hunks, cutShort := Parse(out)
	if cutShort || len(hunks) != 1 || len(hunks[0].Lines) != MaxLines+51 || hunks[0].Lines[MaxLines+50].Text != long {
		t.Fatalf("cut %v, %d hunks", cutShort, len(hunks))
	}
	// Within the limits, the two agree.
	small := Diff("a\nb\n", "a\nc\n", 3)
	if FormatAll(small) != Format(small) {
		t.Fatalf("FormatAll %q, Format %q", FormatAll(small), Format(small))
	}
}

func TestWords(t *testing.T) {
	a, b := Words("\tfor i := 0; i <= n; i++ {", "\tfor i := 0; i < n; i++ {")
	if fmt.Sprint(a) != "[{\tfor i := 0; i  false} {<= true} { n; i++ { false}]" ||
		fmt.Sprint(b) != "[{\tfor i := 0; i  false} {< true} { n; i++ { false}]" {
		t.Fatalf("got %v / %v", a, b)
	}
	a, b = Words("return oldName(x)", "return newName(x)")
	if fmt.Sprint(a) != "[{return  false} {oldName true} {(x) false}]" || fmt.Sprint(b) != "[{return  false} {newName true} {(x) false}]" {
		t.Fatalf("got %v / %v", a, b)
	}
	// Nothing much in common: no word highlight.
	if a, b := Words("completely different words", "x := 42"); a != nil || b != nil {
		t.Fatalf("got %v / %v", a, b)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("Edited a: x\n\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
	f.Add("@@ -0,0 +1 @@\n+x\n[diff cut: 3 more lines not shown]\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, hunks, _ := Parse(s)
		for _, h := range hunks {
			h.Numbered(func(int, Line) {})
		}
	})
}

// apply applies hunks to before's lines, checking that every context and
// deleted line is what before holds there.
func apply(t *testing.T, before string, hunks []Hunk) []string {
	t.Helper()
	a := split(before)
	var out []string
	at := 0 // the next line of a not yet copied
	for _, h := range hunks {
		start := h.OldStart - 1
		if oc, _ := h.Counts(); oc == 0 {
			start = h.OldStart
		}
		if start < at || start > len(a) {
			t.Fatalf("hunk at %d after line %d", h.OldStart, at)
		}
		out = append(out, a[at:start]...)
		at = start
		for _, l := range h.Lines {
			switch l.Kind {
			case Insert:
				out = append(out, l.Text)
			default:
				if at >= len(a) || a[at] != l.Text {
					t.Fatalf("line %d is %q in the hunk, not as in the file", at+1, l.Text)
				}
				if l.Kind == Context {
					out = append(out, l.Text)
				}
				at++
			}
		}
	}
	return append(out, a[at:]...)
}

// Applying the hunks to the old text gives the new one, and each hunk's
// NewStart is where its lines are in the new text.
func checkRoundTrip(t *testing.T, before, after string) {
	t.Helper()
	hunks := Diff(before, after, 3)
	got := apply(t, before, hunks)
	want := split(after)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("applied\n%q\nwant\n%q", got, want)
	}
	for _, h := range hunks {
		h.Numbered(func(n int, l Line) {
			if l.Kind != Delete && (n < 1 || n > len(want) || want[n-1] != l.Text) {
				t.Fatalf("line %d: %q, the new text has %q", n, l.Text, want[min(max(n-1, 0), len(want)-1)])
			}
		})
	}
}

func TestDiffRoundTrip(t *testing.T) {
	t.Parallel()
	base := numbered(40)
	for _, after := range []string{
		"",
		base + "tail\n",
		"head\n" + base,
		strings.Replace(base, "line 20\n", "", 1),
		strings.ReplaceAll(base, "1\n", "one\n"),
		strings.Replace(base, "line 3\nline 4\n", "x\ny\nz\n", 1),
		strings.TrimSuffix(base, "\n"),
	} {
		checkRoundTrip(t, base, after)
		checkRoundTrip(t, after, base)
	}
}

func FuzzDiffRoundTrip(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("", "x")
	f.Add(numbered(12), strings.Replace(numbered(12), "line 6\n", "six\nsix\n", 1))
	f.Fuzz(func(t *testing.T, before, after string) {
		if strings.Contains(before, "\r") || strings.Contains(after, "\r") || len(before) > 4096 || len(after) > 4096 {
			return
		}
		// Texts that differ only in a final newline read as the same lines.
		if strings.TrimSuffix(before, "\n") == strings.TrimSuffix(after, "\n") {
			return
		}
		checkRoundTrip(t, before, after)
		Words(before, after)
	})
}

// Many scattered changes show one by one, not as one block replaced
// (the LCS search gives up past some 50; the block is diffed again).
func TestDiffManyChanges(t *testing.T) {
	t.Parallel()
	before := numbered(1000)
	after := strings.ReplaceAll(before, "7\n", "seven\n")
	hunks := Diff(before, after, 3)
	if len(hunks) != 100 {
		t.Fatalf("%d hunks, want 100", len(hunks))
	}
	for _, h := range hunks {
		if oc, nc := h.Counts(); oc != 7 || nc != 7 {
			t.Fatalf("hunk at %d spans %d/%d lines", h.OldStart, oc, nc)
		}
	}
	checkRoundTrip(t, before, after)
}
