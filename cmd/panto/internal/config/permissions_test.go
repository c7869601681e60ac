package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/host/permissions"
)

// Every layer's rules add up, each with the file it came from; the
// highest layer's mode and sandbox settings win.
func TestPermissionsMergeLayers(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	base := put(t, d, layers.Base, "[permissions]\ndeny = [\"bash(rm *)\"]\n[sandbox]\nnetwork = true\n")
	user := put(t, d, layers.User, `[permissions]
mode = "accept-edits"
allow = ["read", "bash(go test *)"]
ask = ["bash(git push *)"]
deny = ["read(~/.ssh/**)"]
[sandbox]
mode = "read-only"
writable_roots = ["~/.cache/go-build", "/opt/cache/"]
required = true
unix_sockets = ["~/.ssh/agent.sock"]
`)
	c, err := Load(d, Options{Home: "/home/u"})
	require.NoError(t, err)
	require.Equal(t, "accept-edits", c.Permissions.Mode)
	require.Equal(t, user, c.Permissions.ModeFrom)
	require.Equal(t, []Rule{{"bash(rm *)", base}, {"read(~/.ssh/**)", user}}, c.Permissions.Deny)
	require.Equal(t, []Rule{{"read", user}, {"bash(go test *)", user}}, c.Permissions.Allow)
	require.Equal(t, Sandbox{Mode: "read-only", Network: true, WritableRoots: []string{"/home/u/.cache/go-build", "/opt/cache"}, Required: true,
		UnixSockets: []string{"/home/u/.ssh/agent.sock"}}, c.Sandbox)

	pol, err := c.Permissions.Policy("", []string{"bash(make *)"})
	require.NoError(t, err)
	require.Equal(t, permissions.ModeAcceptEdits, pol.Mode)
	require.Len(t, pol.Allow, 3, "the flag's rule comes after the config's")
	require.Equal(t, "--allow", pol.Allow[2].Source)
	dec := pol.Decide("bash", []byte(`{"command":"make all && rm -rf /"}`), permissions.Env{Workspace: "/w", Home: "/home/u"})
	require.Equal(t, permissions.Deny, dec.Verdict, "a deny in the base layer holds over every allow")
	require.Equal(t, "config "+base, dec.Source)

	pol, err = c.Permissions.Policy("bypass", nil)
	require.NoError(t, err)
	require.Equal(t, permissions.ModeBypass, pol.Mode, "the flag's mode beats the config's")
	_, err = c.Permissions.Policy("yolo", nil)
	require.ErrorContains(t, err, `permission mode "yolo"`)
	_, err = c.Permissions.Policy("", []string{"bash("})
	require.ErrorContains(t, err, `--allow "bash("`)
}

// The defaults: mode default, the workspace-write sandbox with the
// network off.
func TestPermissionsDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(dirs(t), Options{})
	require.NoError(t, err)
	require.Equal(t, "default", c.Permissions.Mode)
	require.Equal(t, Sandbox{Mode: SandboxWorkspaceWrite}, c.Sandbox)
}

// A bad value names the file and the key.
func TestPermissionsBadValues(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"[permissions]\nmode = \"yolo\"\n":             `permissions.mode "yolo": want "default"`,
		"[permissions]\nallow = [\"bash(\"]\n":         `permissions.allow "bash("`,
		"[permissions]\ndeny = [\"\"]\n":               `permissions.deny ""`,
		"[sandbox]\nmode = \"none\"\n":                 `sandbox.mode "none": want "workspace-write", "read-only" or "off"`,
		"[sandbox]\nwritable_roots = [\"cache\"]\n":    `sandbox.writable_roots "cache": want an absolute path`,
		"[sandbox]\nnetwork = \"yes\"\n":               `network`,
		"[sandbox]\nunix_sockets = [\"agent.sock\"]\n": `sandbox.unix_sockets "agent.sock": want a socket's absolute path`,
		"[permissions]\nallowed = [\"read\"]\n":        `allowed`,
	} {
		d := dirs(t)
		p := put(t, d, layers.User, text)
		_, err := Load(d, Options{})
		require.ErrorContains(t, err, want, text)
		require.ErrorContains(t, err, filepath.Base(p), text)
	}
}

// A trusted project may make the boundary stricter, never looser: its
// allow rules, a looser mode, the network, more writable roots and
// required = false are never applied, and say why.
func TestProjectPermissionsStricterOnly(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	put(t, d, layers.User, "[permissions]\nmode = \"default\"\n")
	put(t, d, layers.Project, `[permissions]
mode = "bypass"
allow = ["bash"]
ask = ["bash(git *)"]
deny = ["edit(secrets/**)"]
[sandbox]
mode = "off"
network = true
writable_roots = ["/"]
required = false
unix_sockets = ["/var/run/docker.sock"]
`)
	c, err := load(t, d)
	require.NoError(t, err)
	require.True(t, c.Project.Applied)
	require.Equal(t, "default", c.Permissions.Mode)
	require.Empty(t, c.Permissions.Allow)
	require.Len(t, c.Permissions.Ask, 1, "a project may add ask rules")
	require.Len(t, c.Permissions.Deny, 1, "and deny rules")
	require.Equal(t, Sandbox{Mode: SandboxWorkspaceWrite}, c.Sandbox)
	var never []string
	for _, s := range c.Project.Never() {
		never = append(never, s.Key)
	}
	require.Equal(t, []string{"permissions.mode", "permissions.allow", "sandbox.mode", "sandbox.network", "sandbox.writable_roots", "sandbox.unix_sockets", "sandbox.required"}, never)

	// Stricter counts.
	put(t, d, layers.Project, "[permissions]\nmode = \"plan\"\n[sandbox]\nmode = \"read-only\"\nnetwork = false\nrequired = true\n")
	c, err = load(t, d)
	require.NoError(t, err)
	require.Empty(t, c.Project.Never())
	require.Equal(t, "plan", c.Permissions.Mode)
	require.Equal(t, Sandbox{Mode: SandboxReadOnly, Required: true}, c.Sandbox)
}

// The settings that loosen the boundary are guard keys: panto says when
// one changed in the user's files between runs.
func TestPermissionsAreGuards(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	p := put(t, d, layers.User, "[sandbox]\nnetwork = true\nwritable_roots = [\"/x\"]\n[permissions]\nmode = \"bypass\"\n")
	c, err := Load(d, Options{})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"sandbox.network": "true", "sandbox.writable_roots": `["/x"]`, "permissions.mode": `"bypass"`}, c.Guards[p])
}
