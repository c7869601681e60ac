// Package theme holds the full-screen UI's colours and text styles, for a
// dark or a light terminal background. A style is a precomputed SGR
// sequence, so styling a run of text is a string concatenation: the
// transcript styles every word of a long reply, and a general style
// library would cost far more. Colour is downsampled (or dropped, for NO_COLOR) by
// bubbletea's renderer on output; what must stay readable without colour
// also carries an attribute (bold, faint, reverse) or a glyph.
//
// Layout does not belong here: only what things look like.
package theme

import (
	"image/color"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Style is a text style: the SGR sequence that starts it.
type Style struct{ on string }

// reset ends every style.
const reset = "\x1b[m"

// Render styles s; an empty s stays empty. s must not span lines that are
// shown apart (each transcript line is styled on its own).
func (st Style) Render(s string) string {
	if st.on == "" || s == "" {
		return s
	}
	return st.on + s + reset
}

// Add returns st with o's attributes on top (o's colours win).
func (st Style) Add(o Style) Style { return Style{st.on + o.on} }

// Plain reports whether st does nothing.
func (st Style) Plain() bool { return st.on == "" }

func newStyle(s ansi.Style) Style {
	if len(s) == 0 {
		return Style{}
	}
	return Style{s.String()}
}

// Theme is the UI's styles for one background.
type Theme struct {
	// Dark is set for a dark background.
	Dark bool
	// Plain is set when colour is off (NO_COLOR): renderers then keep
	// the markers colour would have replaced (a code span's backticks).
	Plain bool

	Text, Dim, Faint, Bold, Italic Style
	Accent, AccentBold             Style
	User, UserBar                  Style
	Heading1, Heading2, Heading3   Style
	Code, CodeBlock, CodeFence     Style
	Link, LinkURL                  Style
	Quote, QuoteBar                Style
	Strike                         Style
	Thinking                       Style
	OK, Warn, Error, ErrorBold     Style
	DiffAdd, DiffDel, DiffHunk     Style
	DiffAddWord, DiffDelWord       Style // the changed words of a changed line
	ToolName, ToolArgs             Style
	System                         Style
	Status, StatusKey              Style
	Selected, Match                Style
	// Highlight marks what a question is about (the part of a command a
	// guard matched): reverse and bold, so it shows without colour.
	Highlight Style
	Border    Style
}

// palette is one background's colours.
type palette struct {
	fg, dim, faint, accent, user, code, link, ok, warn, err, add, del, hunk, sel, border color.Color
}

var dark = palette{
	fg:     ansi.IndexedColor(252),
	dim:    ansi.IndexedColor(245),
	faint:  ansi.IndexedColor(240),
	accent: hex(0x7aa2f7),
	user:   hex(0xbb9af7),
	code:   hex(0xe0af68),
	link:   hex(0x7dcfff),
	ok:     hex(0x9ece6a),
	warn:   hex(0xe0af68),
	err:    hex(0xf7768e),
	add:    hex(0x9ece6a),
	del:    hex(0xf7768e),
	hunk:   hex(0x7dcfff),
	sel:    ansi.IndexedColor(237),
	border: ansi.IndexedColor(240),
}

var light = palette{
	fg:     ansi.IndexedColor(235),
	dim:    ansi.IndexedColor(243),
	faint:  ansi.IndexedColor(248),
	accent: hex(0x2e5cb8),
	user:   hex(0x7a3e9d),
	code:   hex(0x9a5b00),
	link:   hex(0x006b8f),
	ok:     hex(0x3c7a00),
	warn:   hex(0x9a6700),
	err:    hex(0xc0243c),
	add:    hex(0x3c7a00),
	del:    hex(0xc0243c),
	hunk:   hex(0x006b8f),
	sel:    ansi.IndexedColor(254),
	border: ansi.IndexedColor(250),
}

func hex(v uint32) color.Color {
	return ansi.RGBColor{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v)}
}

// New returns the theme for a dark or light background; plain says colour
// is off (the styles keep their attributes, the renderer drops colour).
func New(isDark, plain bool) *Theme {
	p := light
	if isDark {
		p = dark
	}
	fg := func(c color.Color) ansi.Style { return ansi.Style{}.ForegroundColor(c) }
	t := &Theme{Dark: isDark, Plain: plain}
	t.Text = Style{}
	t.Dim = newStyle(fg(p.dim))
	t.Faint = newStyle(fg(p.faint).Faint())
	t.Bold = newStyle(ansi.Style{}.Bold())
	t.Italic = newStyle(ansi.Style{}.Italic(true))
	t.Accent = newStyle(fg(p.accent))
	t.AccentBold = newStyle(fg(p.accent).Bold())
	t.User = newStyle(ansi.Style{}.Bold())
	t.UserBar = newStyle(fg(p.user).Bold())
	t.Heading1 = newStyle(fg(p.accent).Bold().Underline(true))
	t.Heading2 = newStyle(fg(p.accent).Bold())
	t.Heading3 = newStyle(ansi.Style{}.Bold())
	t.Code = newStyle(fg(p.code))
	t.CodeBlock = newStyle(fg(p.code))
	t.CodeFence = newStyle(fg(p.faint))
	t.Link = newStyle(fg(p.link).Underline(true))
	t.LinkURL = newStyle(fg(p.dim))
	t.Quote = newStyle(ansi.Style{}.Italic(true))
	t.QuoteBar = newStyle(fg(p.dim))
	t.Strike = newStyle(ansi.Style{}.Strikethrough(true))
	t.Thinking = newStyle(fg(p.dim).Faint().Italic(true))
	t.OK = newStyle(fg(p.ok))
	t.Warn = newStyle(fg(p.warn))
	t.Error = newStyle(fg(p.err))
	t.ErrorBold = newStyle(fg(p.err).Bold())
	t.DiffAdd = newStyle(fg(p.add))
	t.DiffDel = newStyle(fg(p.del))
	t.DiffHunk = newStyle(fg(p.hunk).Faint())
	t.DiffAddWord = newStyle(fg(p.add).Reverse(true))
	t.DiffDelWord = newStyle(fg(p.del).Reverse(true))
	t.ToolName = newStyle(ansi.Style{}.Bold())
	t.ToolArgs = newStyle(fg(p.dim))
	t.System = newStyle(fg(p.dim).Italic(true))
	t.Status = newStyle(fg(p.dim))
	t.StatusKey = newStyle(fg(p.fg).Bold())
	t.Selected = newStyle(ansi.Style{}.Reverse(true))
	t.Match = newStyle(fg(p.accent).Bold())
	t.Highlight = newStyle(fg(p.warn).Bold().Reverse(true))
	t.Border = newStyle(fg(p.border))
	return t
}

// IsDarkColor reports whether a terminal background colour is dark.
func IsDarkColor(c color.Color) bool {
	if c == nil {
		return true
	}
	r, g, b, _ := c.RGBA()
	// Relative luminance, roughly (the colours are 16-bit).
	l := (299*float64(r) + 587*float64(g) + 114*float64(b)) / 1000 / 65535
	return l < 0.5
}

// Pad returns s followed by spaces up to width w (display cells).
func Pad(s string, w int) string {
	if n := w - ansi.StringWidth(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}
