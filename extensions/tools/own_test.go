package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
)

func TestDefaultOwnDirs(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	require.Equal(t, []string{"/h/.config/panto", "/h/.local/share/panto/agent", "/h/.local/share/panto/sessions", "/h/.local/state/panto"},
		defaultOwnDirs(env(map[string]string{"HOME": "/h"})))
	require.Equal(t, []string{"/c/panto", "/p/agent", "/p/sessions", "/s/panto"},
		defaultOwnDirs(env(map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d", "XDG_STATE_HOME": "/s", "PANTO_HOME": "/p"})))
	require.Equal(t, []string{"/d/panto/agent", "/d/panto/sessions"}, defaultOwnDirs(env(map[string]string{"XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "relative"})))
	require.Equal(t, ownDirs{"/a", "/b"}, findOwnDirs(env(map[string]string{OwnDirsEnv: "/a" + string(filepath.ListSeparator) + "relative" + string(filepath.ListSeparator) + "/b/", "HOME": "/h"})),
		"panto's list wins over the defaults")
}

// write and edit refuse a path in panto's own folders however it is
// spelled: directly, through ~, through .., through a symlink to the
// file or to a folder on the way, and into a folder that does not exist
// yet; the rest of the file system is theirs as before.
func TestWriteAndEditRefusePantosOwnFolders(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	home := filepath.Join(top, "home")
	config := filepath.Join(home, ".config", "panto")
	sessions := filepath.Join(top, "data", "sessions")
	proj := filepath.Join(top, "proj")
	for _, d := range []string{config, sessions, proj, filepath.Join(top, "elsewhere")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	cfg := filepath.Join(config, "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("model = \"x\"\n"), 0o644))
	// A folder reached through a symlink is refused by its real name too.
	require.NoError(t, os.Symlink(filepath.Join(top, "data"), filepath.Join(top, "datalink")))
	links := map[string]string{
		"cfg.toml": cfg,
		"conf":     config,
		"up":       "..",
		"chain":    "cfg.toml",
	}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(proj, name)); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	own := ownDirs{config, filepath.Join(top, "datalink", "sessions")}
	if r, err := physical(own[1]); err == nil {
		own = append(own, r)
	}
	e := &ext{dir: proj, own: own}
	run := func(name, path string) (string, bool) {
		t.Helper()
		in := map[string]any{"path": path, "content": "extension_api_keys = [\"tools\"]\n"}
		if name == "edit" {
			in = map[string]any{"path": path, "edits": []map[string]string{{"old_text": "model", "new_text": "extension_api_keys = [\"tools\"]\nmodel"}}}
		}
		raw, err := json.Marshal(in)
		require.NoError(t, err)
		for _, tool := range e.Tools() {
			if tool.Name == name {
				res, err := tool.Run(t.Context(), nil, sdk.ToolCall{ID: "c1", Name: name, Input: raw})
				require.NoError(t, err)
				return res.Content, res.IsError
			}
		}
		t.Fatalf("no tool %s", name)
		return "", false
	}
	refused := []string{
		cfg,
		filepath.Join(config, "new", "deep", "config.toml"),
		filepath.Join(proj, "..", "home", ".config", "panto", "config.toml"),
		"cfg.toml",
		"chain",
		"conf/config.toml",
		"conf/extensions/evil",
		"up/home/.config/panto/config.toml",
		filepath.Join(sessions, "x.jsonl"),
		filepath.Join(top, "datalink", "sessions", "x.jsonl"),
		config,
	}
	for _, name := range []string{"write", "edit"} {
		for _, p := range refused {
			out, isErr := run(name, p)
			require.True(t, isErr, "%s %s: %s", name, p, out)
			require.Contains(t, out, "panto's own configuration: the model does not write it; edit it yourself", "%s %s", name, p)
			require.True(t, strings.HasPrefix(out, name+" "), out)
		}
	}
	data, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.Equal(t, "model = \"x\"\n", string(data), "unchanged")
	require.NoDirExists(t, filepath.Join(config, "new"))
	require.NoFileExists(t, filepath.Join(sessions, "x.jsonl"))

	// Beside them, all is as before.
	out, isErr := run("write", filepath.Join(top, "elsewhere", "panto", "config.toml"))
	require.False(t, isErr, out)
	out, isErr = run("write", filepath.Join(home, ".config", "pantomime.toml"))
	require.False(t, isErr, out)
	out, isErr = run("write", "notes.md")
	require.False(t, isErr, out)
}
