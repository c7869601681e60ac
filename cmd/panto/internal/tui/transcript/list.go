// Package transcript is the conversation as the full-screen UI shows it:
// a lazy list of items (a user message, a reply, a tool call, a notice, a
// change of the system prompt), each rendering itself at a width and
// caching that render. The list's View is O(screen): it asks only the
// items on screen for their lines, and never joins or measures the whole
// transcript. A resumed session of thousands of messages costs at its
// first frame what its last screenful costs.
//
// Which events become which items is the UI's business (package tui);
// this package only shows items.
package transcript

import (
	"slices"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

// Ctx is what an item renders with.
type Ctx struct {
	Width int
	Theme *theme.Theme
	// Now and Frame animate what runs: elapsed time and a spinner.
	Now   time.Time
	Frame int
}

// Lines is an item's rendered lines, read without copying.
type Lines interface {
	Len() int
	Line(i int) string
}

// Strings is a Lines of a slice.
type Strings []string

// Len is the number of lines.
func (s Strings) Len() int { return len(s) }

// Line returns line i.
func (s Strings) Line(i int) string { return s[i] }

// Item is one entry of the transcript.
type Item interface {
	// Render returns the item's lines at c.Width. Items cache their
	// render: calling it again with the same width and theme, and
	// nothing changed, must be cheap.
	Render(c Ctx) Lines
}

// Collapsible is an item with more to show on demand (Ctrl-O).
type Collapsible interface {
	Item
	Toggle()
	Expanded() bool
	// Foldable reports whether Toggle changes anything: the item hides
	// something (as last rendered), or is expanded.
	Foldable() bool
}

// Live is an item whose render changes with time (a running tool's
// elapsed time, a spinner): the UI keeps ticking while one is on screen.
type Live interface {
	Live() bool
}

// List is the transcript: items in order, and where the screen is.
//
// Positions are (item, line) pairs over the items' blocks, where an
// item's block is a blank separator line (for every item but the first)
// and then its lines.
type List struct {
	items []Item
	// follow keeps the screen on the last line: new output scrolls in.
	follow bool
	// top is the first line on screen when not following.
	top pos
	// shown are the items of the last View, first to last.
	shownFirst, shownLast int
	// rows are the items of the last View's rows, top to bottom (-1 for
	// a row below the last item).
	rows    []int
	version int
}

type pos struct{ item, line int }

// New returns an empty list that follows new output.
func New() *List { return &List{follow: true, shownFirst: -1, shownLast: -1} }

// Append adds an item at the end.
func (l *List) Append(it Item) {
	l.items = append(l.items, it)
	l.version++
}

// InsertFront puts items before the first one (older history), keeping
// the screen where it is.
func (l *List) InsertFront(items ...Item) {
	if len(items) == 0 {
		return
	}
	l.items = append(append([]Item(nil), items...), l.items...)
	if !l.follow {
		l.top.item += len(items)
	}
	l.version++
}

// Reset empties the list (a move to another branch, another session):
// the screen follows new output again.
func (l *List) Reset() {
	l.items = nil
	l.follow, l.top = true, pos{}
	l.shownFirst, l.shownLast = -1, -1
	l.version++
}

// Len is the number of items.
func (l *List) Len() int { return len(l.items) }

// At returns item i.
func (l *List) At(i int) Item { return l.items[i] }

// Items returns the items (not a copy: do not change it).
func (l *List) Items() []Item { return l.items }

// Changed says an item changed; the next View shows it.
func (l *List) Changed() { l.version++ }

// Version changes whenever View may show something else.
func (l *List) Version() int { return l.version }

// Following reports whether the screen follows new output.
func (l *List) Following() bool { return l.follow }

// Shown returns the first and last item of the last View (-1, -1 when
// it showed none).
func (l *List) Shown() (first, last int) { return l.shownFirst, l.shownLast }

// blockLen is the length of item i's block: its lines (at least one)
// and the separator.
func (l *List) blockLen(c Ctx, i int) int {
	n := max(1, l.items[i].Render(c).Len())
	if i > 0 {
		n++
	}
	return n
}

// line returns line j of item i's block.
func (l *List) line(c Ctx, i, j int) string {
	if i > 0 {
		if j == 0 {
			return ""
		}
		j--
	}
	ls := l.items[i].Render(c)
	if j >= ls.Len() {
		return ""
	}
	return ls.Line(j)
}

// end is the position of the last line (valid only with items).
func (l *List) end(c Ctx) pos {
	i := len(l.items) - 1
	return pos{i, l.blockLen(c, i) - 1}
}

// back moves p up n lines; it stops at the first line.
func (l *List) back(c Ctx, p pos, n int) pos {
	for n > 0 {
		if p.line >= n {
			p.line -= n
			return p
		}
		n -= p.line + 1
		if p.item == 0 {
			p.line = 0
			return p
		}
		p.item--
		p.line = l.blockLen(c, p.item) - 1
	}
	return p
}

// forward moves p down n lines; atEnd reports that it reached the last
// line before moving them all.
func (l *List) forward(c Ctx, p pos, n int) (q pos, atEnd bool) {
	for n > 0 {
		bl := l.blockLen(c, p.item)
		if p.line+n < bl {
			p.line += n
			return p, false
		}
		if p.item == len(l.items)-1 {
			p.line = bl - 1
			return p, true
		}
		n -= bl - p.line
		p.item++
		p.line = 0
	}
	return p, false
}

// clamp keeps p inside the items (after a width change, say).
func (l *List) clamp(c Ctx, p pos) pos {
	if p.item >= len(l.items) {
		return l.end(c)
	}
	if bl := l.blockLen(c, p.item); p.line >= bl {
		p.line = bl - 1
	}
	return p
}

// ScrollUp moves the screen up n lines.
func (l *List) ScrollUp(c Ctx, height, n int) {
	if len(l.items) == 0 {
		return
	}
	if l.follow {
		l.top = l.back(c, l.end(c), height-1)
		l.follow = false
	}
	l.top = l.back(c, l.clamp(c, l.top), n)
	l.version++
}

// ScrollDown moves the screen down n lines; reaching the end follows
// new output again.
func (l *List) ScrollDown(c Ctx, height, n int) {
	if l.follow || len(l.items) == 0 {
		return
	}
	top, _ := l.forward(c, l.clamp(c, l.top), n)
	if _, atEnd := l.forward(c, top, height-1); atEnd {
		l.follow = true
	}
	l.top = top
	l.version++
}

// Top shows the first line.
func (l *List) Top() {
	if len(l.items) == 0 {
		return
	}
	l.follow = false
	l.top = pos{}
	l.version++
}

// Bottom follows new output again.
func (l *List) Bottom() {
	l.follow = true
	l.version++
}

// View returns exactly height lines: the screen. It renders only the
// items it shows (and, when following, none above them).
func (l *List) View(c Ctx, height int) []string {
	out := make([]string, 0, height)
	l.shownFirst, l.shownLast = -1, -1
	l.rows = l.rows[:0]
	if height <= 0 || len(l.items) == 0 {
		return pad(out, height)
	}
	if !l.follow {
		p := l.clamp(c, l.top)
		l.top = p
		l.shownFirst = p.item
		for {
			out = append(out, l.line(c, p.item, p.line))
			l.rows = append(l.rows, p.item)
			l.shownLast = p.item
			if len(out) == height {
				return out
			}
			q, atEnd := l.forward(c, p, 1)
			if atEnd {
				// Less than a screen below the top: show the last
				// screen, and follow new output again.
				l.follow = true
				return l.View(c, height)
			}
			p = q
		}
	}
	// Following: from the last line up.
	rev := make([]string, 0, height)
	for i := len(l.items) - 1; i >= 0 && len(rev) < height; i-- {
		bl := l.blockLen(c, i)
		for j := bl - 1; j >= 0 && len(rev) < height; j-- {
			rev = append(rev, l.line(c, i, j))
			l.rows = append(l.rows, i)
		}
		if l.shownLast < 0 {
			l.shownLast = i
		}
		l.shownFirst = i
	}
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	slices.Reverse(l.rows)
	// Fewer lines than the screen: they start at the top.
	return pad(out, height)
}

// ItemAt returns the item of row y of the last View, or -1 (a row below
// the last item, or off the screen).
func (l *List) ItemAt(y int) int {
	if y < 0 || y >= len(l.rows) {
		return -1
	}
	return l.rows[y]
}

// Focused returns the item a key that acts on "the block you read" acts
// on, among those of the last View that ok accepts: following new
// output, the last one on screen; scrolled, the one nearest the middle
// row. -1 when none on screen is.
func (l *List) Focused(ok func(i int) bool) int {
	if len(l.rows) == 0 {
		return -1
	}
	if l.follow {
		for y := len(l.rows) - 1; y >= 0; y-- {
			if ok(l.rows[y]) {
				return l.rows[y]
			}
		}
		return -1
	}
	mid := len(l.rows) / 2
	for d := 0; d < len(l.rows); d++ {
		for _, y := range []int{mid - d, mid + d} {
			if y >= 0 && y < len(l.rows) && ok(l.rows[y]) {
				return l.rows[y]
			}
		}
	}
	return -1
}

// pad fills the screen with blank lines below what there is.
func pad(out []string, height int) []string {
	for len(out) < height {
		out = append(out, "")
	}
	return out
}
