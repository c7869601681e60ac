//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Tool calls under stress (issue 15 items 6, 8, 10): a required guard
// that does not start, writes and edits interrupted at every point,
// signals to the tools process, results too large to carry, a NUL in a
// command, and SSE lines as large as a tool input. The real panto, the
// real tools extension and test extensions, the echo provider or a fake
// Anthropic server.

// tcInstall copies the test extension name into the harness's user layer,
// as a user installs a safeguard.
func tcInstall(t *testing.T, h *harness, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pluginDir, name))
	require.NoError(t, err)
	dst := filepath.Join(h.userDir(), "extensions", name)
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, data, 0o755))
	return dst
}

// Item 6: a guard installed in the user layer that is slow to start (it
// misses extension_start_timeout) blocks bash instead of letting it run
// unguarded; the result says which extension, why and how to go on, and
// the user is told at the start. The same guard given with --extension
// is not a required safeguard: bash runs without it, as before.
func TestToolCallsSlowRequiredGuardBlocksBash(t *testing.T) {
	t.Parallel()
	t.Run("user layer", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		guard := tcInstall(t, h, "slowguard")
		h.write(filepath.Join(h.userDir(), "config.toml"), "extension_start_timeout = \"1s\"\n")
		r := h.run("", echoTools(h, "-p", `tool:bash {"command":"touch ran"}`)...)
		require.Equal(t, 0, r.code, r.stderr)
		require.NoFileExists(t, filepath.Join(h.project, "ran"), "bash did not run")
		res := toolResults(t, h.sessionFiles()[0])
		require.Len(t, res, 1)
		require.True(t, res[0]["is_error"].(bool))
		text := res[0]["text"].(string)
		for _, want := range []string{
			"blocked: the extension slowguard (" + guard + ", installed in the user layer) is a required safeguard and is not running",
			"it did not start (it did not complete the go-plugin handshake within 1s)",
			"restart panto",
			`add "slowguard" to disabled_extensions`,
		} {
			require.Contains(t, text, want)
		}
		require.Contains(t, r.stderr, "it is required (installed in the user layer), so panto blocks every tool call until it runs")

		// Disabled on purpose, it is not missing: bash runs.
		h.write(filepath.Join(h.userDir(), "config.toml"), "extension_start_timeout = \"1s\"\ndisabled_extensions = [\"slowguard\"]\n")
		r = h.run("", echoTools(h, "-p", `tool:bash {"command":"touch ran"}`)...)
		require.Equal(t, 0, r.code, r.stderr)
		require.FileExists(t, filepath.Join(h.project, "ran"))
	})
	t.Run("flag", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.write(filepath.Join(h.userDir(), "config.toml"), "extension_start_timeout = \"1s\"\n")
		r := h.run("", echoTools(h, "--extension", filepath.Join(pluginDir, "slowguard"), "-p", `tool:bash {"command":"touch ran"}`)...)
		require.Equal(t, 0, r.code, r.stderr)
		require.FileExists(t, filepath.Join(h.project, "ran"))
	})
}

