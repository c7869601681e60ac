//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// What a clone puts where panto hashes files to trust them never stalls
// it (the fourth adversary pass's c12 and c38): an untrusted 64 GiB
// sparse "extension" is not read at all; a trusted one that became one
// is refused at once; a trusted settings file that became a FIFO or
// /dev/zero is "unreadable" to panto trust --list, at once.
func TestTrustNeverReadsWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	huge := filepath.Join(h.projectDir(), "extensions", "helper")
	require.NoError(t, os.MkdirAll(filepath.Dir(huge), 0o755))
	f, err := os.OpenFile(huge, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(64<<30))
	require.NoError(t, f.Close())
	r := runWithin(t, h, 30*time.Second, "", "-p", "hi", "--provider", "echo", "--no-session")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "skipping extension "+huge+": not trusted")

	// Trusted small, then grown huge.
	require.NoError(t, os.Truncate(huge, 0))
	require.NoError(t, os.WriteFile(huge, []byte("#!/bin/sh\nexit 1\n"), 0o755))
	h.ok("ext", "trust", huge)
	require.NoError(t, os.Truncate(huge, 64<<30))
	r = runWithin(t, h, 30*time.Second, "", "-p", "hi", "--provider", "echo", "--no-session")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "skipping extension "+huge+": cannot read it")
	require.Contains(t, r.stderr, "larger than the 1024 MiB panto hashes to trust a file")

	// A trusted settings file replaced by a FIFO, then by /dev/zero.
	cfg := filepath.Join(h.projectDir(), "config.toml")
	h.write(cfg, "model = \"m\"\n")
	h.ok("trust")
	require.NoError(t, os.Remove(cfg))
	require.NoError(t, syscall.Mkfifo(cfg, 0o644))
	r = runWithin(t, h, 30*time.Second, "", "trust", "--list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `unreadable\s+`+regexp.QuoteMeta(cfg), r.stdout)
	require.NoError(t, os.Remove(cfg))
	require.NoError(t, os.Symlink("/dev/zero", cfg))
	r = runWithin(t, h, 30*time.Second, "", "trust", "--list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `unreadable\s+`+regexp.QuoteMeta(cfg), r.stdout)
}
