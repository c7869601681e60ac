package sysprompt

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/internal/testio"
	"github.com/stretchr/testify/require"
)

func setup(t *testing.T) layers.Dirs {
	t.Helper()
	root := t.TempDir()
	d, err := layers.Resolve(func(k string) string {
		return map[string]string{"HOME": root, "PANTO_HOME": filepath.Join(root, "home")}[k]
	}, filepath.Join(root, "proj"))
	require.NoError(t, err)
	return d
}

func write(t *testing.T, d layers.Dirs, l layers.Name, name, text string) string {
	t.Helper()
	p := filepath.Join(d.Layer(l), name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// The example of system-prompt-design.md §2.3.
func TestResolveSpecExample(t *testing.T) {
	t.Parallel()
	d := setup(t)
	write(t, d, layers.Base, SystemFile, "base seed\n")
	write(t, d, layers.Base, AppendFile, "base append\n")
	write(t, d, layers.User, AppendFile, "user append\n")
	pSeed := write(t, d, layers.Project, SystemFile, "project seed\n")
	write(t, d, layers.Project, AppendFile, "project append\n")

	blocks, err := Resolve(d, Flags{})
	require.NoError(t, err)
	require.Equal(t, []string{"project seed\n", "project append\n", "user append\n", "base append\n"}, Texts(blocks))
	require.Equal(t, "project "+pSeed, blocks[0].Source)
}

func TestResolveDefault(t *testing.T) {
	t.Parallel()
	d := setup(t)
	blocks, err := Resolve(d, Flags{})
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	require.Equal(t, "built-in default", blocks[0].Source)
	require.Equal(t, Default, blocks[0].Text)
	require.NotContains(t, Default, "You are a helpful assistant")
	require.Contains(t, Default, "project")
}

func TestResolveLowerLayerSeedAndBlankFiles(t *testing.T) {
	t.Parallel()
	d := setup(t)
	write(t, d, layers.User, SystemFile, "user seed")
	write(t, d, layers.Project, SystemFile, "  \n")
	write(t, d, layers.Project, AppendFile, "\n")
	blocks, err := Resolve(d, Flags{})
	require.NoError(t, err)
	require.Equal(t, []string{"user seed"}, Texts(blocks), "blank files count as absent")
}

func TestResolveFlags(t *testing.T) {
	t.Parallel()
	d := setup(t)
	write(t, d, layers.Project, SystemFile, "project seed")
	write(t, d, layers.Base, AppendFile, "base append")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "extra.md"), []byte("from file"), 0o644))

	blocks, err := Resolve(d, Flags{System: "flag seed", Appends: []string{filepath.Join(dir, "extra"), "literal"}})
	require.NoError(t, err)
	require.Equal(t, []string{"flag seed", "from file", "literal", "base append"}, Texts(blocks))
	require.Equal(t, "--system-prompt", blocks[0].Source)
	require.True(t, strings.HasSuffix(blocks[1].Source, "extra.md)"), blocks[1].Source)
}

func TestValue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "extra.md"), []byte("from extra.md"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plain"), []byte("from plain"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub.md"), []byte("from sub.md"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "only-dir"), 0o755))

	for _, tc := range []struct {
		value, text, problem string
	}{
		{value: "Be brief.", text: "Be brief."},
		{value: "literal", text: "literal"},
		{value: "see docs/x.md first", text: "see docs/x.md first"},
		{value: "two\nlines/x.md", text: "two\nlines/x.md"},
		{value: filepath.Join(dir, "plain"), text: "from plain"},
		{value: filepath.Join(dir, "extra"), text: "from extra.md"},
		{value: filepath.Join(dir, "extra.md"), text: "from extra.md"},
		{value: filepath.Join(dir, "sub"), text: "from sub.md"}, // a directory, but sub.md is a file
		{value: filepath.Join(dir, "missing.md"), problem: "no such file"},
		{value: filepath.Join(dir, "missing"), problem: "no such file (nor " + filepath.Join(dir, "missing") + ".md)"},
		{value: "./prompts/reviewer.md", problem: "no such file"},
		{value: "reviewer.md", problem: "no such file"},
		{value: "notes.TXT", problem: "no such file (nor notes.TXT.md)"},
		{value: filepath.Join(dir, "only-dir"), problem: "a directory, want a file"},
		{value: dir + "/", problem: "a directory, want a file"},
	} {
		text, _, err := Value(tc.value)
		if tc.problem == "" {
			require.NoError(t, err, tc.value)
			require.Equal(t, tc.text, text, tc.value)
			continue
		}
		var fe *FileError
		require.ErrorAs(t, err, &fe, tc.value)
		require.Equal(t, tc.value, fe.Path)
		require.Equal(t, tc.problem, fe.Problem, tc.value)
	}
}

func TestResolveNamesTheFlagOfAMissingFile(t *testing.T) {
	t.Parallel()
	d := setup(t)
	_, err := Resolve(d, Flags{System: "./prompts/reviewer.md"})
	require.EqualError(t, err, "--system-prompt ./prompts/reviewer.md: no such file")
	_, err = Resolve(d, Flags{Appends: []string{"fine text", "/"}})
	require.EqualError(t, err, "--append-system-prompt /: a directory, want a file")
	require.EqualError(t, Flags{Appends: []string{"x", "a/b"}}.Check(), "--append-system-prompt a/b: no such file (nor a/b.md)")
	require.NoError(t, Flags{System: "Be brief.", Appends: []string{"terse"}}.Check())
}

