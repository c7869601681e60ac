package lineloop

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// A question's whole subject is shown escaped, the highlighted parts
// marked under them, the choice line last.
func TestQuestionText(t *testing.T) {
	t.Parallel()
	q := host.Question{By: "guard", Type: extension.AskConfirm, Title: "Run this command?",
		Message:   "cd /tmp &&\tgit status\x1b[2K\x1b[1Grm -rf ~\n\n(it matches rm)",
		Highlight: []string{"rm -rf ~", "matches"}}
	require.Equal(t, "\n? guard asks: Run this command?\n"+
		"  cd /tmp &&\tgit status␛[2K␛[1Grm -rf ~\n"+
		"            \t                  ^^^^^^^^\n"+
		"\n"+
		"  (it matches rm)\n"+
		"      ^^^^^^^\n"+
		"  type yes to confirm, anything else is no: ", Text(q))
}

func TestQuestionTextKinds(t *testing.T) {
	t.Parallel()
	sel := host.Question{By: "x", Type: extension.AskSelect, Title: "Pick\none", Options: []string{"a\x1b[2J", "b"}}
	require.Equal(t, "\n? x asks: Pick␤one\n  1. a␛[2J\n  2. b\n  number (empty to dismiss): ", Text(sel))
	in := host.Question{By: "x", Type: extension.AskInput, Title: "Name", Placeholder: "your\u202ename"}
	require.Equal(t, "\n? x asks: Name\n  (your\\u202ename)\n  > ", Text(in))
	long := host.Question{By: "x", Type: extension.AskConfirm, Title: "t", Message: strings.Repeat("line\n", 150)}
	require.Contains(t, Text(long), "  (150 lines: the whole message is above)\n  type yes")
}

// A message too long for a terminal's scrollback (the adversary pass's
// rm -rf and 5,000 continuation lines) shows its head, every line with a
// highlighted part, and its tail, numbered; the note says what was left
// out, truly.
func TestAVeryLongQuestionIsExcerpted(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 5000 {
		lines = append(lines, fmt.Sprintf("  echo %d \\", i))
	}
	lines[2500] = "rm -rf ~/precious \\"
	q := host.Question{By: "guard", Type: extension.AskConfirm, Title: "Run this command?", Message: strings.Join(lines, "\n"), Highlight: []string{"rm -rf ~/precious"}}
	text := Text(q)
	require.Less(t, strings.Count(text, "\n"), 2*excerptLines+20, "it fits a scrollback")
	require.Contains(t, text, "     1│   echo 0 \\\n")
	require.Contains(t, text, "  … lines 61–4940 are not shown (4880 lines) but for the 1 that hold a highlighted part:\n")
	require.Contains(t, text, "  2501│ rm -rf ~/precious \\\n        ^^^^^^^^^^^^^^^^^\n", "the dangerous line, marked")
	require.Contains(t, text, "  5000│   echo 4999 \\\n")
	require.Contains(t, text, "(5000 lines in all: too long to show whole here; only the lines above were shown)\n  type yes")
	require.NotContains(t, text, "the whole message is above")

	q.Highlight = nil
	require.Contains(t, Text(q), "  … lines 61–4940 are not shown (4880 lines; none of them holds a highlighted part)\n")
}

// Wide runes get as many carets as columns.
func TestCaretLineWidths(t *testing.T) {
	t.Parallel()
	require.Equal(t, "     ^^", caretLine("日本 rm", []string{"rm"}))
	require.Equal(t, "^^^^", caretLine("日本", []string{"日本"}))
	require.Empty(t, caretLine("nothing here", []string{"rm"}))
	require.Empty(t, caretLine("rm", nil))
}

func TestDecide(t *testing.T) {
	t.Parallel()
	confirm := host.Question{Type: extension.AskConfirm}
	for _, tc := range []struct {
		text string
		yes  bool
		note string
	}{
		{"yes", true, ""}, {"YES", true, ""}, {"y", false, "(no: only the word yes confirms)"},
		{"", false, ""}, {"yes please", false, "(no: only the word yes confirms)"}, {"no", false, ""}, {"N", false, ""},
	} {
		a, dismiss, note := Decide(confirm, tc.text)
		require.False(t, dismiss)
		require.Equal(t, tc.yes, a.Yes, tc.text)
		require.Equal(t, tc.note, note, tc.text)
	}
	sel := host.Question{Type: extension.AskSelect, Options: []string{"a", "b"}}
	a, dismiss, _ := Decide(sel, "2")
	require.Equal(t, 1, a.Index)
	require.False(t, dismiss)
	for _, text := range []string{"", "0", "3", "2x", "1 2"} {
		_, dismiss, _ = Decide(sel, text)
		require.True(t, dismiss, text)
	}
	in := host.Question{Type: extension.AskInput}
	a, dismiss, _ = Decide(in, "main")
	require.Equal(t, "main", a.Text)
	require.False(t, dismiss)
	_, dismiss, _ = Decide(in, "")
	require.True(t, dismiss)
}

// FuzzQuestionText: whatever an extension sends, the question holds no
// byte a terminal obeys and ends with its choice line.
func FuzzQuestionText(f *testing.F) {
	for _, h := range termtext.Hostile {
		f.Add(h.Text, h.Text, h.Raw)
	}
	f.Add("Run?", "rm -rf ~\n\nok", "rm")
	f.Fuzz(func(t *testing.T, title, message, highlight string) {
		for _, kind := range []extension.QuestionKind{extension.AskConfirm, extension.AskSelect, extension.AskInput} {
			q := host.Question{By: "x", Type: kind, Title: title, Message: message, Options: []string{message, title},
				Placeholder: title, Highlight: []string{highlight}}
			out := Text(q)
			if err := termtext.Check([]byte(out)); err != nil {
				t.Fatalf("%q: %v", out, err)
			}
			// Every line of the subject ends before the choice line
			// starts: nothing after the last newline but the choice.
			if last := out[strings.LastIndex(out, "\n")+1:]; last != Choice(q) {
				t.Fatalf("the last line is %q, not the choice line: %q", last, out)
			}
		}
	})
}

// One line of 400,000 characters (the fifth adversary pass's F3) wraps
// to thousands of rows: it is cut, and its highlighted parts beyond the
// cut are shown under it, so the question fits a scrollback.
func TestAVeryLongLineIsCut(t *testing.T) {
	t.Parallel()
	line := "python3 -c 'import os' " + strings.Repeat("x", 200000) + " shutil.rmtree(home) " + strings.Repeat("y", 200000)
	q := host.Question{By: "guard", Type: extension.AskConfirm, Title: "Run this command?", Message: line, Highlight: []string{"shutil.rmtree"}}
	text := Text(q)
	require.Less(t, len(text), 5000, "it fits a scrollback")
	require.Contains(t, text, "  python3 -c 'import os' xxx")
	require.Contains(t, text, "(the line goes on for ")
	require.Contains(t, text, "the highlighted parts in it:)")
	require.Contains(t, text, "xxxx shutil.rmtree(home) yyyy")
	require.Contains(t, text, "^^^^^^^^^^^^^", "marked")
	require.True(t, strings.HasSuffix(text, "type yes to confirm, anything else is no: "))
}
