package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Issue 20 item 2: a dead extension is restarted once; dead again, it is
// stopped, and a fail-closed watcher's result says what to do; /reload
// starts everything again and reads the prompt files.

// childrenRunning returns the pids of the processes whose parent is
// parent and whose executable is exe.
func childrenRunning(t *testing.T, parent int, exe string) []int {
	t.Helper()
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so after ")".
		i := strings.LastIndexByte(string(stat), ')')
		fields := strings.Fields(string(stat)[i+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
			continue
		}
		if link, err := os.Readlink(filepath.Join(d, "exe")); err != nil || link != exe {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		out = append(out, pid)
	}
	return out
}

// onePID waits for exactly one such process other than those in not,
// and returns it.
func onePID(t *testing.T, parent int, exe string, not ...int) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		pids := slices.DeleteFunc(childrenRunning(t, parent, exe), func(p int) bool { return slices.Contains(not, p) })
		if len(pids) == 1 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("want one %s under pid %d (not %v), have %v", exe, parent, not, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFile waits for path to exist.
func waitFile(t *testing.T, path string, out func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not made; the output:\n%s", path, out())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The real guard killed mid-session is restarted: the next bash call is
// checked and runs. Killed again, it is stopped: the call is blocked with
// a result that says what to do (no transport error), and /extensions
// disable guard lets the next call run.
func TestGuardKilledIsRestartedOnceThenStopped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	guard := filepath.Join(pluginDir, "guard")
	p := h.lineTermStart(append([]string{"--plain"}, guardArgs(h)...)...)
	p.waitFor(t, "> ")
	bash := func(file string) {
		p.typeIn(t, `tool:bash {"command":"touch `+file+`"}`+"\r")
	}
	bash("one")
	waitFile(t, filepath.Join(h.project, "one"), p.out.String)
	pantoPID := p.cmd.Process.Pid
	first := onePID(t, pantoPID, guard)

	killPid(t, first)
	p.waitFor(t, "the guard extension stopped (signal: killed); restarted it")
	bash("two")
	waitFile(t, filepath.Join(h.project, "two"), p.out.String)
	second := onePID(t, pantoPID, guard, first)

	killPid(t, second)
	p.waitFor(t, "the guard extension stopped again (signal: killed)")
	bash("three")
	p.waitFor(t, "✗ bash: blocked: the guard extension checks tool calls and is stopped for this session")
	require.NoFileExists(t, filepath.Join(h.project, "three"), "a call nobody checked did not run")
	res := lastResult(t, h)
	for _, want := range []string{
		"blocked: the guard extension checks tool calls and is stopped for this session (it crashed or exited (signal: killed))",
		"/extensions to see the extensions",
		"/reload to start them again",
		"/extensions disable guard to go on without it for this session",
	} {
		require.Contains(t, res, want)
	}
	require.NotContains(t, res, "transport:")
	require.NotContains(t, p.out.String(), "transport:")
	require.Equal(t, 1, strings.Count(p.out.String(), "restarted it"), "restarted once only")

	p.typeIn(t, "/extensions\r")
	p.waitFor(t, "guard: stopped — it crashed or exited (signal: killed); stopped for this session; checks tool calls, so no tool call runs until it is back")
	p.typeIn(t, "/extensions disable guard\r")
	p.waitFor(t, "disabled guard for this session")
	bash("four")
	waitFile(t, filepath.Join(h.project, "four"), p.out.String)
	var disabled map[string]any
	for _, e := range entriesOfType(t, h.sessionFiles()[0], "tools") {
		if e["extension"] == "guard" {
			disabled = e
		}
	}
	require.NotNil(t, disabled, "the disable is recorded")
	require.Equal(t, "disabled for this session by /extensions disable", disabled["reason"], fmt.Sprint(disabled))
	p.typeIn(t, "/quit\r")
	require.Equal(t, 0, p.wait(t), p.out.String())
	require.Empty(t, childrenRunning(t, pantoPID, guard))
}

// /reload picks up an edited prompt file: the change is recorded as a
// resume's reconciliation records it (replace + appends), the notice says
// what changed, and every extension runs in a new process.
func TestReloadReadsPromptFilesAndRestartsExtensions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	guard := filepath.Join(pluginDir, "guard")
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "project rule v1\n")
	p := h.lineTermStart(append([]string{"--plain"}, guardArgs(h)...)...)
	p.waitFor(t, "> ")
	p.typeIn(t, "hello\r")
	p.waitCount(t, "> ", 2)
	pantoPID := p.cmd.Process.Pid
	before := onePID(t, pantoPID, guard)
	log := h.sessionFiles()[0]
	entries := systemEntries(t, log)
	require.Contains(t, entries, "append:project rule v1\n")

	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "project rule v2\n")
	p.typeIn(t, "/reload\r")
	p.waitFor(t, "reloaded: restarted the extensions (")
	p.waitFor(t, "the system prompt changed: ")
	out := p.out.String()
	require.Contains(t, out, "the system prompt changed: project "+filepath.Join(h.projectDir(), "APPEND_SYSTEM.md")+" changed")
	require.Contains(t, out, "(re-recorded from the config files, as a resume records it)")
	after := onePID(t, pantoPID, guard, before)
	require.NotEqual(t, before, after)

	got := systemEntries(t, log)
	require.Greater(t, len(got), len(entries))
	added := got[len(entries):]
	require.True(t, strings.HasPrefix(added[0], "replace:"), "the reconciliation starts with a replace: %v", added)
	require.Contains(t, added, "append:project rule v2\n")
	lifecycle := entriesOfType(t, log, "lifecycle")
	require.Equal(t, "resumed", lifecycle[len(lifecycle)-1]["event"], fmt.Sprint(lifecycle[len(lifecycle)-1]))
	require.Equal(t, true, lifecycle[len(lifecycle)-1]["reseeded"])

	// The next turn runs on under the new prompt, in the same log.
	p.typeIn(t, `tool:bash {"command":"touch after-reload"}`+"\r")
	waitFile(t, filepath.Join(h.project, "after-reload"), p.out.String)
	require.Len(t, h.sessionFiles(), 1, "the same session")
	p.typeIn(t, "/reload\r")
	p.waitCount(t, "reloaded: ", 2)
	p.waitFor(t, "the system prompt is unchanged")
	p.typeIn(t, "/quit\r")
	require.Equal(t, 0, p.wait(t), p.out.String())
}

