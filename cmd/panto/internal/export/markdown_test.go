package export

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A message's text is written as it is, unless it could swallow what
// follows it.
func TestMDText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Fix the *failing* test.\n\n- one\n- two", "Fix the *failing* test.\n\n- one\n- two"},
		{"closed fence", "see:\n```go\nx := 1\n```\ndone", "see:\n```go\nx := 1\n```\ndone"},
		{"open fence closed after", "```\nunclosed", "```\nunclosed\n```"},
		{"open tilde fence", "~~~~\nx\n~~~\nstill code", "~~~~\nx\n~~~\nstill code\n~~~~"},
		{"longer closer closes", "```\nx\n`````\nafter", "```\nx\n`````\nafter"},
		{"closer with text is not one", "```\nx\n``` no\n", "```\nx\n``` no\n```"},
		{"backtick in info: no fence", "```a`b\n<!-- x", "```a`b\n\\<!-- x"},
		{"comment", "<!-- hidden\nrest", "\\<!-- hidden\nrest"},
		{"script indented", "   <script>x", "   \\<script>x"},
		{"indented code untouched", "    <pre>", "    <pre>"},
		{"html inside a fence untouched", "```\n<!--\n```", "```\n<!--\n```"},
		{"inline html untouched", "a <b>bold</b> word", "a <b>bold</b> word"},
		{"crlf", "a\r\nb\rc", "a\nb\nc"},
		{"fence in a list item", "- x\n  ```\n  y", "````text\n- x\n  ```\n  y\n````"},
		{"fence in a quote", "> ```\n> y", "````text\n> ```\n> y\n````"},
		{"indented fence", " ```\ny", "````text\n ```\ny\n````"},
		{"backticks in fallback", "- ````\n", "`````text\n- ````\n`````"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, mdText(tc.in))
		})
	}
}

func TestFence(t *testing.T) {
	t.Parallel()
	require.Equal(t, "```text\nx\n```", fence("x", "text"))
	require.Equal(t, "```text\nx\n```", fence("x\n", "text"))
	require.Equal(t, "```json\n```", fence("", "json"))
	require.Equal(t, "````text\na ``` b\n````", fence("a ``` b", "text"))
	require.Equal(t, "```````text\n``````\n```````", fence("``````", "text"))
	require.Equal(t, "```text\na\nb\n```", fence("a\rb", "text"))
}

func TestMDInline(t *testing.T) {
	t.Parallel()
	require.Equal(t, `APPEND_SYSTEM.md \_x\_ \*y\* \<b\> \[l\](u) \!\[i\] \& \| \~ \$ \# \\ \`+"`c\\`", mdInline("APPEND_SYSTEM.md _x_ *y* <b> [l](u) ![i] & | ~ $ # \\ `c`"))
	require.Equal(t, "a b  c d", mdInline("a\nb\r\nc\td"))
	require.Equal(t, "two lines", mdInline("two\nlines"))
	require.Equal(t, "`k:x`", mdCode("k:x"))
	require.Equal(t, "`` a`b ``", mdCode("a`b"))
	require.Equal(t, "``` `` ```", mdCode("``"))
	require.Equal(t, "`a b`", mdCode("a\nb"))
	require.Equal(t, "(none)", mdCode(""))
}

func TestQuote(t *testing.T) {
	t.Parallel()
	require.Equal(t, "> a\n>\n> b", quote("a\n\nb"))
	require.Equal(t, "> a\n> b", quote("a\rb"))
	// A fence in a quote stays in it: each of its lines is quoted.
	q := quote("line\n\n" + fence("x\r\n```\ny", "text"))
	require.Equal(t, "> line\n>\n> ````text\n> x\n> ```\n> y\n> ````", q)
	require.True(t, strings.HasPrefix(q, "> "))
}
