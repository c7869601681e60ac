//go:build unix

package extension

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A run's socket folder is its own (0700, named by its pid); opening one
// removes the folders of runs whose process is gone and keeps those of
// running ones; a root that is a symlink is passed over for the next.
func TestOpenSocketDir(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	root := filepath.Join(top, "panto")
	gone := exec.Command("true")
	require.NoError(t, gone.Run()) // its pid is no process's now
	dead := filepath.Join(root, strconv.Itoa(gone.Process.Pid)+"-1")
	alive := filepath.Join(root, strconv.Itoa(os.Getppid())+"-2")
	other := filepath.Join(root, "notes")
	for _, d := range []string{filepath.Join(dead, "plugin-dir1"), alive, other} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	require.NoError(t, os.Chmod(root, 0o755))
	link := filepath.Join(top, "link")
	require.NoError(t, os.Symlink(root, link))

	dir, removed, remove, err := OpenSocketDir([]string{link, root})
	require.NoError(t, err)
	require.Equal(t, root, filepath.Dir(dir), "the symlinked root is passed over")
	require.Equal(t, 1, removed)
	require.NoDirExists(t, dead)
	require.DirExists(t, alive)
	require.DirExists(t, other)
	fi, err := os.Stat(root)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the root is made the user's alone")
	fi, err = os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.Regexp(t, "^"+strconv.Itoa(os.Getpid())+"-", filepath.Base(dir))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "left"), nil, 0o600))
	remove()
	require.NoDirExists(t, dir)

	_, _, _, err = OpenSocketDir([]string{link})
	require.ErrorContains(t, err, "not a folder")
}

func TestSocketRoots(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	uid := strconv.Itoa(os.Getuid())
	require.Equal(t, []string{"/run/user/7/panto", "/t/panto-" + uid}, SocketRoots(env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/7", "TMPDIR": "/t"})))
	require.Equal(t, []string{"/t/panto-" + uid}, SocketRoots(env(map[string]string{"XDG_RUNTIME_DIR": "relative", "TMPDIR": "/t"})))
}