// Item 6: a tool_call watcher stopped after a failure keeps blocking,
// and from then on the result says it is stopped and how to go on.
func TestToolCallsDisabledWatcherSaysHowToGoOn(t *testing.T) {
	t.Parallel()
	h, _, args := toolHarness(t,
		anthropicTools(toolCall{"t1", "bash", `{"command":"touch v1 # blocker:crash"}`}),
		anthropicTools(toolCall{"t2", "bash", `{"command":"touch v2"}`}),
		anthropicText("done"))
	r := h.run("", append(args, "--extension", filepath.Join(pluginDir, "blocker"), "-p", "go")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoFileExists(t, filepath.Join(h.project, "v1"))
	require.NoFileExists(t, filepath.Join(h.project, "v2"))
	res := toolResults(t, h.sessionFiles()[0])
	require.Len(t, res, 2)
	for _, r := range res {
		// It crashed on the first call, was restarted, crashed again on
		// it: stopped, it blocks both.
		require.Contains(t, r["text"], "blocked: the blocker extension checks tool calls and is stopped for this session (it crashed or exited (exit status 3))")
		require.Contains(t, r["text"], "/reload to start them again")
		require.Contains(t, r["text"], "/extensions disable blocker to go on without it for this session")
		require.NotContains(t, r["text"], "transport")
	}
}

// tcEdit is one interrupted write or edit of a large file: panto in print
// mode, the tools extension stopped by its test hook
// (PANTO_TOOLS_TEST_HOOK) at a chosen point.
type tcEdit struct {
	h        *harness
	file     string
	hooks    string
	old, new string
	cmd      *exec.Cmd
	stderr   *syncBuffer
	next     int
}

// tcPoints are the tools extension's hook points, in order (see
// extensions/tools/testhook.go).
var tcPoints = []string{"write", "commit", "committed"}

// tcBig is the content of the large file: size bytes in lines, its first
// line head.
func tcBig(head string, size int) string {
	line := strings.Repeat("0123456789abcdef", 4) + "\n"
	return head + "\n" + strings.Repeat(line, size/len(line))
}

// tcStartEdit starts panto on a write or edit of a file of size bytes;
// with hooks, the tools extension stops at each of tcPoints.
func tcStartEdit(t *testing.T, tool string, size int, hooks bool, env ...string) *tcEdit {
	t.Helper()
	h := newHarness(t)
	e := &tcEdit{h: h, file: filepath.Join(h.project, "big.txt"), hooks: t.TempDir(), stderr: &syncBuffer{}}
	e.old, e.new = tcBig("HEAD old", size), tcBig("HEAD new", size)
	require.NoError(t, os.WriteFile(e.file, []byte(e.old), 0o644))
	var in []byte
	if tool == "edit" {
		in, _ = json.Marshal(map[string]any{"path": "big.txt", "edits": []map[string]string{{"old_text": "HEAD old", "new_text": "HEAD new"}}})
	} else {
		in, _ = json.Marshal(map[string]any{"path": "big.txt", "content": e.new})
	}
	if hooks {
		h.env["PANTO_TOOLS_TEST_HOOK"] = e.hooks
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		h.env[k] = v
	}
	// The model's call comes from a fake Anthropic server: a write's 20
	// MB content would not fit on a command line for the echo provider.
	fake := newFake(t, anthropicTools(toolCall{"t1", tool, string(in)}), anthropicText("done"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	e.cmd = h.command("", "-p", "go", "--provider", "anthropic", "--base-url", fake.srv.URL, "--extension", filepath.Join(pluginDir, "tools"))
	e.cmd.Stderr = e.stderr
	require.NoError(t, e.cmd.Start())
	t.Cleanup(func() { _ = e.cmd.Process.Kill(); _ = e.cmd.Wait() })
	return e
}

// runTo lets the call run on until the tools extension stops at point;
// it returns the tools process's pid.
func (e *tcEdit) runTo(t *testing.T, point string) int {
	t.Helper()
	for _, p := range tcPoints[e.next:] {
		e.next++
		var pid []byte
		require.Eventually(t, func() bool {
			var err error
			pid, err = os.ReadFile(filepath.Join(e.hooks, p))
			return err == nil && len(pid) > 0
		}, 30*time.Second, 5*time.Millisecond, "the tools extension reaches %s; stderr: %s", p, e.stderr)
		if p == point {
			n, err := strconv.Atoi(string(pid))
			require.NoError(t, err)
			return n
		}
		require.NoError(t, os.Remove(filepath.Join(e.hooks, p)))
	}
	t.Fatalf("no point %s", point)
	return 0
}

// release lets the call go on from point once the tools extension has
// seen its call cancelled.
func (e *tcEdit) releaseCancelled(t *testing.T, point string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(e.hooks, point+".cancelled"))
		return err == nil
	}, 10*time.Second, 5*time.Millisecond, "the call is cancelled in the tools extension; stderr: %s", e.stderr)
	require.NoError(t, os.Remove(filepath.Join(e.hooks, point)))
}

