package tui

import (
	"os"
	"path/filepath"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"
)

// @ leaves out what git ignores (bin/ here, a nested .gitignore's *.log,
// .git/info/exclude's secret.txt), so @exten offers the sources, not the
// build outputs; typing an ignored path still completes it.
func TestAtLeavesOutIgnored(t *testing.T) {
	t.Parallel()
	f := newFake()
	dir := t.TempDir()
	for name, content := range map[string]string{
		".git/info/exclude":         "secret.txt\n",
		".gitignore":                "bin/\n",
		"bin/panto-ext-tools":       "",
		"extensions/tools/main.go":  "",
		"extensions/.gitignore":     "*.log\n",
		"extensions/tools/test.log": "",
		"secret.txt":                "",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	h := newHarness(t, f, func(o *Options) { o.CWD = dir })
	h.typ("see @exten")
	h.wait(func() bool { return h.m.files != nil }, "the files are listed")
	h.settle()
	require.Equal(t, []string{".gitignore", "extensions/", "extensions/.gitignore", "extensions/tools/", "extensions/tools/main.go"}, h.m.files)
	s := h.screen()
	require.Contains(t, s, "extensions/tools/main.go")
	require.NotContains(t, s, "panto-ext-tools")

	// Typing the ignored directory's name offers it; inside it, its files.
	h.key(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	h.typ("@bin")
	h.settle()
	require.Contains(t, h.screen(), "bin/")
	h.key(tea.KeyPressMsg{Code: tea.KeyTab})
	require.Equal(t, "@bin/", h.m.ed.value())
	h.settle()
	require.Contains(t, h.screen(), "bin/panto-ext-tools")
	h.key(tea.KeyPressMsg{Code: tea.KeyTab})
	require.Equal(t, "@bin/panto-ext-tools ", h.m.ed.value())

	// An ignored file in a listed directory, typed.
	h.key(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	h.typ("@extensions/tools/test")
	h.settle()
	h.key(tea.KeyPressMsg{Code: tea.KeyTab})
	require.Equal(t, "@extensions/tools/test.log ", h.m.ed.value())
}
