package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui"
)

// The full-screen UI needs stdin and stdout to be terminals, TERM not
// dumb and no --plain; anything else keeps the line loop.
func TestFullScreenOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, out bool
		term    string
		plain   bool
		want    bool
	}{
		{true, true, "xterm-256color", false, true},
		{true, true, "", false, true},
		{true, true, "dumb", false, false},
		{true, true, "xterm", true, false},
		{true, false, "xterm", false, false},
		{false, true, "xterm", false, false},
	} {
		e := &env{terminal: tc.in, ttyOut: tc.out, getenv: func(k string) string {
			if k == "TERM" {
				return tc.term
			}
			return ""
		}}
		require.Equal(t, tc.want, fullScreen(e, &options{plain: tc.plain}), "%+v", tc)
	}
}

// docs/cli.md's key tables are the UI's: what /help shows.
func TestKeyTablesInDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/cli.md")
	require.NoError(t, err)
	for _, bs := range [][]tui.Binding{tui.Bindings, tui.DialogBindings} {
		require.Contains(t, string(doc), tui.MarkdownTable(bs), "docs/cli.md's key table differs from tui.Bindings: copy it from tui.MarkdownTable")
	}
	require.Contains(t, string(doc), tui.ActionsTable(), "docs/cli.md's table of [keys] actions differs from tui.Actions: copy it from tui.ActionsTable")
}
