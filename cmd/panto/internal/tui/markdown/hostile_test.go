package markdown

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// requireSafe fails when out holds anything a terminal obeys but the
// theme's styling.
func requireSafe(t *testing.T, out string) {
	t.Helper()
	require.Empty(t, termtext.Leaks([]byte(out)), "%q", out)
	require.NoError(t, termtext.Check([]byte(sgr.ReplaceAllString(out, ""))))
}

// A reply carrying escapes, C1 and bidi controls or a lone CR — in
// text, code spans, fenced code, links, HTML, tables, or made by an
// entity — is shown, never passed: whole, and streamed in pieces that
// cut a CR from its LF.
func TestRenderHostile(t *testing.T) {
	t.Parallel()
	th := theme.New(true, false)
	var shapes []string
	for _, h := range termtext.Hostile {
		x := h.Text
		shapes = append(shapes, x, "*"+x+"*", "`"+x+"`", "```\n"+x+"\n```", "    "+x,
			"[a]("+x+")", "["+x+"](http://x.y)", "<b>"+x+"</b>", "<div>\n"+x+"\n</div>",
			"| a |\n|---|\n| "+x+" |", "- "+x, "> "+x, "# "+x, "```"+x+"\ncode\n```")
	}
	shapes = append(shapes, termtext.HostileText(),
		"&#27;]52;c;cm0g&#7; &#x9b;2J &#x202e;txt &#13;x", // entities
		"a\r\nb\rc")
	for _, src := range shapes {
		requireSafe(t, strings.Join(Render(src, 60, th), "\n"))
		s := NewStream()
		for i := 0; i < len(src); i += 3 {
			s.Append(src[i:min(len(src), i+3)])
			s.Flush()
			requireSafe(t, joinLines(s.Lines(60, th)))
		}
		s.Finish()
		requireSafe(t, joinLines(s.Lines(60, th)))
	}
}

// A lone CR shows as "␍" even when the piece it came in ends with it;
// a CR LF split over two pieces is a line end.
func TestStreamCRAcrossPieces(t *testing.T) {
	t.Parallel()
	th := theme.New(true, false)
	s := NewStream()
	for _, p := range []string{"safe command\r", "rm -rf ~\n\n", "one\r", "\ntwo\n"} {
		s.Append(p)
	}
	s.Finish()
	got := strings.TrimSuffix(ansi.Strip(joinLines(s.Lines(80, th))), "\n")
	require.Equal(t, "safe command␍rm -rf ~\n\none two", got)
}

// A link whose text is not where it goes shows both; an OSC 8
// hyperlink in the text is shown as the escape it is.
func TestLinkTextAndTarget(t *testing.T) {
	t.Parallel()
	th := theme.New(true, false)
	got := ansi.Strip(strings.Join(Render("[https://good.example/](https://evil.example/)", 80, th), "\n"))
	require.Equal(t, "https://good.example/ (https://evil.example/)", got)
	out := strings.Join(Render("\x1b]8;;https://evil.example/\x1b\\https://good.example/\x1b]8;;\x1b\\", 80, th), "\n")
	requireSafe(t, out)
	require.Contains(t, ansi.Strip(out), "␛]8;;https://evil.example/")
}

func joinLines(l Lines) string {
	var b strings.Builder
	for i := range l.Len() {
		b.WriteString(l.Line(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// The renderer and the stream take any text and write nothing a
// terminal obeys but the theme's styling.
func FuzzRender(f *testing.F) {
	f.Add(termtext.HostileText())
	f.Add("[a](b) `c` &#27;x\r\n```\n\x1b]52;c;x\a\n```")
	th := theme.New(true, false)
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		out := strings.Join(Render(src, 40, th), "\n")
		if err := termtext.Check([]byte(sgr.ReplaceAllString(out, ""))); err != nil {
			t.Fatalf("Render(%q): %v", src, err)
		}
		s := NewStream()
		for i := 0; i < len(src); i += 7 {
			s.Append(src[i:min(len(src), i+7)])
		}
		s.Finish()
		if err := termtext.Check([]byte(sgr.ReplaceAllString(joinLines(s.Lines(40, th)), ""))); err != nil {
			t.Fatalf("Stream(%q): %v", src, err)
		}
	})
}