// The full-screen UI has /reload and /extensions: the reload reads the
// edited prompt file (recorded) and restarts the guard; /extensions
// lists it running.
func TestUIReloadAndExtensions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "project rule v1\n")
	u := h.tmuxPanto(140, 40, nil, guardArgs(h)...)
	u.ready("echo/echo")
	u.typ("hello")
	u.keys("Enter")
	u.wait(`you said "hello"`)
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "project rule v2\n")
	u.typ("/reload")
	u.keys("Enter")
	u.wait("reloaded: restarted the extensions (tools, guard)")
	u.typ("/extensions")
	u.keys("Enter")
	u.wait("guard: running; checks tool calls")
	require.Contains(t, systemEntries(t, h.sessionFiles()[0]), "append:project rule v2\n")
	require.Equal(t, 0, u.quit())
}

// In an editor (ACP), /reload reads the edited prompt file and restarts
// the extensions; the session goes on under the same id, its events
// still reaching the client; /extensions lists them.
func TestACPReloadAndExtensions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "project rule v1\n")
	c := h.acpStart(guardArgs(h)...)
	c.initialize(map[string]any{})
	id := c.newSession(h.project, nil)
	resp, updates := c.prompt(id, "hello")
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	require.Contains(t, textOf(updates, "agent_message_chunk"), "hello")

	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "project rule v2\n")
	resp, updates = c.prompt(id, "/reload")
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	text := textOf(updates, "agent_message_chunk")
	require.Contains(t, text, "reloaded: restarted the extensions (tools, guard)")
	require.Contains(t, text, "the system prompt changed: project "+filepath.Join(h.projectDir(), "APPEND_SYSTEM.md")+" changed")
	require.Contains(t, systemEntries(t, h.sessionFiles()[0]), "append:project rule v2\n")

	resp, updates = c.prompt(id, "/extensions")
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	require.Contains(t, textOf(updates, "agent_message_chunk"), "guard: running; checks tool calls")

	resp, updates = c.prompt(id, "hello again")
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	require.Contains(t, textOf(updates, "agent_message_chunk"), "hello again", "the reloaded session's events reach the client")
	require.Len(t, h.sessionFiles(), 1)
	require.Equal(t, 0, c.close(), c.stderr.String())
}

// killPid kills process pid at once (SIGKILL where there are signals).
func killPid(t *testing.T, pid int) {
	t.Helper()
	p, err := os.FindProcess(pid)
	require.NoError(t, err)
	require.NoError(t, p.Kill())
}
