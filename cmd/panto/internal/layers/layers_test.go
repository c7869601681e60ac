package layers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestResolveDefaults(t *testing.T) {
	t.Parallel()
	d, err := Resolve(env(map[string]string{"HOME": "/h"}), "/w/proj")
	require.NoError(t, err)
	require.Equal(t, "/h/.local/share/panto", d.Home)
	require.Equal(t, [3]Layer{
		{Base, "/h/.local/share/panto/agent"},
		{User, "/h/.config/panto"},
		{Project, "/w/proj/.panto"},
	}, d.Layers)
	require.Equal(t, "/h/.local/share/panto/sessions", d.Sessions)
	require.Equal(t, "/h/.local/state/panto", d.State)
	require.Equal(t, "/h/.local/share/panto/sessions/-w-proj-", d.SessionDir())
}

func TestResolveOverrides(t *testing.T) {
	t.Parallel()
	d, err := Resolve(env(map[string]string{
		"HOME": "/h", "XDG_DATA_HOME": "/data", "XDG_CONFIG_HOME": "/cfg", "XDG_STATE_HOME": "/st",
	}), "/w")
	require.NoError(t, err)
	require.Equal(t, "/data/panto/agent", d.Layer(Base))
	require.Equal(t, "/cfg/panto", d.Layer(User))
	require.Equal(t, "/st/panto", d.State)

	d, err = Resolve(env(map[string]string{"HOME": "/h", "XDG_DATA_HOME": "/data", "PANTO_HOME": "/ph"}), "/w")
	require.NoError(t, err)
	require.Equal(t, "/ph/agent", d.Layer(Base), "PANTO_HOME beats XDG_DATA_HOME")

	d, err = Resolve(env(map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "relative"}), "/w")
	require.NoError(t, err)
	require.Equal(t, "/h/.config/panto", d.Layer(User), "a relative XDG value is ignored")
}

func TestResolveWithoutHome(t *testing.T) {
	t.Parallel()
	_, err := Resolve(env(nil), "/w")
	require.ErrorIs(t, err, ErrNoHome)
	_, err = Resolve(env(map[string]string{"PANTO_HOME": "/p", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s"}), "/w")
	require.NoError(t, err)
}

func TestFind(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d, err := Resolve(env(map[string]string{"HOME": root, "PANTO_HOME": filepath.Join(root, "ph")}), filepath.Join(root, "proj"))
	require.NoError(t, err)
	for _, l := range []Name{Base, Project} {
		require.NoError(t, os.MkdirAll(d.Layer(l), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d.Layer(l), "X.md"), []byte(l), 0o644))
	}
	files, err := d.Find("X.md")
	require.NoError(t, err)
	require.Equal(t, []File{
		{Base, filepath.Join(d.Layer(Base), "X.md")},
		{Project, filepath.Join(d.Layer(Project), "X.md")},
	}, files)

	require.NoError(t, os.MkdirAll(filepath.Join(d.Layer(Base), "D.md"), 0o755))
	_, err = d.Find("D.md")
	require.ErrorContains(t, err, "is a directory")
}

func TestEncodePath(t *testing.T) {
	t.Parallel()
	require.Equal(t, "-home-ann-my proj-", EncodePath("/home/ann/my proj"))
	require.Equal(t, "--", EncodePath("/"))
	require.Equal(t, "-C--x-y-", EncodePath(`C:\x\y`))
}