// A prompt file in a layer must be a regular file of at most 1 MiB in
// UTF-8; each error names the file.
func TestResolveRefusesSpecialHugeAndNonUTF8Files(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, p string)
		want string
	}{
		{"fifo", func(t *testing.T, p string) { testio.Mkfifo(t, p, 0o644) }, "read prompt file %s: a named pipe (FIFO), want a regular file"},
		{"device", func(t *testing.T, p string) { require.NoError(t, os.Symlink("/dev/zero", p)) }, "read prompt file %s: a device, want a regular file"},
		{"huge", func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("x", layers.MaxFileSize+1)), 0o644))
		}, "read prompt file %s: larger than 1 MiB, the limit for this file"},
		{"latin-1", func(t *testing.T, p string) { require.NoError(t, os.WriteFile(p, []byte("ok\nfa\xe7ade"), 0o644)) }, "%s: not valid UTF-8 at byte 6 (line 2): save it as UTF-8"},
	} {
		for _, file := range []string{SystemFile, AppendFile, UserPromptFile} {
			d := setup(t)
			p := filepath.Join(d.Layer(layers.User), file)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			tc.make(t, p)
			var err error
			if file == UserPromptFile {
				_, err = UserPrompt(d, nil)
			} else {
				_, err = Resolve(d, Flags{})
			}
			require.EqualError(t, err, fmt.Sprintf(tc.want, p), tc.name+" "+file)
		}
	}
	d := setup(t)
	p := write(t, d, layers.Project, SystemFile, strings.Repeat("x", layers.MaxFileSize))
	blocks, err := Resolve(d, Flags{})
	require.NoError(t, err, "exactly the limit is fine")
	require.Equal(t, "project "+p, blocks[0].Source)
}

func TestFlagFilesAreReadAsPromptFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.md")
	require.NoError(t, os.WriteFile(bad, []byte("\xff"), 0o644))
	huge := filepath.Join(dir, "huge.md")
	require.NoError(t, os.WriteFile(huge, []byte(strings.Repeat("x", layers.MaxFileSize+1)), 0o644))
	d := setup(t)
	for _, tc := range []struct {
		flags Flags
		want  string
	}{
		{Flags{System: bad}, "--system-prompt " + bad + ": not valid UTF-8 at byte 1 (line 1): save it as UTF-8"},
		{Flags{Appends: []string{filepath.Join(dir, "bad")}}, "--append-system-prompt " + bad + ": not valid UTF-8 at byte 1 (line 1): save it as UTF-8"},
		{Flags{System: huge}, "--system-prompt " + huge + ": larger than 1 MiB, the limit for this file"},
		{Flags{System: "two\nlines\xc3"}, "--system-prompt: the text is not valid UTF-8 at byte 10 (line 2): pass UTF-8 text"},
		{Flags{Appends: []string{"/dev/zero"}}, "--append-system-prompt /dev/zero: a device, want a file or a pipe"},
	} {
		_, err := Resolve(d, tc.flags)
		require.EqualError(t, err, tc.want)
		require.EqualError(t, tc.flags.Check(), tc.want)
	}
	var fe *FileError
	require.ErrorAs(t, Flags{System: "/dev/null"}.Check(), &fe, "a device is a command-line mistake")
}

// A pipe is read once; Check then Resolve both see its text.
func TestFlagPipeIsReadOnce(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	go func() {
		w.WriteString("from the pipe")
		w.Close()
	}()
	p := "/dev/fd/" + strconv.Itoa(int(r.Fd()))
	f := Flags{Appends: []string{p}}
	require.NoError(t, f.Check())
	blocks, err := Resolve(setup(t), f)
	require.NoError(t, err)
	require.Equal(t, []string{Default, "from the pipe"}, Texts(blocks))
	require.Equal(t, "--append-system-prompt (file "+p+")", blocks[1].Source)
}

func FuzzInvalidUTF8(f *testing.F) {
	f.Add("plain")
	f.Add("a\nb\xffc")
	f.Add("\xe2\x82")
	f.Add("ok \xef\xbf\xbd (a real U+FFFD)")
	f.Fuzz(func(t *testing.T, s string) {
		off, line, bad := invalidUTF8(s)
		if bad == utf8.ValidString(s) {
			t.Fatalf("bad = %v for %q", bad, s)
		}
		if !bad {
			return
		}
		if !utf8.ValidString(s[:off-1]) {
			t.Fatalf("%q: byte %d is not the first bad one", s, off)
		}
		if _, size := utf8.DecodeRuneInString(s[off-1:]); size != 1 {
			t.Fatalf("%q: byte %d starts a valid rune", s, off)
		}
		if want := strings.Count(s[:off-1], "\n") + 1; line != want {
			t.Fatalf("%q: line %d, want %d", s, line, want)
		}
	})
}