// releaseAll lets the call go on from where it stopped to its end.
func (e *tcEdit) releaseAll(t *testing.T) {
	t.Helper()
	require.NoError(t, os.Remove(filepath.Join(e.hooks, tcPoints[e.next-1])))
	if e.next < len(tcPoints) {
		e.runTo(t, tcPoints[len(tcPoints)-1])
		require.NoError(t, os.Remove(filepath.Join(e.hooks, tcPoints[len(tcPoints)-1])))
	}
}

// tcGone reports whether process pid has ended (a zombie counts).
func tcGone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z")
}

// content says whether the file holds the old content or the new one, and
// fails the test for anything else.
func (e *tcEdit) content(t *testing.T) string {
	t.Helper()
	got, err := os.ReadFile(e.file)
	require.NoError(t, err)
	switch string(got) {
	case e.old:
		return "old"
	case e.new:
		return "new"
	}
	t.Fatalf("the file is neither old nor new: %d bytes, starting %q", len(got), got[:min(len(got), 20)])
	return ""
}

// requireNoTemporaries checks that the project holds the file alone, and
// that no tools process left a journal of temporary files behind.
func (e *tcEdit) requireNoTemporaries(t *testing.T) {
	t.Helper()
	ents, err := os.ReadDir(e.h.project)
	require.NoError(t, err)
	for _, de := range ents {
		require.True(t, de.Name() == "big.txt" || de.Name() == ".panto", "the project holds %s", de.Name())
	}
	js, _ := filepath.Glob(filepath.Join(e.h.home, "state", "panto", "tools", "tmp", "*"))
	require.Empty(t, js, "a journal of temporary files is left")
}

// result is the one tool result the session recorded.
func (e *tcEdit) result(t *testing.T) (string, bool) {
	t.Helper()
	res := toolResults(t, e.h.sessionFiles()[0])
	require.Len(t, res, 1)
	return res[0]["text"].(string), res[0]["is_error"].(bool)
}

// Item 8: Ctrl-C (SIGINT) or SIGTERM to panto while a large write or edit
// runs, at each point of it: stopped before the rename, the file is
// unchanged and the result says nothing was written; after it, the file
// is changed and the result says it was written. No temporary file is
// left either way.
func TestToolCallsInterruptedEditIsHonest(t *testing.T) {
	if testing.Short() {
		t.Skip("20 MB edits")
	}
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, tool := range []string{"edit", "write"} {
			for _, point := range tcPoints {
				t.Run(fmt.Sprintf("%s/%s/%s", sig, tool, point), func(t *testing.T) {
					t.Parallel()
					e := tcStartEdit(t, tool, 20<<20, true)
					e.runTo(t, point)
					require.NoError(t, e.cmd.Process.Signal(sig))
					e.releaseCancelled(t, point)
					code := waitExit(t, e.cmd, 15*time.Second)
					want := 130
					if sig == syscall.SIGTERM {
						want = 128 + int(sig)
					}
					require.Equal(t, want, code, e.stderr.String())
					text, isErr := e.result(t)
					if point == "committed" {
						require.Equal(t, "new", e.content(t))
						require.False(t, isErr, text)
						require.Contains(t, text, "(Interrupted after the change was made: "+e.file+" was written.)")
					} else {
						require.Equal(t, "old", e.content(t))
						require.True(t, isErr, text)
						require.Contains(t, text, "interrupted by the user before the change was made; nothing was written")
					}
					e.requireNoTemporaries(t)
				})
			}
		}
	}
}

