//go:build unix

package extension

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// markerVar is set, with a value of the test's own, in the environment of
// the extensions a test starts (and so of their children): a process left
// behind is found by it, never by name.
const markerVar = "PANTO_TEST_MARKER"

// newMarker returns a fresh marker value; whatever still carries it when
// the test ends is killed.
func newMarker(t testing.TB) string {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	m := hex.EncodeToString(b)
	t.Cleanup(func() {
		for _, pid := range markedPids(m) {
			_ = syscall.Kill(pid, syscall.SIGCONT)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return m
}

// markedPids returns the live processes whose environment holds the
// marker (a zombie's environment reads empty).
func markedPids(marker string) []int {
	want := []byte(markerVar + "=" + marker)
	dirs, _ := os.ReadDir("/proc")
	var out []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// requireNoneLeft waits briefly for every marked process to be gone.
func requireNoneLeft(t testing.TB, marker string) {
	t.Helper()
	waitFor(t, 2*time.Second, "no process of the extension is left", func() bool { return len(markedPids(marker)) == 0 })
}

// script writes an executable shell script named file that exports the
// marker and then runs body.
func script(t testing.TB, marker, file, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), file)
	text := "#!/bin/sh\nexport " + markerVar + "=" + marker + "\n" + body + "\n"
	require.NoError(t, os.WriteFile(p, []byte(text), 0o755))
	return p
}

// stopplugAs links the stopplug binary under name (its behaviour and its
// extension name) and returns the link.
func stopplugAs(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Symlink(pluginPath("stopplug"), p))
	return p
}

// bounded runs f and returns how long it took. If f takes longer than
// limit the test fails at once without waiting for it (the marker cleanup
// then kills what f waits on).
func bounded(t testing.TB, limit time.Duration, what string, f func()) time.Duration {
	t.Helper()
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return time.Since(t0)
	case <-time.After(limit):
		require.FailNowf(t, "too slow", "%s took longer than %s", what, limit)
		return 0
	}
}

// startOne starts one extension with the test options and tweak; it
// requires it to start.
func startOne(t testing.TB, tweak func(*Options), spec Spec) *harness {
	t.Helper()
	h := &harness{rec: newRecorder(), errs: &syncBuffer{}, log: &syncBuffer{}}
	opts := testOptions(h.errs, h.log)
	if tweak != nil {
		tweak(&opts)
	}
	h.m = Start(context.Background(), []Spec{spec}, h.rec, opts)
	require.Len(t, h.m.Extensions(), 1, h.errs.String())
	return h
}

// Every stop has a deadline: an extension that ignores Shutdown, one
// frozen by SIGSTOP, one whose child holds its stdout and stderr, one
// whose child left its process group with the pipes, and one that serves
// no GRPCController and never exits are all gone within the bound, and
// nothing of theirs is left running.
func TestStopIsBounded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		freeze     bool // SIGSTOP the extension before Close
		escapes    bool // a process outside the group survives (killed by the cleanup)
		want       Stop // Kind and Leftovers
	}{
		{name: "ignores shutdown", body: "exec " + pluginPath("stubborn"), want: Stop{Kind: StopTimeout}},
		{name: "frozen", body: "exec " + pluginPath("calm"), freeze: true, want: Stop{Kind: StopTimeout}},
		{name: "child holds the pipes", body: "sleep 600 &\nexec " + pluginPath("calm"), want: Stop{Kind: StopGraceful, Leftovers: true}},
		{name: "child in its own session holds the pipes", body: "setsid sleep 600 &\nexec " + pluginPath("calm"), escapes: true, want: Stop{Kind: StopGraceful, PipesHeld: true}},
		{name: "no controller, never exits", body: "exec " + pluginPath("bare"), want: Stop{Kind: StopTimeout}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			marker := newMarker(t)
			h := startOne(t, nil, Spec{Path: script(t, marker, "ext", c.body), Source: "test"})
			if c.freeze {
				pids := markedPids(marker)
				require.NotEmpty(t, pids)
				for _, pid := range pids {
					require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
				}
			}
			d := bounded(t, 3*time.Second, "Close", func() { h.m.Close(context.Background()) })
			t.Logf("stopped in %s", d)
			if !c.escapes {
				requireNoneLeft(t, marker)
			}
			st, ok := h.m.Extensions()[0].Stopped()
			require.True(t, ok)
			require.Equal(t, c.want.Kind, st.Kind, st.String())
			require.Equal(t, c.want.Leftovers, st.Leftovers, st.String())
			require.Equal(t, c.want.PipesHeld, st.PipesHeld, st.String())
			require.False(t, st.Clean())
		})
	}
}

