package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// installProjectExt copies the sysprompt example into the project layer's
// extensions folder, as a git clone would bring it.
func installProjectExt(t *testing.T, h *harness) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pluginDir, "sysprompt"))
	require.NoError(t, err)
	dst := filepath.Join(h.projectDir(), "extensions", "sysprompt")
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, data, 0o755))
	return dst
}

func TestUntrustedProjectExtensionNeverRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := installProjectExt(t, h)
	r := h.run("", "-p", "/system-append X", "--provider", "echo")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "skipping extension "+bin+": not trusted; run 'panto ext trust "+bin+"'")
	require.Contains(t, r.stderr, "unknown command /system-append")

	r = h.ok("ext", "list")
	require.Contains(t, r.stdout, "no: not trusted")

	// Trusted, it runs.
	r = h.ok("ext", "trust")
	require.Contains(t, r.stdout, "trusted "+bin)
	info, err := os.Stat(filepath.Join(h.userDir(), "trusted-extensions.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	r = h.ok("-p", "/system-append X", "--provider", "echo")
	require.Equal(t, "appended\n", r.stdout)

	// Changed after it was trusted: skipped again until re-trusted.
	f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("tampered")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	r = h.run("", "-p", "/system-append Y", "--provider", "echo", "-c")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "changed since it was trusted")
}

func TestExtensionEditsRecordedAndListed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sp := filepath.Join(pluginDir, "sysprompt")
	h.ok("-p", "/system-append Be terse.", "--provider", "echo", "--extension", sp)
	log := h.sessionFiles()[0]
	require.Equal(t, "append:Be terse.", systemEntries(t, log)[1])

	// The next request carries it; an unchanged-config resume keeps it.
	r := h.ok("-p", "hi", "--provider", "echo", "-c", "--extension", sp)
	require.Contains(t, r.stdout, "2. Be terse.")
	require.Len(t, systemEntries(t, log), 2)

	// A replace, then the prompt before and after each edit.
	h.ok("-p", "/system-replace Only this.", "--provider", "echo", "-c", "--extension", sp)
	require.Equal(t, "replace:Only this.", systemEntries(t, log)[2])
	r = h.ok("prompt", "--session", log, "--at", "1")
	require.NotContains(t, r.stdout, "Be terse.")
	r = h.ok("prompt", "--session", log, "--at", "2")
	require.Contains(t, r.stdout, "Be terse.")
	r = h.ok("prompt", "--session", log)
	require.Equal(t, "--- block 1 · extension sysprompt ---\nOnly this.\n", r.stdout)

	// Extension commands show in the usage of a bad command, and ext check
	// runs one in isolation.
	r = h.ok("ext", "check", filepath.Join(pluginDir, "hello"))
	require.Contains(t, r.stdout, "ok: shut down cleanly")
	r = h.run("", "ext", "check", filepath.Join(h.root, "nope"))
	require.Equal(t, 1, r.code)
	r = h.run("", "ext", "check", "/bin/true")
	require.Equal(t, 1, r.code)
	require.True(t, strings.Contains(r.stderr, "plugin") || strings.Contains(r.stderr, "extension"), r.stderr)
}

// The Node.js example, speaking the protocol from the .proto with no Go
// at all, through the real panto.
func TestNodeExtensionEndToEnd(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("../../examples/plugins/node-hello")
	require.NoError(t, err)
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules"))
	if nodeErr != nil || modErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or examples/plugins/node-hello/node_modules missing in CI (run npm ci there): %v %v", nodeErr, modErr)
		}
		t.Skip("needs node and `npm ci` in examples/plugins/node-hello")
	}
	h := newHarness(t)
	bin := filepath.Join(dir, "node-hello")
	r := h.ok("-p", "hi", "--provider", "echo", "--extension", bin)
	require.Contains(t, r.stdout, "2. Hello from a Node.js extension (session ")
	log := h.sessionFiles()[0]
	entries := systemEntries(t, log)
	require.True(t, strings.HasPrefix(entries[len(entries)-1], "append:Hello from a Node.js extension"), entries)

	r = h.ok("-p", "/node-note remember the milk", "--provider", "echo", "-c", "--extension", bin)
	require.Equal(t, "noted\n", r.stdout)
	require.Equal(t, "append:remember the milk", systemEntries(t, log)[len(systemEntries(t, log))-1])
	require.Empty(t, strings.TrimSpace(r.stderr), "no stray go-plugin lines on the user's terminal")
}

// disabled_extensions: an extension whose file name is listed never
// starts; one listed by the name it gives in Init (its file renamed) is
// stopped before any event or command reaches it.
func TestDisabledExtensions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.userDir(), "config.toml"), "disabled_extensions = [\"sysprompt\"]\n")
	sp := filepath.Join(pluginDir, "sysprompt")

	r := h.run("", "-p", "/system-append X", "--provider", "echo", "--no-session", "--extension", sp)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "unknown command /system-append")
	logData, err := os.ReadFile(filepath.Join(h.home, "state", "panto", "panto.log"))
	require.NoError(t, err)
	require.NotContains(t, string(logData), "extension started", "a disabled extension was started")

	renamed := filepath.Join(h.root, "renamed")
	data, err := os.ReadFile(sp)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(renamed, data, 0o755))
	r = h.run("", "-p", "/system-append X", "--provider", "echo", "--no-session", "--extension", renamed)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "unknown command /system-append")

	// Not on the list, the same binary runs.
	h.write(filepath.Join(h.userDir(), "config.toml"), "disabled_extensions = [\"other\"]\n")
	r = h.ok("-p", "/system-append X", "--provider", "echo", "--no-session", "--extension", renamed)
	require.Equal(t, "appended\n", r.stdout)
}
