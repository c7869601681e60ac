//go:build unix

package tui

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitRepo makes dir/.git a directory whose HEAD holds head.
func gitRepo(t *testing.T, dir, head string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte(head), 0o644))
}

func TestGitBranch(t *testing.T) {
	t.Parallel()
	t.Run("a branch, from a subdirectory", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		gitRepo(t, dir, "ref: refs/heads/main\n")
		sub := filepath.Join(dir, "a", "b")
		require.NoError(t, os.MkdirAll(sub, 0o755))
		require.Equal(t, "main", gitBranch(sub))
	})
	t.Run("detached", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		gitRepo(t, dir, "0123456789abcdef0123456789abcdef01234567\n")
		require.Equal(t, "0123456", gitBranch(dir))
	})
	t.Run("a worktree's gitdir file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		gitRepo(t, filepath.Join(dir, "g"), "ref: refs/heads/wt\n")
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: g/.git\n"), 0o644))
		require.Equal(t, "wt", gitBranch(dir))
	})
	t.Run("symbolic links to a directory and to regular files", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		real := filepath.Join(dir, "real")
		require.NoError(t, os.MkdirAll(filepath.Join(real, "g"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(real, "head"), []byte("ref: refs/heads/linked\n"), 0o644))
		require.NoError(t, os.Symlink(filepath.Join(real, "head"), filepath.Join(real, "g", "HEAD")))
		require.NoError(t, os.WriteFile(filepath.Join(real, "gitfile"), []byte("gitdir: "+filepath.Join(real, "g")), 0o644))

		p1 := filepath.Join(dir, "p1")
		require.NoError(t, os.MkdirAll(p1, 0o755))
		require.NoError(t, os.Symlink(filepath.Join(real, "g"), filepath.Join(p1, ".git")))
		require.Equal(t, "linked", gitBranch(p1), ".git a link to a directory, HEAD a link to a file")

		p2 := filepath.Join(dir, "p2")
		require.NoError(t, os.MkdirAll(p2, 0o755))
		require.NoError(t, os.Symlink(filepath.Join(real, "gitfile"), filepath.Join(p2, ".git")))
		require.Equal(t, "linked", gitBranch(p2), ".git a link to a gitdir file")
	})
}

// A .git or a HEAD that is not a regular file (a device, a FIFO, a
// directory) or is larger than a .git file or a HEAD can be shows no
// branch, and gitBranch returns: it neither blocks on a FIFO nor reads a
// device without end.
func TestGitBranchReadsOnlySmallRegularFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string)
	}{
		{".git a link to /dev/zero", func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, ".git")))
		}},
		{"gitdir's HEAD a link to /dev/zero", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: g\n"), 0o644))
			require.NoError(t, os.Mkdir(filepath.Join(dir, "g"), 0o755))
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "g", "HEAD")))
		}},
		{".git/HEAD a link to /dev/zero", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, ".git", "HEAD")))
		}},
		{".git a FIFO", func(t *testing.T, dir string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, ".git"), 0o644))
		}},
		{"HEAD a FIFO", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, ".git", "HEAD"), 0o644))
		}},
		{"HEAD a directory", func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git", "HEAD"), 0o755))
		}},
		{"a huge HEAD", func(t *testing.T, dir string) {
			gitRepo(t, dir, "ref: refs/heads/"+strings.Repeat("a", 1<<20)+"\n")
		}},
		{"a huge sparse HEAD that starts as a branch", func(t *testing.T, dir string) {
			gitRepo(t, dir, "ref: refs/heads/main\n")
			require.NoError(t, os.Truncate(filepath.Join(dir, ".git", "HEAD"), 1<<30))
		}},
		{"a huge .git file", func(t *testing.T, dir string) {
			gitRepo(t, filepath.Join(dir, "g"), "ref: refs/heads/main\n")
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: g/.git"+strings.Repeat(" ", 1<<20)), 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tc.make(t, dir)
			require.Equal(t, "", gitBranch(dir))
		})
	}
}
