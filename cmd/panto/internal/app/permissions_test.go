package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
)

// "Always allow" adds the rules to the user's config.toml, keeping what
// is written there: a new file, a file without the table, a table
// without the key, a one-line list, a list over several lines; what
// follows the table stays its own.
func TestAddAllowRules(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ before, want string }{
		"no file":       {"", "[permissions]\nallow = [\"bash(make)\"]\n"},
		"no table":      {"model = \"m\" # mine\n", "model = \"m\" # mine\n\n[permissions]\nallow = [\"bash(make)\"]\n"},
		"no key":        {"[permissions]\ndeny = [\"bash(rm *)\"]\n", "[permissions]\nallow = [\"bash(make)\"]\ndeny = [\"bash(rm *)\"]\n"},
		"one line":      {"[permissions]\nallow = [\"read\"]\n", "[permissions]\nallow = [\"bash(make)\", \"read\"]\n"},
		"empty list":    {"[permissions]\nallow = []\n", "[permissions]\nallow = [\"bash(make)\"]\n"},
		"several lines": {"[permissions]\nallow = [\n  \"read\", # reads\n]\n", "[permissions]\nallow = [\"bash(make)\", \n  \"read\", # reads\n]\n"},
		"another table's allow": {"[permissions]\nmode = \"default\"\n\n[mcp.x]\ncommand = \"x\"\nenabled_tools = [\"allow\"]\n",
			"[permissions]\nallow = [\"bash(make)\"]\nmode = \"default\"\n\n[mcp.x]\ncommand = \"x\"\nenabled_tools = [\"allow\"]\n"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "panto", "config.toml")
			if tc.before != "" {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
				require.NoError(t, os.WriteFile(path, []byte(tc.before), 0o600))
			}
			require.NoError(t, AddAllowRules(path, []string{"bash(make)"}))
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
			_, err = config.Parse(path, got)
			require.NoError(t, err, "the file still loads")
		})
	}
}

// A file the rule cannot be added to cleanly is left as it was, and the
// error says what to add by hand.
func TestAddAllowRulesLeavesABrokenFileAlone(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.toml")
	before := "[permissions]\nallow = \"read\"\n" // not a list
	require.NoError(t, os.WriteFile(path, []byte(before), 0o600))
	err := AddAllowRules(path, []string{"bash(make)"})
	require.ErrorContains(t, err, "add bash(make) to [permissions] allow yourself")
	got, _ := os.ReadFile(path)
	require.Equal(t, before, string(got))
}

// Shift+Tab walks the modes in a circle.
func TestNextMode(t *testing.T) {
	t.Parallel()
	mode := "default"
	var seen []string
	for range 4 {
		mode = string(NextMode(mode))
		seen = append(seen, mode)
	}
	require.Equal(t, []string{"accept-edits", "plan", "bypass", "default"}, seen)
}

// The writable roots hold a worktree's own git directory and its main
// repository's common one.
func TestGitDirsOfAWorktree(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	main := filepath.Join(root, "main", ".git")
	wt := filepath.Join(root, "wt")
	gitdir := filepath.Join(main, "worktrees", "wt")
	require.NoError(t, os.MkdirAll(gitdir, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(wt, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644))
	require.Equal(t, []string{gitdir, main}, gitDirs(filepath.Join(wt, "sub")))
	require.Equal(t, []string{main}, gitDirs(filepath.Join(root, "main")))
	require.Empty(t, gitDirs(t.TempDir()))
}
