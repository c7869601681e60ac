package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An extension run by hand under a debugger (PANTO_EXTENSION_DEBUG=1)
// prints how to attach to it; panto given PANTO_REATTACH_EXTENSIONS uses
// it instead of starting one, and the extension returns from Serve when
// panto's session ends.
func TestDebugReattach(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ext := exec.Command(filepath.Join(pluginDir, "hello"))
	ext.Env = append(h.environ(), "PANTO_EXTENSION_DEBUG=1")
	stderr, err := ext.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, ext.Start())
	t.Cleanup(func() { ext.Process.Kill(); ext.Wait() })

	attach := regexp.MustCompile(`PANTO_REATTACH_EXTENSIONS='([^']+)'`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := attach.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var value string
	select {
	case value = <-found:
	case <-time.After(10 * time.Second):
		t.Fatal("the extension printed no PANTO_REATTACH_EXTENSIONS")
	}
	require.Contains(t, value, `"hello":`)

	h.env["PANTO_REATTACH_EXTENSIONS"] = value
	r := h.ok("-p", "hi", "--provider", "echo", "--no-session")
	require.Contains(t, r.stdout, "Greetings from the hello extension.", "the attached extension's session_start ran")

	done := make(chan error, 1)
	go func() { done <- ext.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "Serve returned nil: the session ended")
	case <-time.After(5 * time.Second):
		t.Fatal("the debugged extension did not return after panto's session ended")
	}

	// Run by hand without the debug variable, it says what it is.
	out, err := exec.Command(filepath.Join(pluginDir, "hello")).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "this is a panto extension: panto starts it")

	h.env["PANTO_REATTACH_EXTENSIONS"] = "{not json"
	r = h.run("", "-p", "hi", "--provider", "echo", "--no-session")
	require.Equal(t, 2, r.code)
	require.True(t, strings.Contains(r.stderr, "PANTO_REATTACH_EXTENSIONS: not a JSON object"), r.stderr)
}
