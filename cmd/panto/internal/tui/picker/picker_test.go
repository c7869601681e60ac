package picker

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

func items(names ...string) []Item {
	var out []Item
	for _, n := range names {
		out = append(out, Item{Title: n, Desc: "about " + n})
	}
	return out
}

// Typing filters, best match first: a prefix, a word's prefix, a
// substring, the letters in order.
func TestFilter(t *testing.T) {
	t.Parallel()
	p := New("Pick", items("session", "compact", "model", "system-append", "prompt-mode"))
	for _, r := range "mo" {
		p.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	var got []string
	for _, idx := range p.shown {
		got = append(got, p.items[idx].Title)
	}
	require.Equal(t, []string{"model", "prompt-mode"}, got)
	for _, tc := range []struct {
		q, s string
		ok   bool
	}{{"sa", "system-append", true}, {"ap", "system-append", true}, {"xz", "system-append", false}} {
		_, ok := Score(tc.q, tc.s)
		require.Equal(t, tc.ok, ok, tc.q)
	}
	it, ok := p.Selected()
	require.True(t, ok)
	require.Equal(t, "model", it.Title)
	p.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	p.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	require.Equal(t, 5, p.Len())
}

func TestKeys(t *testing.T) {
	t.Parallel()
	p := New("", items("a", "b", "c"))
	require.Equal(t, None, p.Update(tea.KeyPressMsg{Code: tea.KeyDown}))
	require.Equal(t, Choose, p.Update(tea.KeyPressMsg{Code: tea.KeyEnter}))
	it, _ := p.Selected()
	require.Equal(t, "b", it.Title)
	p.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	p.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	it, _ = p.Selected()
	require.Equal(t, "c", it.Title, "Up from the first wraps to the last")
	require.Equal(t, Cancel, p.Update(tea.KeyPressMsg{Code: tea.KeyEscape}))
	p.Select("a")
	it, _ = p.Selected()
	require.Equal(t, "a", it.Title)
}

// The view fits its box; a long list says how many more; a preview pane
// sits beside the list when there is room, under it when not.
func TestView(t *testing.T) {
	t.Parallel()
	th := theme.New(true, true)
	var names []string
	for i := range 30 {
		names = append(names, "item-"+string(rune('a'+i%26))+strings.Repeat("x", i))
	}
	p := New("Sessions", items(names...))
	p.Preview = func(it Item, w, h int) []string { return []string{"preview of " + it.Title, "second line"} }
	for _, w := range []int{40, 100} {
		v := p.View(th, w, 12)
		require.LessOrEqual(t, len(v), 12)
		for _, l := range v {
			require.LessOrEqual(t, ansi.StringWidth(l), w, "%q", ansi.Strip(l))
		}
		s := ansi.Strip(strings.Join(v, "\n"))
		require.Contains(t, s, "preview of item-a")
		require.Contains(t, s, "more")
	}
	wide := ansi.Strip(strings.Join(p.View(th, 100, 12), "\n"))
	require.Contains(t, wide, "│ preview of item-a", "beside the list")
}
