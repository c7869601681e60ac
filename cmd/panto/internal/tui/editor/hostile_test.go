package editor

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

// The editor keeps what it is given (a paste, a completed file name, a
// message put back from /tree) byte for byte, and shows what a terminal
// would obey in it: C0 controls as ^X, C1 and bidi controls as their
// escapes, the cursor where the text is.
func TestShowsHostileText(t *testing.T) {
	t.Parallel()
	th := theme.New(true, false)
	for _, h := range append(termtext.Hostile, termtext.Sample{Name: "all", Text: termtext.HostileText()}) {
		m := New()
		m.SetWidth(30)
		m.MaxHeight = 100
		m.InsertString(h.Text)
		require.Equal(t, strings.ToValidUTF8(h.Text, "\uFFFD"), m.Value(), h.Name)
		rows, _, _ := m.View(th)
		out := strings.Join(rows, "\n")
		require.Empty(t, termtext.Leaks([]byte(out)), "%s: %q", h.Name, out)
		require.NoError(t, termtext.Check([]byte(sgr.ReplaceAllString(out, ""))), h.Name)
		for _, r := range rows {
			require.LessOrEqual(t, ansi.StringWidth(r), 30, "%s: %q", h.Name, r)
		}
	}
	m := New()
	m.InsertString("a\u202eb\u009bc")
	rows, cx, _ := m.View(th)
	require.Equal(t, []string{`a\u202eb\u009bc`}, rows)
	require.Equal(t, len(`a\u202eb\u009bc`), cx, "the cursor after what shows")
}
