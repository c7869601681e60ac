package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tempHelper is a helper process (see runHelper) editing big.txt in a
// new folder, stopped by the test hook; it returns the command, the file
// and the hook and state folders.
type tempHelper struct {
	cmd                *exec.Cmd
	file, hooks, state string
	out                *bufio.Reader
	next               int // the next of hookPoints it stops at
}

func startTempHelper(t *testing.T, what string, named bool) *tempHelper {
	t.Helper()
	oldContent, _ := interruptContent()
	h := &tempHelper{file: filepath.Join(t.TempDir(), "big.txt"), hooks: t.TempDir(), state: t.TempDir()}
	require.NoError(t, os.WriteFile(h.file, []byte(oldContent), 0o644))
	h.cmd = exec.Command(os.Args[0], "-test.run=^$", h.file)
	h.cmd.Env = append(os.Environ(), helperEnv+"="+what, "GORACE=atexit_sleep_ms=0",
		testHookEnv+"="+h.hooks, "XDG_STATE_HOME="+h.state)
	if named {
		h.cmd.Env = append(h.cmd.Env, testNoTmpfileEnv+"=1")
	}
	out, err := h.cmd.StdoutPipe()
	require.NoError(t, err)
	h.out = bufio.NewReader(out)
	h.cmd.Stderr = os.Stderr
	require.NoError(t, h.cmd.Start())
	t.Cleanup(func() { _ = h.cmd.Process.Kill(); _ = h.cmd.Wait() })
	return h
}

// hookPoints are the points of a write or edit, in order.
var hookPoints = []string{hookWrite, hookCommit, hookCommitted}

// runTo lets the helper run until it stops at point, passing the points
// before it.
func (h *tempHelper) runTo(t *testing.T, point string) {
	t.Helper()
	for _, p := range hookPoints[h.next:] {
		h.next++
		require.Eventually(t, func() bool {
			_, err := os.Stat(filepath.Join(h.hooks, p))
			return err == nil
		}, 20*time.Second, 5*time.Millisecond, "the helper reaches %s", p)
		if p == point {
			return
		}
		require.NoError(t, os.Remove(filepath.Join(h.hooks, p)))
	}
}

// temporaries lists the temporary files beside the edited file.
func (h *tempHelper) temporaries(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, n := range entries(t, filepath.Dir(h.file)) {
		if n != "big.txt" {
			out = append(out, n)
		}
	}
	return out
}

func (h *tempHelper) journals() string {
	return filepath.Join(stateDir(func(k string) string {
		if k == "XDG_STATE_HOME" {
			return h.state
		}
		return ""
	}), "tmp")
}

// A signal to the tools process at any point of an edit leaves the file
// old or new, never anything else, and no temporary file: SIGTERM and
// SIGHUP remove it before the process exits; after SIGKILL an unnamed
// one (O_TMPFILE) is gone with the process, and a named one (the
// fallback) is removed by the next tools process to start.
func TestSignalsLeaveNoTemporaryFile(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	t.Parallel()
	oldContent, newContent := interruptContent()
	for _, named := range []bool{false, true} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL} {
			for _, point := range hookPoints {
				t.Run(fmt.Sprintf("named=%v/%s/%s", named, sig, point), func(t *testing.T) {
					t.Parallel()
					h := startTempHelper(t, "edit", named)
					h.runTo(t, point)
					if named && point != hookCommitted {
						require.Len(t, h.temporaries(t), 1, "the fallback's temporary file has a name")
					} else {
						require.Empty(t, h.temporaries(t), "an unnamed temporary file has no name")
					}
					require.NoError(t, h.cmd.Process.Signal(sig))
					err := h.cmd.Wait()
					require.Error(t, err, "the signal ended the helper")
					if sig == syscall.SIGKILL {
						if named && point != hookCommitted {
							require.Len(t, h.temporaries(t), 1, "SIGKILL leaves the named file")
						}
						sweep(h.journals()) // the next start
					}
					require.Empty(t, h.temporaries(t))
					want := oldContent
					if point == hookCommitted {
						want = newContent
					}
					require.True(t, readString(t, h.file) == want, "the file is the %s one", map[bool]string{true: "new", false: "old"}[want == newContent])
					js, _ := os.ReadDir(h.journals())
					require.Empty(t, js, "no journal is left")
				})
			}
		}
	}
}

// The sweep at a start leaves alone what a running tools process writes:
// its journal is locked.
func TestSweepSparesARunningWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	t.Parallel()
	_, newContent := interruptContent()
	h := startTempHelper(t, "edit", true)
	h.runTo(t, hookCommit)
	sweep(h.journals())
	require.Len(t, h.temporaries(t), 1)
	require.NoError(t, os.Remove(filepath.Join(h.hooks, hookCommit)))
	h.runTo(t, hookCommitted)
	require.NoError(t, os.Remove(filepath.Join(h.hooks, hookCommitted)))
	line, _ := h.out.ReadString('\n')
	for line == "ready\n" {
		line, _ = h.out.ReadString('\n')
	}
	require.Equal(t, "done\n", line)
	require.NoError(t, h.cmd.Wait())
	require.Empty(t, h.temporaries(t))
	require.True(t, strings.HasPrefix(readString(t, h.file), "HEAD new") && readString(t, h.file) == newContent)
}

// A journal names the files sweep removes: only temporary files of ours,
// by absolute, clean path, whatever else it holds.
func FuzzJournalPaths(f *testing.F) {
	f.Add("/home/u/p/.big.txt.k3j2.tmp\n")
	f.Add("/p/.a.b.tmp\nrelative/.x.y.tmp\n/p/../etc/.x.y.tmp\n/p/x.tmp\n")
	f.Add("/p/.a.1.tmp")
	f.Fuzz(func(t *testing.T, journal string) {
		for _, p := range journalPaths(strings.NewReader(journal)) {
			b := filepath.Base(p)
			if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsAny(p, "\n\x00") ||
				!strings.HasPrefix(b, ".") || !strings.HasSuffix(b, ".tmp") || !strings.Contains(journal, p) {
				t.Fatalf("journalPaths(%q) gives %q", journal, p)
			}
		}
	})
}

// tempName names files as isTempName recognises them, for any base.
func TestTempNameIsRecognised(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"f", "big.txt", ".hidden", strings.Repeat("x", 300), "a b"} {
		require.True(t, isTempName(tempName("/p", base)), base)
	}
	for _, p := range []string{"/p/big.txt", "/p/.big.txt", "p/.a.b.tmp", "/p/../.a.b.tmp"} {
		require.False(t, isTempName(p), p)
	}
}
