package gitignore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type testPath struct {
	rel   string
	isDir bool
	want  bool
}

func f(rel string, want bool) testPath { return testPath{rel, false, want} }
func d(rel string, want bool) testPath { return testPath{rel, true, want} }

// patternCases are patterns and what they match, as gitignore(5)
// describes them.
var patternCases = []struct {
	pattern string
	paths   []testPath
}{
	// A name without a slash matches at any depth.
	{"*.o", []testPath{f("a.o", true), f("x/y/a.o", true), f("a.oo", false), d("lib.o", true)}},
	{"bin", []testPath{d("bin", true), f("bin", true), d("cmd/bin", true), f("binary", false)}},
	// A trailing slash: directories only.
	{"bin/", []testPath{d("bin", true), f("bin", false), d("x/bin", true)}},
	// A leading or middle slash anchors to the file's directory.
	{"/bin", []testPath{d("bin", true), d("x/bin", false)}},
	{"doc/frotz", []testPath{f("doc/frotz", true), f("a/doc/frotz", false)}},
	{"doc/frotz/", []testPath{d("doc/frotz", true), f("doc/frotz", false)}},
	// * and ? stay within a name.
	{"a/*.go", []testPath{f("a/x.go", true), f("a/b/x.go", false)}},
	{"a?c", []testPath{f("abc", true), f("ac", false), f("a/c", false)}},
	// Sets, negated sets, ranges.
	{"[ab].txt", []testPath{f("a.txt", true), f("c.txt", false)}},
	{"[!ab].txt", []testPath{f("a.txt", false), f("c.txt", true)}},
	{"[^a-c]x", []testPath{f("bx", false), f("dx", true)}},
	{"v[0-9]", []testPath{f("v7", true), f("va", false)}},
	// **
	{"**/foo", []testPath{d("foo", true), f("a/b/foo", true)}},
	{"**/foo/bar", []testPath{f("foo/bar", true), f("x/foo/bar", true), f("x/foo/baz", false)}},
	{"abc/**", []testPath{d("abc", false), f("abc/x", true), f("abc/x/y", true)}},
	{"a/**/b", []testPath{f("a/b", true), f("a/x/b", true), f("a/x/y/b", true), f("b", false)}},
	{"foo**bar", []testPath{f("fooxbar", true), f("foo/bar", false)}}, // not a whole segment: a plain *
	// Quoting.
	{`\!important`, []testPath{f("!important", true)}},
	{`\#file`, []testPath{f("#file", true)}},
	{`a\ `, []testPath{f("a ", true), f("a", false)}},
	{"a   ", []testPath{f("a", true)}},
	{`x\*y`, []testPath{f("x*y", true), f("xzy", false)}},
	// * matches a leading dot, as git's does.
	{"*", []testPath{f(".env", true)}},
}

// One pattern against paths.
func TestPattern(t *testing.T) {
	t.Parallel()
	for _, tc := range patternCases {
		p, ok := ParseLine(tc.pattern)
		if !ok {
			t.Fatalf("%q: no pattern", tc.pattern)
		}
		for _, x := range tc.paths {
			if got := p.Match(x.rel, x.isDir); got != x.want {
				t.Errorf("%q against %q (dir %v): got %v, want %v", tc.pattern, x.rel, x.isDir, got, x.want)
			}
		}
	}
	for _, s := range []string{"", "   ", "# comment", "!", "/", "//"} {
		if _, ok := ParseLine(s); ok {
			t.Errorf("%q is a pattern", s)
		}
	}
}

// tree is a work tree for the matcher tests: its .gitignore files, an
// info/exclude, and the paths asked about.
var tree = map[string]string{
	".gitignore":          "bin/\n*.log\n!keep.log\n/build\ndocs/*.html\n!docs/index.html\nnode\\ \n**/gen/**\n",
	"sub/.gitignore":      "*.tmp\n!*.log\n/local\n",
	"sub/deep/.gitignore": "!x.tmp\n",
	".git/info/exclude":   "secret.txt\n",
}

var paths = []string{
	"bin/", "bin/panto", "cmd/bin/", "cmd/bin/tool",
	"a.log", "keep.log", "sub/a.log", "sub/x/b.log",
	"build/", "build/out", "sub/build/",
	"docs/a.html", "docs/index.html", "docs/x/a.html",
	"node ", "gen/", "gen/a.go", "x/gen/b.go",
	"sub/a.tmp", "sub/deep/x.tmp", "sub/deep/y.tmp", "sub/local", "local",
	"secret.txt", "sub/secret.txt", "main.go", "sub/main.go",
}

// makeTree writes tree and paths under a new directory; a path ending in
// "/" is a directory.
func makeTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range paths {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if strings.HasSuffix(rel, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// want is what git ignores of paths, as gitignore(5) reads tree.
var want = []string{
	"bin/", "bin/panto", "cmd/bin/", "cmd/bin/tool",
	"a.log",
	"build/", "build/out",
	"docs/a.html",
	"node ", "gen/a.go", "x/gen/b.go",
	"sub/a.tmp", "sub/deep/y.tmp", "sub/local",
	"secret.txt", "sub/secret.txt",
}

func excluded(m *Matcher, dir string) []string {
	var got []string
	for _, rel := range paths {
		isDir := strings.HasSuffix(rel, "/")
		if m.Excluded(filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(rel, "/"))), isDir) {
			got = append(got, rel)
		}
	}
	return got
}