// Item 8: a signal to the tools extension's process group in the middle
// of an edit leaves no temporary file: SIGTERM makes it remove its files
// before it exits, SIGINT is ignored (the edit completes), and after
// SIGKILL — of the tools process, or of panto, which takes the tools
// process with it — an unnamed temporary file (O_TMPFILE) is gone with
// it and a named one (where O_TMPFILE is missing; forced here) is
// removed by the next start of the tools extension.
func TestToolCallsSignalsToTheToolsProcessLeaveNoTemporaryFile(t *testing.T) {
	if testing.Short() {
		t.Skip("20 MB edits")
	}
	t.Parallel()
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		panto bool // the signal goes to panto, not to the tools process group
		named bool
	}{
		{"SIGTERM", syscall.SIGTERM, false, false},
		{"SIGTERM named", syscall.SIGTERM, false, true},
		{"SIGINT", syscall.SIGINT, false, false},
		{"SIGKILL", syscall.SIGKILL, false, false},
		{"SIGKILL named", syscall.SIGKILL, false, true},
		{"SIGKILL of panto", syscall.SIGKILL, true, false},
		{"SIGKILL of panto named", syscall.SIGKILL, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var env []string
			if tc.named {
				env = append(env, "PANTO_TOOLS_TEST_NO_TMPFILE=1")
			}
			e := tcStartEdit(t, "edit", 20<<20, true, env...)
			pid := e.runTo(t, "write")
			if tc.named {
				tmps, _ := filepath.Glob(filepath.Join(e.h.project, ".big.txt.*.tmp"))
				require.Len(t, tmps, 1, "the forced fallback writes a named temporary file")
			}
			if tc.panto {
				require.NoError(t, e.cmd.Process.Signal(tc.sig))
			} else {
				require.NoError(t, syscall.Kill(-pid, tc.sig), "the tools process leads its process group")
			}
			if tc.sig == syscall.SIGINT {
				e.releaseAll(t)
			}
			code := waitExit(t, e.cmd, 15*time.Second)
			switch {
			case tc.panto:
				require.Equal(t, -1, code, "killed")
				require.Eventually(t, func() bool { return tcGone(pid) }, 10*time.Second, 10*time.Millisecond, "the tools process dies with panto")
			case tc.sig == syscall.SIGINT:
				require.Equal(t, 0, code, e.stderr.String())
				require.Equal(t, "new", e.content(t))
				text, _ := e.result(t)
				require.Contains(t, text, "Edited "+e.file)
			default:
				require.Equal(t, 0, code, e.stderr.String())
				text, isErr := e.result(t)
				require.True(t, isErr)
				require.Contains(t, text, "its extension tools stopped working")
			}
			if tc.sig != syscall.SIGINT {
				require.Equal(t, "old", e.content(t))
			}
			switch {
			case tc.named && tc.sig == syscall.SIGKILL && tc.panto:
				tmps, _ := filepath.Glob(filepath.Join(e.h.project, ".big.txt.*.tmp"))
				require.Len(t, tmps, 1, "SIGKILL leaves the named file until the next start")
				e.h.ok(echoTools(e.h, "-p", "hello")...) // the next start of the tools extension
			case tc.named && tc.sig == syscall.SIGKILL:
				// The next start of the tools extension, which removes the
				// file, is its restart in the same session.
				require.Contains(t, e.stderr.String(), "the tools extension stopped (signal: killed); restarted it")
			}
			e.requireNoTemporaries(t)
		})
	}
}

// Item 8, without hooks: Ctrl-C at random moments of a 60 MB edit. Each
// time, either the file is unchanged and the result says nothing was
// written, or it changed and the result says so; no temporary file is
// left. (Before, 3 of 5 such runs reported "interrupted" for a file that
// had changed, and print mode left the temporary file in the project.)
func TestToolCallsCtrlCAtRandomMomentsOfALargeEdit(t *testing.T) {
	if testing.Short() {
		t.Skip("60 MB edits")
	}
	t.Parallel()
	run := func(delay time.Duration) (*tcEdit, time.Duration) {
		e := tcStartEdit(t, "edit", 60<<20, false)
		// Wait for the call to start: panto prints it on stderr.
		require.Eventually(t, func() bool { return strings.Contains(e.stderr.String(), "→ edit") }, 30*time.Second, time.Millisecond)
		start := time.Now()
		if delay >= 0 {
			time.Sleep(delay)
			if err := e.cmd.Process.Signal(syscall.SIGINT); err != nil {
				require.ErrorIs(t, err, os.ErrProcessDone) // it finished first
			}
		}
		waitExit(t, e.cmd, 30*time.Second)
		return e, time.Since(start)
	}
	e, took := run(-1)
	require.Equal(t, "new", e.content(t))
	var changed, unchanged int
	for range 6 {
		delay := time.Duration(rand.Int64N(int64(took)*5/4 + 1)) // some after the commit
		e, _ := run(delay)
		text, isErr := e.result(t)
		switch e.content(t) {
		case "new":
			changed++
			require.Contains(t, text, "Edited "+e.file, "after %s: the file changed, and the result says so", delay)
		case "old":
			unchanged++
			require.True(t, isErr)
			require.True(t, strings.Contains(text, "nothing was written") || strings.HasPrefix(text, "not run"),
				"after %s: the file is unchanged, and the result says so: %s", delay, text)
		}
		e.requireNoTemporaries(t)
	}
	t.Logf("an uninterrupted edit took %s; %d interrupted edits left the file unchanged, %d changed it", took, unchanged, changed)
}

