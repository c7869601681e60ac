package config

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// [keys] in every layer, the higher winning per action, the keys written
// as the UI names them; a key that names nothing is refused.
func TestKeys(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	put(t, d, layers.Base, "[keys]\nexternal_editor = \"Ctrl-E\"\nredraw = \"f5\"\n")
	put(t, d, layers.User, "[keys]\nexternal_editor = \"alt+e\"\nexpand_all = \"Shift+Ctrl+O\"\ntoggle_thinking = \"\"\n")
	c, err := load(t, d)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"external_editor": "alt+e", "redraw": "f5", "expand_all": "ctrl+shift+o", "toggle_thinking": ""}, c.Keys)

	d = dirs(t)
	put(t, d, layers.User, "[keys]\nexternal_editor = \"hyper+e\"\n")
	_, err = load(t, d)
	require.ErrorContains(t, err, `keys.external_editor "hyper+e": want a key such as "ctrl+g"`)

	for in, want := range map[string]string{"Ctrl-G": "ctrl+g", "ctrl++": "ctrl++", "Alt+Shift+Ctrl+X": "ctrl+alt+shift+x", "F2": "f2", "meta-x": "alt+x"} {
		require.Equal(t, want, NormalizeKey(in), in)
		require.True(t, ValidKey(NormalizeKey(in)), in)
	}
	require.False(t, ValidKey("ctrl+"+"nope"))
}
