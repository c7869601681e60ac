package sysprompt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/rules"
)

func projectDirs(t *testing.T) (layers.Dirs, string) {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	d, err := layers.Resolve(func(k string) string { return map[string]string{"HOME": home}[k] }, filepath.Join(root, "proj"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(d.Layer(layers.Project), 0o755))
	require.NoError(t, os.MkdirAll(d.Layer(layers.User), 0o755))
	return d, home
}

var envVars = rules.Map{Values: map[string]string{"cwd": "/p"}, Env: func(k string) (string, bool) {
	return map[string]string{"GITHUB_TOKEN": "ghp_secret"}[k], true
}}

// A cloned repository's prompt files never read the user's environment;
// the user's own may. Before, {{env.GITHUB_TOKEN}} in a project's
// APPEND_SYSTEM.md put the token in the prompt and the log.
func TestProjectFilesCannotReadTheEnvironment(t *testing.T) {
	t.Parallel()
	for _, file := range []string{SystemFile, AppendFile, UserPromptFile} {
		d, _ := projectDirs(t)
		p := filepath.Join(d.Layer(layers.Project), file)
		require.NoError(t, os.WriteFile(p, []byte("token: {{env.GITHUB_TOKEN}}\n"), 0o644))
		var err error
		if file == UserPromptFile {
			_, err = UserPrompt(d, envVars)
		} else {
			_, err = Resolve(d, Flags{Vars: envVars})
		}
		require.EqualError(t, err, p+" line 1: a project's prompt files cannot read your environment (only your own layers' files can): env.GITHUB_TOKEN", file)

		// The user's own file may.
		require.NoError(t, os.Remove(p))
		require.NoError(t, os.WriteFile(filepath.Join(d.Layer(layers.User), file), []byte("token: {{env.GITHUB_TOKEN}}\n"), 0o644))
		if file == UserPromptFile {
			blocks, err := UserPrompt(d, envVars)
			require.NoError(t, err)
			require.Equal(t, "token: ghp_secret\n", blocks[0].Text)
		} else {
			blocks, err := Resolve(d, Flags{Vars: envVars})
			require.NoError(t, err)
			require.Contains(t, Texts(blocks), "token: ghp_secret\n")
		}
	}
}

// A project's prompt file that is a link out of the project is refused;
// one within it is read. Before, APPEND_SYSTEM.md -> ~/.ssh/id_rsa went to
// the provider.
func TestProjectFilesStayInTheProject(t *testing.T) {
	t.Parallel()
	d, home := projectDirs(t)
	secret := filepath.Join(home, ".ssh", "id_rsa")
	require.NoError(t, os.MkdirAll(filepath.Dir(secret), 0o700))
	require.NoError(t, os.WriteFile(secret, []byte("-----BEGIN KEY-----\n"), 0o600))
	link := filepath.Join(d.Layer(layers.Project), AppendFile)
	require.NoError(t, os.Symlink(secret, link))
	_, err := Resolve(d, Flags{})
	require.ErrorContains(t, err, "read prompt file "+link+": it is a link to "+secret+", outside the project")

	require.NoError(t, os.Remove(link))
	inProject := filepath.Join(d.CWD, "docs", "rules.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(inProject), 0o755))
	require.NoError(t, os.WriteFile(inProject, []byte("rules\n"), 0o644))
	require.NoError(t, os.Symlink("../docs/rules.md", link))
	blocks, err := Resolve(d, Flags{})
	require.NoError(t, err)
	require.Contains(t, Texts(blocks), "rules\n")

	// The whole .panto folder a link out of the project.
	require.NoError(t, os.RemoveAll(d.Layer(layers.Project)))
	outside := filepath.Join(home, "elsewhere")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, UserPromptFile), []byte("x\n"), 0o644))
	require.NoError(t, os.Symlink(outside, d.Layer(layers.Project)))
	_, err = UserPrompt(d, nil)
	require.ErrorContains(t, err, "outside the project")
}