// A healthy extension exits by itself after Shutdown, in milliseconds.
func TestHealthyStopIsClean(t *testing.T) {
	t.Parallel()
	marker := newMarker(t)
	h := startOne(t, nil, Spec{Path: script(t, marker, "ext", "exec "+pluginPath("calm")), Source: "test"})
	bounded(t, 3*time.Second, "Close", func() { h.m.Close(context.Background()) })
	st, ok := h.m.Extensions()[0].Stopped()
	require.True(t, ok)
	require.True(t, st.Clean(), st.String())
	require.Equal(t, "it exited after Shutdown", st.String())
	require.Less(t, st.Took, time.Second)
	requireNoneLeft(t, marker)
}

// A disabled extension is killed without being asked; one that crashed
// is found already gone.
func TestStopOfAFailedExtension(t *testing.T) {
	t.Parallel()
	h := startHarness(t, func(o *Options) { o.HookTimeout = 300 * time.Millisecond }, specs("hang", "exit")...)
	require.Equal(t, []string{"hang", "exit"}, h.m.Names(), h.errs.String())
	h.sessionStart()
	for name, want := range map[string]StopKind{"hang": StopKilled, "exit": StopExited} {
		e := h.ext(t, name)
		require.Error(t, e.Disabled())
		waitFor(t, 3*time.Second, name+" is stopped", func() bool { _, ok := e.Stopped(); return ok })
		st, _ := e.Stopped()
		require.Equal(t, want, st.Kind, name+": "+st.String())
		require.Less(t, st.Took, time.Second, name)
	}
}

// Stopping many at once takes no longer than stopping the slowest.
func TestCloseStopsAllConcurrently(t *testing.T) {
	t.Parallel()
	marker := newMarker(t)
	var sp []Spec
	for i := range 6 {
		body := "exec " + stopplugAs(t, fmt.Sprintf("stubborn-%d", i))
		if i%2 == 1 {
			body = "sleep 600 &\nexec " + stopplugAs(t, fmt.Sprintf("calm-%d", i))
		}
		sp = append(sp, Spec{Path: script(t, marker, fmt.Sprintf("ext%d", i), body), Source: "test"})
	}
	errs, log := &syncBuffer{}, &syncBuffer{}
	m := Start(context.Background(), sp, newRecorder(), testOptions(errs, log))
	require.Len(t, m.Extensions(), 6, errs.String())
	d := bounded(t, 3*time.Second, "Close of six", func() { m.Close(context.Background()) })
	t.Logf("six stopped in %s", d)
	requireNoneLeft(t, marker)
}

// The start timeout is wall time from exec, over the handshake, Init and
// the broker dial together; on expiry the whole group is killed and the
// message says which step it did not finish.
func TestStartTimeoutIsWallTime(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	cases := []struct {
		name, body, want string
	}{
		{"no handshake, child holds the pipes", "sleep 600 &\nexec sleep 600", "did not complete the go-plugin handshake within 2s"},
		{"late handshake, then no Init answer", "export PANTO_TEST_DELAY=1500ms\nexec " + pluginPath("late-initsleep"), "did not answer Init within 2s"},
		{"hangs in Init", "exec " + pluginPath("initsleep"), "did not answer Init within 2s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			marker := newMarker(t)
			errs, log := &syncBuffer{}, &syncBuffer{}
			opts := testOptions(errs, log)
			opts.StartTimeout = timeout
			var m *Manager
			d := bounded(t, timeout+time.Second, "Start", func() {
				m = Start(context.Background(), []Spec{{Path: script(t, marker, "ext", c.body), Source: "test"}}, newRecorder(), opts)
			})
			t.Logf("gave up after %s", d)
			require.Empty(t, m.Extensions())
			require.Contains(t, errs.String(), c.want)
			require.Equal(t, 1, strings.Count(errs.String(), "panto: "), errs.String())
			requireNoneLeft(t, marker)
		})
	}
}

// A line of any length on the real stdout or stderr never blocks the
// extension; what is logged of it is cut.
func TestLongOutputLinesDoNotBlock(t *testing.T) {
	t.Parallel()
	h := startHarness(t, func(o *Options) { o.HookTimeout = 5 * time.Second }, specs("bigout")...)
	require.Equal(t, []string{"bigout"}, h.m.Names(), h.errs.String())
	h.sessionStart()
	require.NoError(t, h.ext(t, "bigout").Disabled())
	require.Equal(t, []edit{{"bigout", appendMode, "after big output"}}, h.rec.Edits())
	waitFor(t, 5*time.Second, "both lines reach the log, cut", func() bool {
		l := h.log.String()
		return strings.Contains(l, "BIGOUT xxx") && strings.Contains(l, "BIGERR xxx")
	})
	require.Less(t, len(h.log.String()), 256<<10, "the log holds the lines cut, not whole")
	require.Empty(t, h.errs.String())
}