// The matcher reads the nested .gitignore files and info/exclude, the
// deepest last; what is in an ignored directory is excluded.
func TestMatcher(t *testing.T) {
	t.Parallel()
	dir := makeTree(t)
	m := New(filepath.Join(dir, "sub"))
	if m == nil || m.Root() != dir {
		t.Fatalf("root: %v", m)
	}
	if got := excluded(m, dir); !slices.Equal(got, want) {
		t.Fatalf("excluded\n%q\nwant\n%q", got, want)
	}
	// Ignored asks about the path only, not its directories.
	if m.Ignored(filepath.Join(dir, "bin", "panto"), false) {
		t.Error("bin/panto ignored by itself")
	}
	if New(t.TempDir()) != nil {
		t.Error("a matcher outside a work tree")
	}
	var nilM *Matcher
	if nilM.Ignored(dir, true) || nilM.Excluded(dir, true) {
		t.Error("a nil matcher ignores")
	}
}

// A linked work tree's .git is a file: info/exclude is the main
// repository's.
func TestMatcherLinkedWorktree(t *testing.T) {
	t.Parallel()
	main := t.TempDir()
	wt := t.TempDir()
	gd := filepath.Join(main, ".git", "worktrees", "wt")
	for p, c := range map[string]string{
		filepath.Join(main, ".git", "info", "exclude"): "secret\n",
		filepath.Join(gd, "commondir"):                 "../..\n",
		filepath.Join(wt, ".git"):                      "gitdir: " + gd + "\n",
		filepath.Join(wt, "secret"):                    "",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !New(wt).Ignored(filepath.Join(wt, "secret"), false) {
		t.Fatal("info/exclude of the main repository not read")
	}
}

// The same answers as git check-ignore, where git is installed.
func TestMatcherAgainstGit(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := makeTree(t)
	// git init keeps an existing info/exclude.
	cmd := exec.Command(git, "init", "-q", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	var in bytes.Buffer
	for _, rel := range paths {
		in.WriteString(strings.TrimSuffix(rel, "/") + "\n")
	}
	cmd = exec.Command(git, "-C", dir, "check-ignore", "--no-index", "--stdin")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("git check-ignore: %v", err)
		}
	}
	ignored := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		ignored[l] = true
	}
	var fromGit []string
	for _, rel := range paths {
		if ignored[strings.TrimSuffix(rel, "/")] {
			fromGit = append(fromGit, rel)
		}
	}
	if got := excluded(New(dir), dir); !slices.Equal(got, fromGit) {
		t.Fatalf("the matcher\n%q\ngit check-ignore\n%q", got, fromGit)
	}
}

// Each pattern case as git check-ignore answers it, where git is
// installed: the table says what git does.
func TestPatternAgainstGit(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for _, tc := range patternCases {
		dir := t.TempDir()
		run := func(stdin string, args ...string) string {
			cmd := exec.Command(git, append([]string{"-C", dir}, args...)...)
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			cmd.Stdin = strings.NewReader(stdin)
			out, _ := cmd.Output()
			return string(out)
		}
		run("", "init", "-q")
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(tc.pattern+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var in strings.Builder
		for _, x := range tc.paths {
			p := filepath.Join(dir, filepath.FromSlash(x.rel))
			// A directory is one on disk (git asks the disk).
			if x.isDir {
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			in.WriteString(x.rel + "\n")
		}
		ignored := map[string]bool{}
		for _, l := range strings.Split(run(in.String(), "check-ignore", "--no-index", "--stdin"), "\n") {
			ignored[l] = true
		}
		for _, x := range tc.paths {
			if !x.isDir && slices.ContainsFunc(tc.paths, func(y testPath) bool { return y.isDir && y.rel == x.rel }) {
				continue // git asks the disk whether it is a directory: it is one
			}
			if ignored[x.rel] != x.want {
				t.Errorf("%q against %q: git says %v, the table %v", tc.pattern, x.rel, ignored[x.rel], x.want)
			}
		}
	}
}

// Wild takes time proportional to its inputs' product, whatever the
// pattern: a run of stars does not backtrack exponentially.
func TestWildLinear(t *testing.T) {
	t.Parallel()
	pat := strings.Repeat("*a", 50) + "b"
	name := strings.Repeat("a", 5000)
	if Wild(pat, name) {
		t.Fatal("matched")
	}
	segs := strings.Repeat("**/a/", 40) + "b"
	p, _ := ParseLine(segs)
	if p.Match(strings.Repeat("a/", 400)+"c", false) {
		t.Fatal("matched")
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"*.o", "!keep", "/bin/", `\#x\ `, "a/**/b", "[!a-z]?", "[", `\`, "**", "[]-]"} {
		f.Add(s, "a/b/c.o", true)
	}
	f.Fuzz(func(t *testing.T, line, rel string, isDir bool) {
		p, ok := ParseLine(line)
		if !ok {
			return
		}
		p.Match(rel, isDir)
		Parse([]byte(line + "\n" + line))
	})
}
