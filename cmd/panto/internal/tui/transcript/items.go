package transcript

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/markdown"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

// cache holds one render of an item: valid for a width, a theme and the
// item's own version.
type cache struct {
	width   int
	th      *theme.Theme
	version int
	lines   Lines
}

func (c *cache) get(x Ctx, version int) (Lines, bool) {
	if c.lines != nil && c.width == x.Width && c.th == x.Theme && c.version == version {
		return c.lines, true
	}
	return nil, false
}

func (c *cache) put(x Ctx, version int, l Lines) Lines {
	c.width, c.th, c.version, c.lines = x.Width, x.Theme, version, l
	return l
}

// wrapText wraps plain text to width, keeping its line breaks and
// indentation (tabs become spaces): what the user typed, a tool's output.
// The text is outside text: what a terminal would obey in it is shown
// (termtext), never passed.
func wrapText(s string, width int) []string {
	if width < 4 {
		width = 4
	}
	var out []string
	for _, line := range strings.Split(termtext.Sanitize(s), "\n") {
		line = markdown.ExpandTabs(line)
		if ansi.StringWidth(line) <= width {
			out = append(out, line)
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(line, width, ""), "\n")...)
	}
	return out
}

// cut fits one line into width cells, ending it with "…" when it is cut.
func cut(s string, width int) string {
	if width < 1 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// User is a message the user sent.
type User struct {
	Text string
	// Images are the labels of the images sent with it ("shot.png,
	// 1.2 MB, 1920×1080"), each shown on a line after the text.
	Images []string
	// Note is said after it, dimmed ("queued: panto is starting").
	Note     string
	expanded bool
	folds    bool
	version  int
	c        cache
}

// userFold is how many lines a long message shows folded.
const userFold = 12

// SetNote changes the note shown after the message.
func (u *User) SetNote(s string) { u.Note = s; u.version++ }

// Toggle shows all of a long message, or folds it again.
func (u *User) Toggle() { u.expanded = !u.expanded; u.version++ }

// Expanded reports whether it is shown whole.
func (u *User) Expanded() bool { return u.expanded }

// Foldable implements Collapsible.
func (u *User) Foldable() bool { return u.expanded || u.folds }

// Render implements Item.
func (u *User) Render(c Ctx) Lines {
	if l, ok := u.c.get(c, u.version); ok {
		return l
	}
	th := c.Theme
	bar := th.UserBar.Render("▌") + " "
	body := wrapText(u.Text, c.Width-2)
	var out []string
	hidden := 0
	u.folds = len(body) > userFold+2
	if !u.expanded && len(body) > userFold+2 {
		hidden = len(body) - userFold
		body = body[:userFold]
	}
	for _, l := range body {
		out = append(out, bar+th.User.Render(l))
	}
	if hidden > 0 {
		out = append(out, bar+th.Dim.Render(fmt.Sprintf("… %d more lines · ctrl+o shows them", hidden)))
	}
	for _, l := range u.Images {
		out = append(out, bar+th.Dim.Render(cut(termtext.Line("▣ image: "+l), c.Width-2)))
	}
	if u.Note != "" {
		out = append(out, "  "+th.Dim.Render(cut(u.Note, c.Width-2)))
	}
	return u.c.put(c, u.version, Strings(out))
}

// Level is how a notice reads.
type Level int

// The notice levels.
const (
	Info Level = iota
	Warning
	Error
	// Quiet is a dimmed line of panto's own (a model switch, a compaction).
	Quiet
)

// Notice is a line (or a few) that is not part of the conversation: an
// extension's notice, a retry, an error, a compaction.
type Notice struct {
	Level Level
	// By names who says it (an extension), or "".
	By   string
	Text string
	// Detail follows the text, dimmed.
	Detail string
	// Repeat counts the same notice said again right after (shown "×3").
	Repeat  int
	version int
	c       cache
}

// Set changes the notice's text.
func (n *Notice) Set(level Level, text, detail string) {
	n.Level, n.Text, n.Detail = level, text, detail
	n.version++
}

// Render implements Item.
func (n *Notice) Render(c Ctx) Lines {
	if l, ok := n.c.get(c, n.version); ok {
		return l
	}
	th := c.Theme
	var glyph string
	var st theme.Style
	switch n.Level {
	case Warning:
		glyph, st = "⚠ ", th.Warn
	case Error:
		glyph, st = "✗ ", th.Error
	case Quiet:
		glyph, st = "· ", th.Dim
	default:
		glyph, st = "• ", th.Accent
	}
	text := n.Text
	if n.By != "" {
		text = n.By + ": " + text
	}
	lines := wrapText(text, c.Width-2)
	var out []string
	for i, l := range lines {
		prefix := "  "
		if i == 0 {
			prefix = st.Render(glyph)
		}
		if n.Level == Quiet {
			l = th.Dim.Render(l)
		} else if n.Level == Error {
			l = th.Error.Render(l)
		}
		out = append(out, prefix+l)
	}
	if n.Repeat > 1 {
		out[len(out)-1] += th.Dim.Render(fmt.Sprintf(" ×%d", n.Repeat))
	}
	if n.Detail != "" {
		for _, l := range wrapText(n.Detail, c.Width-2) {
			out = append(out, "  "+th.Dim.Render(l))
		}
	}
	return n.c.put(c, n.version, Strings(out))
}

// NoticeRun is notices that came one after another (extensions', the
// host's), kept bounded however many come: a notice the same as the
// last counts as a repeat of it, and the owner drops the oldest
// (DropOldest) when it keeps too many; a line says how many went.
type NoticeRun struct {
	entries []*Notice
	dropped int
	version int
	c       cache
}

// Add adds a notice; it reports false when the notice repeats the last
// one (and was counted on it instead).
func (r *NoticeRun) Add(n *Notice) bool {
	r.version++
	if k := len(r.entries); k > 0 {
		last := r.entries[k-1]
		if last.Level == n.Level && last.By == n.By && last.Text == n.Text && last.Detail == n.Detail {
			last.Repeat = max(last.Repeat, 1) + 1
			last.version++
			return false
		}
	}
	r.entries = append(r.entries, n)
	return true
}

// Len is how many notices the run keeps.
func (r *NoticeRun) Len() int { return len(r.entries) }

// DropOldest drops the run's first notice; the run says it went.
func (r *NoticeRun) DropOldest() {
	if len(r.entries) == 0 {
		return
	}
	r.entries[0] = nil
	r.entries = r.entries[1:]
	r.dropped++
	r.version++
}

// Dropped is how many notices the run dropped.
func (r *NoticeRun) Dropped() int { return r.dropped }

// Render implements Item.
func (r *NoticeRun) Render(c Ctx) Lines {
	if l, ok := r.c.get(c, r.version); ok {
		return l
	}
	var parts concat
	if r.dropped > 0 {
		parts = append(parts, Strings{c.Theme.Dim.Render(cut(fmt.Sprintf("· %d earlier notice(s) not kept", r.dropped), c.Width))})
	}
	for _, n := range r.entries {
		parts = append(parts, n.Render(c))
	}
	// concat reads through the entries' own caches.
	return r.c.put(c, r.version, parts)
}

// Text is a block of preformatted text under a title: a command's
// output, /help, /session.
type Text struct {
	Title string
	Body  string
	c     cache
}

// Render implements Item.
func (t *Text) Render(c Ctx) Lines {
	if l, ok := t.c.get(c, 0); ok {
		return l
	}
	th := c.Theme
	var out []string
	if t.Title != "" {
		out = append(out, th.AccentBold.Render(cut(termtext.Line(t.Title), c.Width)))
	}
	for _, l := range wrapText(strings.TrimRight(t.Body, "\n"), c.Width-2) {
		out = append(out, "  "+l)
	}
	return t.c.put(c, 0, Strings(out))
}

// Styled is lines already styled by the caller, cut to the width: the
// caller has made any outside text in them safe (termtext).
type Styled struct {
	Lines []string
	c     cache
}

// Render implements Item.
func (s *Styled) Render(c Ctx) Lines {
	if l, ok := s.c.get(c, 0); ok {
		return l
	}
	out := make([]string, len(s.Lines))
	for i, l := range s.Lines {
		out[i] = cut(l, c.Width)
	}
	return s.c.put(c, 0, Strings(out))
}

// concat reads several Lines as one, without copying.
type concat []Lines

func (cc concat) Len() int {
	n := 0
	for _, l := range cc {
		n += l.Len()
	}
	return n
}

func (cc concat) Line(i int) string {
	for _, l := range cc {
		if i < l.Len() {
			return l.Line(i)
		}
		i -= l.Len()
	}
	return ""
}

func visibleWidth(s string) int { return ansi.StringWidth(s) }

func stripANSI(s string) string { return ansi.Strip(s) }

func expandTabs(s string) string { return markdown.ExpandTabs(s) }
