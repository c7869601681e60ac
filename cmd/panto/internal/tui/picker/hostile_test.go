package picker

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// Rows, marks, descriptions, the title, the hint and the filter are
// shown through termtext; the item chosen is the item as given (a file
// name completed is the file's name).
func TestShowsHostileItems(t *testing.T) {
	t.Parallel()
	th := theme.New(true, false)
	var items []Item
	for _, h := range termtext.Hostile {
		items = append(items, Item{Title: h.Text, Desc: h.Text, Mark: h.Text})
	}
	p := New(termtext.HostileText(), items)
	p.Hint = termtext.HostileText()
	for _, w := range []int{40, 100} {
		for range items {
			out := strings.Join(p.View(th, w, 40), "\n")
			require.Empty(t, termtext.Leaks([]byte(out)), "%q", out)
			require.NoError(t, termtext.Check([]byte(sgr.ReplaceAllString(out, ""))))
			p.Move(1)
		}
	}
	p.SetFilter("\x1b]0;title\a\u202e")
	out := strings.Join(p.View(th, 60, 10), "\n")
	require.NoError(t, termtext.Check([]byte(sgr.ReplaceAllString(out, ""))), "the filter typed: %q", out)
	p.SetFilter("")
	p.Select(termtext.Hostile[0].Text)
	it, ok := p.Selected()
	require.True(t, ok)
	require.Equal(t, termtext.Hostile[0].Text, it.Title, "the item as given")
}
