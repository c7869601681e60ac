package skills

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// The sum covers every file of the project's skill and template
// folders, by path and content: a change of any changes it, a user
// layer's skill does not.
func TestProjectSumChangesWithAnyFile(t *testing.T) {
	d := testDirs(t)
	sum, files, err := ProjectSum(d)
	require.NoError(t, err)
	require.Zero(t, files)

	write(t, filepath.Join(d.CWD, ".claude", "skills", "a", "SKILL.md"), skill("a", "A"))
	write(t, filepath.Join(d.CWD, ".claude", "skills", "a", "run.sh"), "echo a\n")
	write(t, filepath.Join(d.CWD, ".claude", "commands", "fix.md"), "Fix $1.\n")
	first, files, err := ProjectSum(d)
	require.NoError(t, err)
	require.Equal(t, 3, files)
	require.NotEqual(t, sum, first)

	write(t, filepath.Join(d.Layer("user"), "skills", "u", "SKILL.md"), skill("u", "U"))
	again, _, err := ProjectSum(d)
	require.NoError(t, err)
	require.Equal(t, first, again, "the user's own skills are not the project's")

	write(t, filepath.Join(d.CWD, ".claude", "skills", "a", "run.sh"), "echo b\n")
	changed, _, err := ProjectSum(d)
	require.NoError(t, err)
	require.NotEqual(t, first, changed, "a bundled script is part of the skill")

	// A file moved to another name is another sum.
	require.NoError(t, os.Rename(filepath.Join(d.CWD, ".claude", "skills", "a", "run.sh"), filepath.Join(d.CWD, ".claude", "skills", "a", "go.sh")))
	moved, _, err := ProjectSum(d)
	require.NoError(t, err)
	require.NotEqual(t, changed, moved)

	if runtime.GOOS != "windows" {
		require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(d.CWD, ".claude", "skills", "a", "link")))
		linked, files, err := ProjectSum(d)
		require.NoError(t, err)
		require.Equal(t, 4, files)
		require.NotEqual(t, moved, linked, "a link counts by where it points")
	}
}