// Item 10: a result over the 64 MiB an extension may send says that the
// tool ran and that its result was withheld, with its size; the
// extension stays.
func TestToolCallsResultTooLargeToCarry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("", "--provider", "echo", "--extension", filepath.Join(pluginDir, "bigresult"), "-p",
		"tool:big {\"bytes\":70000000}\ntool:big {\"bytes\":3}")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "disabled")
	res := toolResults(t, h.sessionFiles()[0])
	require.Len(t, res, 2)
	require.True(t, res[0]["is_error"].(bool))
	require.NotContains(t, res[0]["text"], "not run")
	require.Contains(t, res[0]["text"], "big ran, but its result is too large to carry: 70000005 bytes, over the 64 MiB an extension's answer may be; the result was withheld")
	require.Equal(t, "xxx", res[1]["text"])
}

// Item 10: a NUL byte in a bash command is refused before anything runs,
// naming the NUL and its offset.
func TestToolCallsNULInABashCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("", echoTools(h, "-p", `tool:bash {"command":"touch ran; echo a\u0000b"}`)...)
	require.Equal(t, 0, r.code, r.stderr)
	res := toolResults(t, h.sessionFiles()[0])
	require.Len(t, res, 1)
	require.True(t, res[0]["is_error"].(bool))
	require.Contains(t, res[0]["text"], `invalid input: field "command" holds a NUL byte (\u0000) at byte offset 17; a command line cannot contain NUL, so nothing was run`)
	require.NotContains(t, res[0]["text"], "fork/exec")
	require.NoFileExists(t, filepath.Join(h.project, "ran"))
}

// Item 10: an SSE line as long as a large tool input (a 17 MB write) is
// read; one over 64 MiB is an error that names the limit and the event.
func TestToolCallsLargeSSELines(t *testing.T) {
	if testing.Short() {
		t.Skip("65 MB streams")
	}
	t.Parallel()
	t.Run("17 MB", func(t *testing.T) {
		t.Parallel()
		content := tcBig("HEAD", 17<<20)
		in, _ := json.Marshal(map[string]string{"path": "large.txt", "content": content})
		h, _, args := toolHarness(t, anthropicTools(toolCall{"t1", "write", string(in)}), anthropicText("written"))
		r := h.run("", append(args, "-p", "write it")...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "written\n", r.stdout)
		got, err := os.ReadFile(filepath.Join(h.project, "large.txt"))
		require.NoError(t, err)
		require.True(t, string(got) == content, "the 17 MB file is written whole")
	})
	t.Run("over 64 MiB", func(t *testing.T) {
		t.Parallel()
		in, _ := json.Marshal(map[string]string{"path": "huge.txt", "content": strings.Repeat("x", 65<<20)})
		h, _, args := toolHarness(t, anthropicTools(toolCall{"t1", "write", string(in)}))
		r := h.run("", append(args, "-p", "write it")...)
		require.NotEqual(t, 0, r.code)
		require.Contains(t, r.stderr, `the line is longer than 64 MiB, the limit for one line (the "data" field of event "content_block_delta")`)
		require.NotContains(t, r.stderr, "token too long")
		require.NoFileExists(t, filepath.Join(h.project, "huge.txt"))
	})
}
