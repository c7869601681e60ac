package markdown

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

func plain(lines []string) string { return ansi.Strip(strings.Join(lines, "\n")) }

// Each construct renders as the terminal should show it.
func TestRender(t *testing.T) {
	t.Parallel()
	th := theme.New(true, false)
	tests := []struct{ name, in, want string }{
		{"heading", "# Title\n\n## Sub", "Title\n\nSub"},
		{"emphasis", "*a* **b** ~~c~~ `d`", "a b c d"},
		{"quote", "> a quote\n> goes on", "│ a quote goes on"},
		{"nested quote", "> a\n>\n> > b", "│ a\n│\n│ │ b"},
		{"bullets", "- one\n- two\n  - deep", "• one\n• two\n  ◦ deep"},
		{"ordered", "3. c\n4. d", "3. c\n4. d"},
		{"loose", "- a\n\n- b", "• a\n\n• b"},
		{"task", "- [x] done\n- [ ] todo", "• [x] done\n• [ ] todo"},
		{"fence", "```go\nfunc f() {\n\treturn\n}\n```", "```go\nfunc f() {\n    return\n}\n```"},
		{"indented code", "    x := 1", "    x := 1"},
		{"link", "[text](http://x.y)", "text (http://x.y)"},
		{"autolink", "see https://x.y now", "see https://x.y now"},
		{"image", "![alt](a.png)", "[image: alt] (a.png)"},
		{"rule", "a\n\n---\n\nb", "a\n\n" + strings.Repeat("─", 40) + "\n\nb"},
		{"escapes", `\*not\* &amp; &#65;`, "*not* & A"},
		{"table", "| a | b |\n|---|--:|\n| 1 | 22 |", "a │  b\n──┼───\n1 │ 22"},
		{"hard break", "a  \nb", "a\nb"},
		{"html", "<div>\nx\n</div>", "<div>\nx\n</div>"},
	}
	for _, tt := range tests {
		got := plain(Render(tt.in, 60, th))
		require.Equal(t, tt.want, got, tt.name)
	}
}

// Without colour, the markers colour would replace stay.
func TestRenderPlain(t *testing.T) {
	t.Parallel()
	th := theme.New(true, true)
	require.Equal(t, "## Sub", plain(Render("## Sub", 40, th)))
	require.Equal(t, "a `b`", plain(Render("a `b`", 40, th)))
}

// Every line fits the width, whatever the Markdown; styles do not leak
// from one line into the next.
func TestRenderFitsAndStylesPerLine(t *testing.T) {
	t.Parallel()
	th := theme.New(true, false)
	src := "**" + strings.Repeat("bold words that wrap ", 20) + "**\n\n| " + strings.Repeat("x", 90) + " | y |\n|---|---|\n| a | b |\n\n```\n" + strings.Repeat("c", 130) + "\n```\n\n> " + strings.Repeat("q ", 80)
	for _, w := range []int{20, 40, 60, 100} {
		for _, l := range Render(src, w, th) {
			require.LessOrEqual(t, ansi.StringWidth(l), w, "width %d: %q", w, ansi.Strip(l))
			if strings.Contains(l, "\x1b[1m") {
				require.True(t, strings.HasSuffix(l, "\x1b[m"), "a bold line closes its style: %q", l)
			}
		}
	}
}

// reply is a realistic reply: paragraphs, headings, lists, code fences.
func reply(r *rand.Rand, tokens int) []string {
	words := strings.Fields("the function returns an error when the file is missing so we check it first and then read the session log line by line")
	var toks []string
	block := 0
	for len(toks) < tokens {
		switch block % 8 {
		case 3:
			toks = append(toks, "## ", "Step ", fmt.Sprint(block), "\n\n")
		case 5:
			for i := range 4 {
				toks = append(toks, "- ", words[(block+i)%len(words)], " item", "\n")
			}
			toks = append(toks, "\n")
		case 7:
			toks = append(toks, "```go\n")
			for i := range 10 {
				toks = append(toks, "func f", fmt.Sprint(i), "() error {", " return nil ", "}\n")
			}
			toks = append(toks, "```\n\n")
		default:
			n := 30 + r.IntN(60)
			for i := range n {
				w := words[r.IntN(len(words))]
				if i%17 == 5 {
					w = "**" + w + "**"
				}
				toks = append(toks, w+" ")
			}
			toks = append(toks, "\n\n")
		}
		block++
	}
	return toks
}

