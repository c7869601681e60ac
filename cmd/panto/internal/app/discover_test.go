package app

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
)

// writeExt writes a file in the extensions/ folder of layer l (made if
// need be) with mode perm, and returns its path.
func writeExt(t *testing.T, d layers.Dirs, l layers.Name, name string, perm os.FileMode) string {
	t.Helper()
	dir := filepath.Join(d.Layer(l), "extensions")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\necho "+name+"\n"), perm))
	require.NoError(t, os.Chmod(path, perm))
	return path
}

// found is a candidate as a test compares it.
type found struct {
	Path, Source, Skip string
	Checksum           bool
}

func foundOf(cands []Candidate) []found {
	var out []found
	for _, c := range cands {
		out = append(out, found{c.Spec.Path, c.Spec.Source, c.Skip, c.Spec.Checksum != nil})
	}
	return out
}

// Discovery finds the executables of each layer's extensions/ folder,
// base → user → project, by name within a folder, then the --extension
// paths in the order given: not a file that may not be run, a hidden
// one or a directory. A project-layer binary no one trusted is found,
// and will not run.
func TestDiscoverOrder(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	baseB := writeExt(t, d, layers.Base, "b-two", 0o755)
	baseA := writeExt(t, d, layers.Base, "a-one", 0o700)
	writeExt(t, d, layers.Base, "README.md", 0o644)
	writeExt(t, d, layers.Base, ".hidden", 0o755)
	require.NoError(t, os.Mkdir(filepath.Join(d.Layer(layers.Base), "extensions", "c-dir"), 0o755))
	user := writeExt(t, d, layers.User, "z-user", 0o755)
	writeExt(t, d, layers.User, "notes", 0o600)
	project := writeExt(t, d, layers.Project, "p-ext", 0o755)
	other := t.TempDir()
	flagY := filepath.Join(other, "y-flag")
	flagX := filepath.Join(other, "x-flag")
	for _, p := range []string{flagY, flagX} {
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	}

	cands, err := Discover(d, []string{flagY, flagX})
	require.NoError(t, err)
	require.Equal(t, []found{
		{Path: baseA, Source: "base layer"},
		{Path: baseB, Source: "base layer"},
		{Path: user, Source: "user layer"},
		{Path: project, Source: "project layer", Skip: "not trusted; run 'panto ext trust " + project + "' to trust it"},
		{Path: flagY, Source: "--extension"},
		{Path: flagX, Source: "--extension"},
	}, foundOf(cands))
}

// No extensions/ folder anywhere is no extensions, and no error.
func TestDiscoverNone(t *testing.T) {
	t.Parallel()
	cands, err := Discover(testDirs(t), nil)
	require.NoError(t, err)
	require.Empty(t, cands)
}

// An --extension that is not an executable file is a usage error; so is
// one that is not there.
func TestDiscoverFlagNotExecutable(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	plain := filepath.Join(t.TempDir(), "plain")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
	for _, p := range []string{plain, filepath.Dir(plain), filepath.Join(filepath.Dir(plain), "missing")} {
		_, err := Discover(d, []string{p})
		require.ErrorIsf(t, err, ErrUsage, "--extension %s", p)
		require.ErrorContains(t, err, "--extension "+p+": not an executable file")
	}
}

// A project-layer binary runs once trusted (panto ext trust), with the
// checksum it was trusted with, which go-plugin checks again; once it
// changes it is skipped again until trusted again. The base and user
// layers' run without any trust.
func TestDiscoverTrust(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	user := writeExt(t, d, layers.User, "guard", 0o755)
	p1 := writeExt(t, d, layers.Project, "p1", 0o755)
	p2 := writeExt(t, d, layers.Project, "p2", 0o755)
	writeExt(t, d, layers.Project, "p3.txt", 0o644)

	cands, err := Discover(d, nil)
	require.NoError(t, err)
	require.Len(t, cands, 3)
	require.Empty(t, cands[0].Skip)
	require.Contains(t, cands[1].Skip, "not trusted")
	require.Contains(t, cands[2].Skip, "not trusted")

	// With no paths, every project-layer binary is trusted, by its sha256.
	var told []string
	require.NoError(t, TrustExtensions(d, nil, func(path string, sum []byte) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		want := sha256.Sum256(data)
		require.Equal(t, want[:], sum)
		told = append(told, path)
	}))
	require.Equal(t, []string{p1, p2}, told)
	require.FileExists(t, filepath.Join(d.Layer(layers.User), trust.ExtensionsFile), "the trust is kept in the user layer")

	cands, err = Discover(d, nil)
	require.NoError(t, err)
	require.Equal(t, []found{
		{Path: user, Source: "user layer"},
		{Path: p1, Source: "project layer", Checksum: true},
		{Path: p2, Source: "project layer", Checksum: true},
	}, foundOf(cands))
	data, err := os.ReadFile(p1)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	require.Equal(t, sum[:], cands[1].Spec.Checksum, "the checksum it was trusted with")

	// p1 changes: it no longer runs; p2 still does.
	require.NoError(t, os.WriteFile(p1, []byte("#!/bin/sh\necho changed\n"), 0o755))
	cands, err = Discover(d, nil)
	require.NoError(t, err)
	require.Equal(t, []found{
		{Path: user, Source: "user layer"},
		{Path: p1, Source: "project layer", Skip: "changed since it was trusted; check it, then run 'panto ext trust " + p1 + "'"},
		{Path: p2, Source: "project layer", Checksum: true},
	}, foundOf(cands))

	// Trusting p1 by its path trusts it as it is now.
	told = nil
	require.NoError(t, TrustExtensions(d, []string{p1}, func(path string, _ []byte) { told = append(told, path) }))
	require.Equal(t, []string{p1}, told)
	cands, err = Discover(d, nil)
	require.NoError(t, err)
	require.Empty(t, cands[1].Skip)
	data, err = os.ReadFile(p1)
	require.NoError(t, err)
	sum = sha256.Sum256(data)
	require.Equal(t, sum[:], cands[1].Spec.Checksum)
}

// panto ext trust refuses what is not an executable file, and says so
// when the project layer has no extensions to trust; nothing is kept.
func TestTrustExtensionsRefuses(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	err := TrustExtensions(d, nil, func(string, []byte) { t.Fatal("nothing to trust") })
	require.EqualError(t, err, "ext trust: no extensions in "+filepath.Join(d.Layer(layers.Project), "extensions"))

	plain := writeExt(t, d, layers.Project, "plain", 0o644)
	err = TrustExtensions(d, []string{plain}, func(string, []byte) { t.Fatal("not executable") })
	require.EqualError(t, err, "ext trust "+plain+": not an executable file")
	require.NoFileExists(t, filepath.Join(d.Layer(layers.User), trust.ExtensionsFile))
}
