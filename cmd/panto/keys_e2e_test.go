//go:build unix

package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// keysProbeReport is what testdata/keyprobe prints.
type keysProbeReport struct {
	Ancestors []struct {
		PID                   int
		Comm                  string
		Environ, Cmdline, Mem string
	}
	Found       []string
	SelfEnviron string `json:"self_environ"`
}

// keysRunAs runs one turn whose bash call runs the probe, as uid (0:
// this process's user), and returns the probe's report and the request
// headers the provider got.
func keysRunAs(t *testing.T, uid int) (keysProbeReport, string) {
	t.Helper()
	// A folder every user can enter: t.TempDir's parents are 0700.
	root, err := os.MkdirTemp("", "panto-keys-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.Chmod(root, 0o755))
	bin := filepath.Join(root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	for _, name := range []string{"panto", "tools", "keyprobe"} {
		keysCopy(t, filepath.Join(pluginDir, name), filepath.Join(bin, name))
	}
	h := newHarnessAt(t, root)

	secret := "sk-ant-test-" + keysRandom(t)
	reversed := []byte(secret)
	slices.Reverse(reversed)
	fake := newFake(t,
		anthropicTools(toolCall{"p1", "bash", `{"command":"` + filepath.Join(bin, "keyprobe") + " " + string(reversed) + `"}`}),
		anthropicText("done"),
	)
	h.env["ANTHROPIC_API_KEY"] = secret
	h.env["OPENAI_API_KEY"] = secret + "-openai"
	if uid != 0 {
		require.NoError(t, filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, uid)
		}))
	}
	cmd := exec.Command(filepath.Join(bin, "panto"), "-p", "probe", "--no-session", "--provider", "anthropic",
		"--base-url", fake.srv.URL, "--extension", filepath.Join(bin, "tools"))
	cmd.Dir = h.project
	cmd.Env = h.environ()
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, 2, fake.count(), "%s", out)
	results := lastResults(t, fake.request(t, 1).body)
	require.Len(t, results, 1)
	text := results[0].text()
	var r keysProbeReport
	require.NoError(t, json.Unmarshal([]byte(text[:strings.LastIndexByte(text, '}')+1]), &r), text)
	return r, fake.request(t, 0).header.Get("X-Api-Key") + "|" + secret
}

func keysRandom(t *testing.T) string {
	b := make([]byte, 12)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// Issue 15, item 2: the model's bash, as the same user as panto, tries
// every route to the key — panto's and every other process's
// /proc/PID/environ, cmdline and memory — and finds it nowhere, while
// panto still sends it to the provider. Before, panto's environ held it.
func TestKeyUnreachableFromTheModelsBash(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the routes are Linux's /proc")
	}
	t.Parallel()
	uid := 0
	if os.Geteuid() == 0 {
		// root reads every process's memory; run panto as a user who
		// cannot, as a user's panto runs.
		uid = 65534
	}
	r, keys := keysRunAs(t, uid)
	sent, secret, _ := strings.Cut(keys, "|")
	require.Equal(t, secret, sent, "panto still has the key and sends it")
	require.Empty(t, r.Found, "the key was found: %+v", r)
	require.Equal(t, "clean", r.SelfEnviron, "bash's environment holds no key")
	var comms []string
	for _, a := range r.Ancestors {
		comms = append(comms, a.Comm)
		switch a.Comm {
		case "panto":
			require.NotEqual(t, "key", a.Environ)
			require.NotEqual(t, "key", a.Mem)
			require.True(t, strings.HasPrefix(a.Mem, "unreadable"), "panto is undumpable: its memory is out of reach: %q", a.Mem)
			require.True(t, strings.HasPrefix(a.Environ, "unreadable"), "and so is its environ: %q", a.Environ)
		default:
			// Readable and clean, or (from inside the sandbox, which
			// keeps bash from reading processes outside it) unreadable.
			require.True(t, a.Environ == "clean" || strings.HasPrefix(a.Environ, "unreadable"),
				"%s: the probe can read a process of its own user: %+v", a.Comm, r.Ancestors)
		}
	}
	require.Contains(t, comms, "panto", "the probe walked up to panto: %+v", r.Ancestors)
}

// As root, who can read any process's memory, the environment block is
// what must hold no key: it is what every tool that dumps environments
// reads.
func TestKeyNotInPantosEnvironmentBlockEvenForRoot(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root and Linux's /proc")
	}
	t.Parallel()
	r, _ := keysRunAs(t, 0)
	var seen bool
	for _, a := range r.Ancestors {
		require.NotEqual(t, "key", a.Environ, "%s(%d) environ", a.Comm, a.PID)
		require.NotEqual(t, "key", a.Cmdline, "%s(%d) cmdline", a.Comm, a.PID)
		if a.Comm == "panto" {
			seen = true
			require.Equal(t, "clean", a.Environ, "root reads it, and it holds no key")
		} else {
			require.NotEqual(t, "key", a.Mem, "%s(%d): only panto holds the key", a.Comm, a.PID)
		}
	}
	require.True(t, seen, "%+v", r.Ancestors)
}
