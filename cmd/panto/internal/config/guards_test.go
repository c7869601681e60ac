package config

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

func TestGuardsChanged(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	user := put(t, d, layers.User, "model = \"m\"\nconfirm_default = \"no\"\n[extensions.guard]\nrequired = true\n")
	put(t, d, layers.Project, "extension_api_keys = [\"tools\"]\n")
	c, err := load(t, d)
	require.NoError(t, err)
	require.Equal(t, Guards{user: {"confirm_default": `"no"`, "extensions.guard.required": "true"}}, c.Guards,
		"the user's guarding settings, not the model, nor a project's")
	require.Empty(t, c.Guards.Changed(nil), "a first run changes nothing")
	require.Empty(t, c.Guards.Changed(c.Guards))

	prev := c.Guards
	put(t, d, layers.User, "model = \"other\"\nextension_api_keys = [\"tools\"]\n[extensions.guard]\nrequired = false\n")
	c, err = load(t, d)
	require.NoError(t, err)
	require.Equal(t, []GuardChange{
		{Path: user, Key: "confirm_default", Was: `"no"`},
		{Path: user, Key: "extension_api_keys", Now: `["tools"]`},
		{Path: user, Key: "extensions.guard.required", Was: "true", Now: "false"},
	}, c.Guards.Changed(prev))
}
