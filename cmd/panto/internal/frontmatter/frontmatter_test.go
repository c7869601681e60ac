package frontmatter

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	t.Parallel()
	doc, err := Parse("---\nname: pdf-tools\n# a comment\ndescription: \"Fill in \\\"PDF\\\" forms.\"\nargument-hint: '[file] [it''s]'\nfolded: >\n  one\n  two\n\n  three\nliteral: |-\n  a\n    b\nmetadata:\n  author: ann\n  version: 1\nplain: x # comment\n---\nBody here.\n")
	require.NoError(t, err)
	want := map[string]string{
		"name":          "pdf-tools",
		"description":   `Fill in "PDF" forms.`,
		"argument-hint": "[file] [it's]",
		"folded":        "one two\nthree\n",
		"literal":       "a\n  b",
		"metadata":      "author: ann\nversion: 1",
		"plain":         "x",
	}
	for k, v := range want {
		got, ok := doc.Get(k)
		require.True(t, ok, k)
		require.Equal(t, v, got, k)
	}
	require.Equal(t, 2, doc.Line("name"))
	require.Equal(t, 4, doc.Line("description"))
	require.Equal(t, "Body here.\n", doc.Body)
	require.Equal(t, 19, doc.BodyLine)
}

func TestNoFrontMatter(t *testing.T) {
	t.Parallel()
	doc, err := Parse("Review $1 carefully.\n---\n")
	require.NoError(t, err)
	require.Empty(t, doc.Fields)
	require.Equal(t, "Review $1 carefully.\n", strings.SplitAfter(doc.Body, "\n")[0])
}

func TestCRLF(t *testing.T) {
	t.Parallel()
	doc, err := Parse("---\r\nname: a\r\n---\r\nbody\r\n")
	require.NoError(t, err)
	v, _ := doc.Get("name")
	require.Equal(t, "a", v)
	require.Equal(t, "body\r\n", doc.Body)
}

func TestErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		line int
		want string
	}{
		{"---\nname: a\n", 1, "never closed"},
		{"---\nname: a\nthis is prose\n---\n", 3, "want key: value"},
		{"---\nname: a\nname: b\n---\n", 3, "given twice (first on line 2)"},
		{"---\ndescription: \"open\n---\n", 2, "no closing quote"},
		{"---\ndescription: 'open\n---\n", 2, "no closing quote"},
		{"---\n  indented: x\n---\n", 2, "no key above"},
		{"---\nname:x\n---\n", 2, "want a space"},
		{"---\nname: a\n  b: c\n---\n", 3, "has a value on its own line"},
		{"---\nd: \"a\\qb\"\n---\n", 2, `unknown escape \q`},
		{"---\nd: \"a\" b\n---\n", 2, "text after the closing quote"},
		{"---\n\tname: a\n---\n", 2, "a tab indents"},
		{"---\nd: >x\n---\n", 2, "alone after the key"},
	} {
		_, err := Parse(c.text)
		var fe *Error
		require.True(t, errors.As(err, &fe), "%q: %v", c.text, err)
		require.Equal(t, c.line, fe.Line, c.text)
		require.Contains(t, fe.Error(), c.want, c.text)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "---\n---\n", "---\nname: a\ndescription: b\n---\nbody",
		"---\nd: >\n  a\n\n  b\nl: |+\n  x\n\n---\n", "---\nm:\n  - a\n  - b\n---\n",
		"---\nq: \"\\\"\\n\"\nr: 'it''s'\n---\n", "---\r\nx: y\r\n...\r\n", "---\n\tx: y\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc, err := Parse(s)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Line < 1 || fe.Line > strings.Count(s, "\n")+1 {
				t.Fatalf("error %v: want an *Error naming a line of the text", err)
			}
			return
		}
		if len(doc.Fields) == 0 && doc.Body != strings.TrimPrefix(s, "\ufeff") && !strings.HasPrefix(s, "---") && !strings.HasPrefix(s, "\ufeff---") {
			t.Fatalf("no front matter, yet the body is not the text")
		}
		if !strings.HasSuffix(strings.TrimPrefix(s, "\ufeff"), doc.Body) {
			t.Fatalf("the body %q is not the end of the text", doc.Body)
		}
		seen := map[string]bool{}
		for _, fl := range doc.Fields {
			if seen[fl.Key] {
				t.Fatalf("key %s twice", fl.Key)
			}
			seen[fl.Key] = true
		}
	})
}