// A streamed reply renders the same text as the whole reply rendered at
// once (blank lines at the seams aside), token by token with flushes
// between.
func TestStreamSameAsWhole(t *testing.T) {
	t.Parallel()
	th := theme.New(true, false)
	r := rand.New(rand.NewPCG(1, 2))
	toks := reply(r, 3000)
	whole := strings.Join(toks, "")
	s := NewStream()
	for i, tok := range toks {
		s.Append(tok)
		if i%7 == 0 {
			s.Flush()
			s.Lines(80, th)
		}
	}
	s.Finish()
	norm := func(s string) string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.TrimSpace(l) != "" {
				out = append(out, strings.TrimRight(l, " "))
			}
		}
		return strings.Join(out, "\n")
	}
	l := s.Lines(80, th)
	var got []string
	for i := range l.Len() {
		got = append(got, l.Line(i))
	}
	require.Equal(t, norm(plain(Render(whole, 80, th))), norm(plain(got)))
	require.Greater(t, len(s.ends), 50, "the reply was cut into many chunks")
}

// Between flushes the render stays as it was: no chunk shows twice.
func TestStreamBetweenFlushes(t *testing.T) {
	t.Parallel()
	th := theme.New(true, true)
	s := NewStream()
	s.Append("first para\n\nsecond")
	s.Flush()
	require.Equal(t, "first para\n\nsecond", plain(lines(s.Lines(40, th))))
	s.Append(" part\n\nthird")
	require.Equal(t, "first para\n\nsecond", plain(lines(s.Lines(40, th))), "unchanged until the next flush")
	s.Flush()
	require.Equal(t, "first para\n\nsecond part\n\nthird", plain(lines(s.Lines(40, th))))
}

// A list, a quote or a fence stays open across blank lines until what
// follows ends it.
func TestStreamBoundaries(t *testing.T) {
	t.Parallel()
	s := NewStream()
	s.Append("- a\n\n- b\n\n")
	require.Empty(t, s.ends, "a list may go on")
	s.Append("para\n\n")
	require.Len(t, s.ends, 1)
	s.Append("```\nx\n\ny\n")
	require.Len(t, s.ends, 1, "no boundary inside a fence")
	s.Append("```\n\n")
	require.Len(t, s.ends, 2)
	s.Append("> q\n\n")
	require.Len(t, s.ends, 2, "a quote may go on")
	s.Append("``not a fence``\n\nend\n\n")
	require.Len(t, s.ends, 4, "two backticks open no fence")
}

func lines(l Lines) []string {
	out := make([]string, l.Len())
	for i := range out {
		out[i] = l.Line(i)
	}
	return out
}

// Rendering cost per streamed token, at 10k and 100k tokens: it must be
// flat (a token costs what it costs, not more as the reply grows). The
// reply streams with a flush every 4 tokens — more often than the 30 fps
// frame tick at any real token rate — and each flush renders the open
// block and reads the screenful of lines a frame shows.
func BenchmarkStreamPerToken(b *testing.B) {
	th := theme.New(true, false)
	for _, n := range []int{10_000, 100_000} {
		toks := reply(rand.New(rand.NewPCG(3, 4)), n)
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			total := 0
			for b.Loop() {
				s := NewStream()
				for i, tok := range toks {
					s.Append(tok)
					if i%4 == 3 {
						s.Flush()
						l := s.Lines(100, th)
						for j := max(0, l.Len()-30); j < l.Len(); j++ {
							_ = l.Line(j)
						}
					}
				}
				total += len(toks)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/token")
		})
	}
}

// Rendering one whole recorded message: what a resume pays per message
// shown.
func BenchmarkRenderMessage(b *testing.B) {
	th := theme.New(true, false)
	src := strings.Join(reply(rand.New(rand.NewPCG(5, 6)), 300), "")
	for b.Loop() {
		Render(src, 100, th)
	}
}
