package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// make build (and so make install) stamps the version into main.version,
// which panto version prints: git describe by default, VERSION=… to
// choose (it said dev after make install).
func TestMakeStampsTheVersion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	out, err := exec.Command("make", "-C", "../..", "-n", "install", "VERSION=v9.9.9-test").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var build string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "./cmd/...") {
			build = l
		}
	}
	require.Contains(t, build, "-X main.version=v9.9.9-test", "the build of panto: %s", out)
	require.Equal(t, "dev", version, "the variable stamped is this one")
}
