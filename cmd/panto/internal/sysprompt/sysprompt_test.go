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
