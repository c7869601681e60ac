package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// ParseCommand is every front end's one rule of what is a command: the
// name ends at the first space, tab or line break, the rest is the
// arguments, trimmed, line breaks and all.
func TestParseCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want Command
	}{
		{"/help", Command{Name: "help"}},
		{"/model gpt-5", Command{Name: "model", Args: "gpt-5"}},
		{"/model   gpt-5  ", Command{Name: "model", Args: "gpt-5"}},
		{"/model\tgpt-5", Command{Name: "model", Args: "gpt-5"}},
		{"/model\t \tgpt-5\t", Command{Name: "model", Args: "gpt-5"}},
		{"/model\ngpt-5", Command{Name: "model", Args: "gpt-5"}},
		{"/help\n", Command{Name: "help"}},
		{"/help   ", Command{Name: "help"}},
		// The arguments keep their line breaks, trimmed at both ends only.
		{"/note first line\nsecond line\n", Command{Name: "note", Args: "first line\nsecond line"}},
		{"/note\nfirst line\nsecond line", Command{Name: "note", Args: "first line\nsecond line"}},
		{"/note\nfirst words here\nmore", Command{Name: "note", Args: "first words here\nmore"}},
		{"/note\tcol1\tcol2 rest", Command{Name: "note", Args: "col1\tcol2 rest"}},
		// A slash after the first word is the arguments'.
		{"/label see /usr/bin", Command{Name: "label", Args: "see /usr/bin"}},
		{"/tree\t/x", Command{Name: "tree", Args: "/x"}},
		// A CRLF line break (a prompt file piped to print mode) ends
		// the name as a line feed does.
		{"/note\r\nfirst line\r\nsecond line\r", Command{Name: "note", Args: "first line\r\nsecond line"}},
		{"/help\r\n", Command{Name: "help"}},
	} {
		got, ok := ParseCommand(tc.text)
		require.Truef(t, ok, "%q is a command", tc.text)
		require.Equalf(t, tc.want, got, "%q", tc.text)
	}
}

// Text that is not a command is a message, sent as typed: a path at the
// start, a lone slash, a doubled one, text before the slash.
func TestParseCommandMessages(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"",
		"hello",
		"/usr/bin is where it lives",
		"/usr/bin",
		"/usr/bin\tis where",
		"/usr/bin\nis where",
		"/a/b",
		"/a/",
		"/",
		"/ ",
		"/\n",
		"/\t\n ",
		"//x",
		"//",
		" /help",
		"\t/help",
		"\n/help",
		"say /help",
	} {
		c, ok := ParseCommand(text)
		require.Falsef(t, ok, "%q is a message, not a command", text)
		require.Zerof(t, c, "%q", text)
	}
}

// IsQuit is /quit or /exit with nothing after it, around white space
// and all (a line the line loop has not trimmed yet).
func TestIsQuit(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"/quit", "/exit", "/quit\n", "  /exit  ", "\t/quit\t\n", "/exit\r\n"} {
		require.Truef(t, IsQuit(text), "%q quits", text)
	}
	for _, text := range []string{
		"/quit now", "/exit 1", "/quit\nplease", "/exit\tx",
		"/quitx", "/exits", "/q", "quit", "exit", "//quit", "/quit/", "/help", "/", "",
	} {
		require.Falsef(t, IsQuit(text), "%q does not quit", text)
	}
}