// An extension refused at start is killed at once: no graceful wait on a
// GRPCController it may not serve (an extension in another language).
func TestRefusedExtensionStopsAtOnce(t *testing.T) {
	t.Parallel()
	errs, log := &syncBuffer{}, &syncBuffer{}
	var m *Manager
	d := bounded(t, 10*time.Second, "Start", func() {
		m = Start(context.Background(), specs("bare-badtool"), newRecorder(), testOptions(errs, log))
	})
	t.Logf("refused in %s", d)
	require.Empty(t, m.Extensions())
	require.Contains(t, errs.String(), `tool "bad name"`)
	require.Less(t, d, time.Second)
	require.Contains(t, log.String(), `how="panto killed its process group"`, "killed, not asked to shut down")
	require.NotContains(t, log.String(), "plugin failed to exit gracefully", "go-plugin's graceful wait was not entered")
}

// A start failure shows the end of the extension's stderr, plain text
// included: a Python ModuleNotFoundError, a Node "Cannot find module", a
// Go extension's message before it exits in Init.
func TestStartFailureShowsStderrTail(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&many, "echo 'noise line %d' >&2\n", i)
	}
	cases := []struct {
		name, body string
		want       []string
		notWant    []string
	}{
		{"python", many.String() + `echo 'Traceback (most recent call last):' >&2
echo '  File "ext.py", line 3, in <module>' >&2
echo "ModuleNotFoundError: No module named 'grpc'" >&2
exit 1`, []string{"ModuleNotFoundError: No module named 'grpc'", "noise line 30", "exit status 1"}, []string{"noise line 1\n", "noise line 5\n"}},
		{"node", `echo "Error: Cannot find module '@grpc/grpc-js'" >&2
exit 1`, []string{"Error: Cannot find module '@grpc/grpc-js'"}, nil},
		{"exits in Init", "exec " + pluginPath("initcrash"), []string{"initcrash: cannot open /nonexistent/config.toml"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			marker := newMarker(t)
			errs, log := &syncBuffer{}, &syncBuffer{}
			m := Start(context.Background(), []Spec{{Path: script(t, marker, "ext", c.body), Source: "test"}}, newRecorder(), testOptions(errs, log))
			require.Empty(t, m.Extensions())
			msg := errs.String()
			for _, w := range c.want {
				require.Contains(t, msg, w)
			}
			for _, w := range c.notWant {
				require.NotContains(t, msg, w)
			}
		})
	}
}

// Spec.Environ, when set, is the extension's whole environment, plus
// go-plugin's variables; nil passes panto's own.
func TestEnviron(t *testing.T) {
	t.Parallel()
	environ := func(t *testing.T, env []string) map[string]string {
		h := startHarness(t, nil, Spec{Path: pluginPath("env"), Source: "test", Environ: env})
		require.Equal(t, []string{"env"}, h.m.Names(), h.errs.String())
		h.sessionStart()
		edits := h.rec.Edits()
		require.Len(t, edits, 1)
		var kvs []string
		require.NoError(t, json.Unmarshal([]byte(edits[0].Text), &kvs))
		out := map[string]string{}
		for _, kv := range kvs {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = v
		}
		return out
	}
	host := os.Environ()
	require.NotEmpty(t, host)

	t.Run("given", func(t *testing.T) {
		t.Parallel()
		got := environ(t, []string{"PANTO_TEST_KEEP=kept"})
		require.Equal(t, "kept", got["PANTO_TEST_KEEP"])
		require.Equal(t, "extension-v1", got["PANTO_PLUGIN"], "go-plugin's magic cookie is added")
		require.Contains(t, got, "PLUGIN_PROTOCOL_VERSIONS")
		for _, kv := range host {
			k, _, _ := strings.Cut(kv, "=")
			require.NotContains(t, got, k, "a variable of panto's own that Environ leaves out")
		}
	})
	t.Run("nil", func(t *testing.T) {
		t.Parallel()
		got := environ(t, nil)
		for _, kv := range host {
			k, v, _ := strings.Cut(kv, "=")
			require.Equal(t, v, got[k], k)
		}
		require.Equal(t, "extension-v1", got["PANTO_PLUGIN"])
	})
}
