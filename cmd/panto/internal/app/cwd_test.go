package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// Relative paths on the command line are the app's working directory's
// (layers.Dirs.CWD), never the process's: an embedder that runs sessions
// for several directories (the ACP mode to come) does not chdir. The test
// process runs in this package's folder, the sessions' directory is
// another.
func TestRelativePathsAreInTheAppsDirectory(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NotEqual(t, wd, d.CWD)

	path, _, err := NewStore(d, nil).Pick(Pick{Session: "mine.jsonl"}, time.Now())
	require.NoError(t, err)
	require.Equal(t, filepath.Join(d.CWD, "mine.jsonl"), path, "--session")

	bin := filepath.Join(d.CWD, "bin", "ext")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	cands, err := Discover(d, []string{"bin/ext"})
	require.NoError(t, err)
	require.Len(t, cands, 1)
	require.Equal(t, bin, cands[0].Spec.Path, "--extension")

	proj := writeExt(t, d, layers.Project, "p", 0o755)
	rel, err := filepath.Rel(d.CWD, proj)
	require.NoError(t, err)
	var trusted []string
	require.NoError(t, TrustExtensions(d, []string{rel}, func(p string, _ []byte) { trusted = append(trusted, p) }))
	require.Equal(t, []string{proj}, trusted, "panto ext trust PATH")
}
