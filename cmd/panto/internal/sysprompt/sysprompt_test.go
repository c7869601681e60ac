package sysprompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
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
