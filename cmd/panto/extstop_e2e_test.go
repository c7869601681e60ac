//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runWithin runs panto like h.run but gives up after limit: it then kills
// panto and every process carrying mark, and fails the test.
func (h *harness) runWithin(limit time.Duration, mark string, args ...string) (result, time.Duration) {
	h.t.Helper()
	cmd := h.command("", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	require.NoError(h.t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		d := time.Since(t0)
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else {
			require.NoError(h.t, err)
		}
		return result{out.String(), errb.String(), code}, d
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		for _, pid := range marked(mark) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		<-done
		require.FailNowf(h.t, "panto did not exit", "panto %v: still running after %s\nstderr: %s", args, limit, errb.String())
		return result{}, 0
	}
}

// markedScript writes an executable shell script at path that carries
// mark in its environment (and its children's) and runs body.
func markedScript(t *testing.T, path, mark, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	text := "#!/bin/sh\nexport PANTO_TEST_MARK=" + mark + "\n" + body + "\n"
	require.NoError(t, os.WriteFile(path, []byte(text), 0o755))
}

// An extension whose child holds its stdout and stderr used to keep every
// panto command that starts extensions from exiting (go-plugin's Kill
// waits for the pipes' EOF), with the session lock held. Now each exits
// promptly, and the child, in the extension's process group, is killed
// with it.
func TestPantoExitsWhenAnExtensionsChildHoldsItsPipes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mark := newMark(t)
	ext := filepath.Join(h.userDir(), "extensions", "holder")
	markedScript(t, ext, mark, "sleep 600 &\nexec "+filepath.Join(pluginDir, "hello"))

	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"-p", "hi", "--provider", "echo"}, 0},
		{[]string{"ext", "list"}, 0},
		// ext check passes only an extension that leaves nothing running.
		{[]string{"ext", "check", ext}, 1},
		{[]string{"prompt"}, 0},
	} {
		r, d := h.runWithin(20*time.Second, mark, c.args...)
		t.Logf("panto %v exited in %s", c.args, d)
		require.Equal(t, c.code, r.code, "panto %v\nstdout: %s\nstderr: %s", c.args, r.stdout, r.stderr)
		require.Less(t, d, 8*time.Second, "panto %v", c.args)
		requireNoneMarked(t, mark)
		if c.code == 1 {
			require.Equal(t, "panto: ext check: extension hello: it exited after Shutdown; it left processes running in its process group, which panto killed\n", r.stderr)
		}
	}
	// The session lock was released: the next run resumes at once.
	r, _ := h.runWithin(20*time.Second, mark, "-p", "again", "--provider", "echo", "-c")
	require.Equal(t, 0, r.code, r.stderr)
}

// ext check says "ok: shut down cleanly" only when the extension exited
// by itself after Shutdown; one that had to be killed fails the check.
func TestExtCheckReportsAKill(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mark := newMark(t)
	// The shell leads the group and outlives the extension it runs.
	ext := filepath.Join(h.root, "lingers")
	markedScript(t, ext, mark, filepath.Join(pluginDir, "hello")+"\nsleep 600")
	r, d := h.runWithin(20*time.Second, mark, "ext", "check", ext)
	t.Logf("ext check took %s", d)
	require.Equal(t, 1, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "started hello")
	require.NotContains(t, r.stdout, "ok: shut down cleanly")
	require.Contains(t, r.stderr, "did not exit within")
	require.Contains(t, r.stderr, "killed")
	requireNoneMarked(t, mark)
}

// A start failure is printed once, as a panto: line that ends with the
// extension's own last words on stderr, not also as an hclog block.
func TestExtCheckStartFailurePrintedOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mark := newMark(t)
	ext := filepath.Join(h.root, "broken.py")
	markedScript(t, ext, mark, `echo 'Traceback (most recent call last):' >&2
echo "ModuleNotFoundError: No module named 'grpc'" >&2
exit 1`)
	r, _ := h.runWithin(20*time.Second, mark, "ext", "check", ext)
	require.Equal(t, 1, r.code)
	require.Equal(t, 1, strings.Count(r.stderr, "ModuleNotFoundError: No module named 'grpc'"), r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "did not start"), r.stderr)
	require.NotContains(t, r.stderr, "[ERROR]", r.stderr)
	require.NotContains(t, r.stderr, "[WARN]", r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "panto: ext check: "), r.stderr)
}
