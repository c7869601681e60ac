// Package golden compares test output with golden files under testdata/
// and rewrites them when the tests run with -update, so a change to a wire
// format shows up as a reviewed diff. For tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with the golden file at path or, with -update,
// writes got there.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test -update and review the diff")
	require.Equal(t, string(want), string(got), "%s differs: if the change is intended, run go test -update and review the diff", path)
}
