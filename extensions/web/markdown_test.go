package main

import (
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestMarkdownGolden converts every testdata/markdown/*.html and
// compares the result with its .md golden file (rewritten with -update).
func TestMarkdownGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "markdown", "*.html"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	base, _ := url.Parse("https://go.dev/blog/errors")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			title, md, err := toMarkdown(strings.NewReader(string(in)), base)
			if err != nil {
				t.Fatal(err)
			}
			got := "Title: " + title + "\n---\n" + md
			golden := strings.TrimSuffix(f, ".html") + ".md"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s: got\n%s\nwant\n%s", f, got, want)
			}
		})
	}
}

// TestMarkdownKeepsAndDrops checks what a reader relies on, one thing a
// case, so a golden rewrite cannot hide a regression.
func TestMarkdownKeepsAndDrops(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/page")
	for _, tc := range []struct {
		name, html string
		want       []string
		not        []string
	}{
		{"heading", "<h2>Install</h2><p>Run it.</p>", []string{"## Install\n\nRun it."}, nil},
		{"relative link made absolute", `<p><a href="../api?x=1">API</a></p>`, []string{"[API](https://example.com/api?x=1)"}, nil},
		{"bold and em", "<p>a <b>big</b> <i>deal</i></p>", []string{"a **big** *deal*"}, nil},
		{"script and style dropped", "<script>var secret=1</script><style>.x{}</style><p>kept</p>", []string{"kept"}, []string{"secret", ".x"}},
		{"nav dropped", "<nav><a href='/'>Home</a></nav><p>body</p>", []string{"body"}, []string{"Home"}},
		{"ordered list", "<ol><li>one</li><li>two</li></ol>", []string{"1. one\n2. two"}, nil},
		{"nested list", "<ul><li>a<ul><li>b</li></ul></li></ul>", []string{"- a\n  - b"}, nil},
		{"code block", "<pre><code class='language-sh'>make\n  test</code></pre>", []string{"```sh\nmake\n  test\n```"}, nil},
		{"table", "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>", []string{"| k | v |\n| --- | --- |\n| a | 1 |"}, nil},
		{"entities", "<p>&lt;b&gt; &amp; &eacute;</p>", []string{`\<b> & é`}, nil},
		{"whitespace collapsed", "<p>  many\n\n   spaces\there </p>", []string{"many spaces here"}, nil},
		{"empty", "", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, md, err := toMarkdown(strings.NewReader(tc.html), base)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("missing %q in\n%s", w, md)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(md, n) {
					t.Errorf("%q should be dropped from\n%s", n, md)
				}
			}
		})
	}
}

// TestMarkdownDeepNesting: a page nested far deeper than maxDepth is
// converted (its text kept) without blowing the stack or the time.
func TestMarkdownDeepNesting(t *testing.T) {
	n := 100000
	page := strings.Repeat("<div><b>", n) + "deep text" + strings.Repeat("</b></div>", n)
	_, md, err := toMarkdown(strings.NewReader(page), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "deep text") {
		t.Errorf("the text is lost: %.200q", md)
	}
}

// FuzzMarkdown: any input converts without a panic to valid UTF-8 (for
// valid input), ending in a newline when not empty.
func FuzzMarkdown(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "markdown", "*.html"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("<ul><li><pre>```</pre></li></ul>")
	f.Add("<table><tr><td><table><tr><td>x</td></tr></table></td></tr></table>")
	f.Add("<a href='%zz'>bad</a><img alt='x' src='javascript:1'>")
	base, _ := url.Parse("https://example.com/")
	f.Fuzz(func(t *testing.T, in string) {
		_, md, err := toMarkdown(strings.NewReader(in), base)
		if err != nil {
			t.Fatal(err)
		}
		if utf8.ValidString(in) && !utf8.ValidString(md) {
			t.Errorf("invalid UTF-8 out of valid input: %q", md)
		}
		if md != "" && !strings.HasSuffix(md, "\n") {
			t.Errorf("no final newline: %q", md)
		}
	})
}
