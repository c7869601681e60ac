package trust

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStoreRoundTrip(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "user")
	s, err := Load(dir, ProjectsFile)
	require.NoError(t, err)
	a, b := Sum([]byte("a")), Sum([]byte("b"))
	require.Equal(t, Unknown, s.Check("/p/.panto/config.toml", a))
	s.Trust("/p/.panto/config.toml", a)
	s.Decline("/q/.panto/config.toml", b)
	require.NoError(t, s.Save())

	info, err := os.Stat(filepath.Join(dir, ProjectsFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary file is left")

	s, err = Load(dir, ProjectsFile)
	require.NoError(t, err)
	require.Equal(t, Trusted, s.Check("/p/.panto/config.toml", a))
	require.Equal(t, Changed, s.Check("/p/.panto/config.toml", b), "a change untrusts")
	require.Equal(t, Declined, s.Check("/q/.panto/config.toml", b))
	require.Equal(t, Unknown, s.Check("/q/.panto/config.toml", a), "a decline is for that content only")
	require.True(t, s.Revoke("/p/.panto/config.toml"))
	require.False(t, s.Revoke("/p/.panto/config.toml"))
	require.Equal(t, Unknown, s.Check("/p/.panto/config.toml", a))
}

// The extension store keeps the format panto wrote before it moved here.
func TestExtensionStoreFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sum := Sum([]byte("binary"))
	old := `{"version":1,"trusted":{"/p/.panto/extensions/x":"` + "41c8a1f5ab72d3fdba4e3cc1a3c87cf6b5f8d53d09f1a4cb1b2c6b9ec9d3cde4" + `"}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, ExtensionsFile), []byte(old), 0o600))
	s, err := Load(dir, ExtensionsFile)
	require.NoError(t, err)
	require.Equal(t, Changed, s.Check("/p/.panto/extensions/x", sum))
	s.Trust("/p/.panto/extensions/x", sum)
	require.NoError(t, s.Save())
	data, err := os.ReadFile(filepath.Join(dir, ExtensionsFile))
	require.NoError(t, err)
	require.NotContains(t, string(data), "declined", "nothing declined: the old shape")
}

func TestLoadBadStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, ProjectsFile)
	require.NoError(t, os.WriteFile(p, []byte("{not json"), 0o600))
	_, err := Load(dir, ProjectsFile)
	require.ErrorContains(t, err, "read "+p+": ")
	require.ErrorContains(t, err, "fix or delete it")
}
