//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
)

func TestBash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, command string
		exact         string
		want          []string
		isErr         bool
	}{
		{name: "stdout and stderr", command: "echo out; echo err >&2", exact: "out\nerr\n[exit code 0]"},
		{name: "no output", command: "true", exact: "[exit code 0]"},
		{name: "no final newline", command: "printf abc", exact: "abc\n[exit code 0]"},
		{name: "exit code", command: "echo failing; exit 3", exact: "failing\n[exit code 3]", isErr: true},
		{name: "project directory", command: "pwd", exact: dir + "\n[exit code 0]"},
		{name: "stdin is empty", command: "cat; echo done", exact: "done\n[exit code 0]"},
		{name: "killed by a signal", command: "kill -TERM $$", want: []string{"[killed by signal: terminated]"}, isErr: true},
		{name: "group killed from inside", command: "echo before; kill -KILL 0", exact: "before\n[killed by signal: killed]", isErr: true},
		{name: "the reaper is not seen", command: `echo "[$PANTO_TOOLS_REAPER]"; echo $PWD`, exact: "[]\n" + dir + "\n[exit code 0]"},
		{name: "pager", command: `echo $PAGER $GIT_PAGER`, exact: "cat cat\n[exit code 0]"},
		{name: "tail kept", command: "seq 1 5000", want: []string{
			"[output cut: showing the last 2000 lines (", "of 5000 lines (23893 bytes)", "\n3001\n", "\n5000\n[exit code 0]"}},
		{name: "bash syntax error", command: "if then", want: []string{"syntax error", "[exit code 2]"}, isErr: true},
		{name: "NUL byte", command: "touch ran; echo a\x00b", want: []string{"holds a NUL byte (\\u0000) at byte offset 17", "nothing was run"}, isErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, dir, "bash", js(t, map[string]string{"command": tc.command}))
			require.Equal(t, tc.isErr, res.IsError, res.Content)
			if tc.exact != "" {
				require.Equal(t, tc.exact, res.Content)
			}
			for _, w := range tc.want {
				require.Contains(t, res.Content, w)
			}
			require.NotContains(t, res.Content, "\n3000\n")
			if strings.Contains(tc.command, "\x00") {
				require.NoFileExists(t, filepath.Join(dir, "ran"), "nothing of a command with a NUL runs")
			}
		})
	}
}

// gone reports whether process pid has ended: it does not exist or is a
// zombie waiting for its new parent to reap it.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) STATE ...
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// childPID reads the pid a bash command wrote to file.
func childPID(t *testing.T, file string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(file)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	return pid
}

func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	res := call(t, dir, "bash", `{"command":"echo started; sleep 30 & echo $! > child.pid; wait","timeout":1}`)
	require.Less(t, time.Since(start), 10*time.Second)
	require.True(t, res.IsError)
	require.Equal(t, "started\n[timed out after 1s: the command and its process group were killed]", res.Content)
	pid := childPID(t, filepath.Join(dir, "child.pid"))
	require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 20*time.Millisecond, "sleep %d still runs", pid)
}

func TestBashCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var content string
	var isErr bool
	go func() {
		defer close(done)
		res := callCtx(t, ctx, dir, "bash", `{"command":"sleep 30 & echo $! > child.pid; wait"}`)
		content, isErr = res.Content, res.IsError
	}()
	pid := childPID(t, filepath.Join(dir, "child.pid"))
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("bash did not return after cancel")
	}
	require.True(t, isErr)
	require.Contains(t, content, "[cancelled: the command and its process group were killed]")
	require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 20*time.Millisecond, "sleep %d still runs", pid)
}

func TestBashBackgroundChildDoesNotHang(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := call(t, t.TempDir(), "bash", `{"command":"sleep 5 & echo bye"}`)
	require.Less(t, time.Since(start), 3*time.Second)
	require.Equal(t, "bye\n[exit code 0]", res.Content)
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		max   int
		write []string
		want  string
	}{
		{"fits", 10, []string{"ab\n", "cd\n"}, "ab\ncd\n"},
		{"byte cut starts at a whole line", 8, []string{"111\n222\n333\n"},
			"[output cut: showing the last 2 lines (8 bytes) of 3 lines (12 bytes); redirect the output to a file and read or grep it to see the rest]\n222\n333\n"},
		{"one long line keeps its tail", 4, []string{"abcdefgh"},
			"[output cut: showing the last 0 lines (4 bytes) of 0 lines (8 bytes); redirect the output to a file and read or grep it to see the rest]\nefgh"},
		{"trimmed while writing", 6, []string{"aaaaaa\n", "b\n", "cccccccccc\n", "dd\n", "e\n"},
			"[output cut: showing the last 2 lines (5 bytes) of 5 lines (25 bytes); redirect the output to a file and read or grep it to see the rest]\ndd\ne\n"},
		{"many writes", 6, []string{"a\n", "b\n", "c\n", "d\n", "e\n"}, "[output cut: showing the last 3 lines (6 bytes) of 5 lines (10 bytes); redirect the output to a file and read or grep it to see the rest]\nc\nd\ne\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := &tailBuffer{max: tc.max}
			for _, w := range tc.write {
				_, err := b.Write([]byte(w))
				require.NoError(t, err)
			}
			require.Equal(t, tc.want, b.String())
		})
	}
}

// BenchmarkBashTrue is the cost of one trivial bash call, start to
// result.
func BenchmarkBashTrue(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		res := runBash(context.Background(), dir, "true", time.Minute, nil)
		if res.Content != "[exit code 0]" {
			b.Fatal(res.Content)
		}
	}
}

// marked lists the processes whose environment holds mark.
func marked(t *testing.T, mark string) []int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	require.NoError(t, err)
	var pids []int
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, []byte(mark)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		pids = append(pids, pid)
	}
	return pids
}

// Nothing a bash call started survives the tools process, even when it
// is SIGKILLed (as it is when panto is): not bash, not its background
// children, whether the call is still running or has returned. The
// tools process is this test binary as a helper; the processes are
// found by a marker in their environment.
func TestBashDiesWithTheToolsProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc and a parent-death signal")
	}
	t.Parallel()
	for _, tc := range []struct {
		name, command string
		returns       bool // the call returns before the kill
		marked        int  // processes with the marker
	}{
		{"running", "PANTO_ORPHAN_MARK=%[1]s sleep 600 & PANTO_ORPHAN_MARK=%[1]s bash -c 'trap \"\" TERM HUP; sleep 600' & touch started; wait", false, 2},
		{"returned, background job left", "PANTO_ORPHAN_MARK=%[1]s sleep 600 >/dev/null 2>&1 & touch started", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mark := fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), rand.Int64())
			// The command goes in an argument: in the environment, it
			// would mark every process.
			cmd := exec.Command(os.Args[0], "-test.run=^$", fmt.Sprintf(tc.command, mark))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), helperEnv+"=bash", "GORACE=atexit_sleep_ms=0")
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				for _, pid := range marked(t, mark) { // what a failure left
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			if tc.returns {
				line, err := bufio.NewReader(out).ReadString('\n')
				require.NoError(t, err)
				require.Equal(t, "done: [exit code 0]\n", line)
			}
			require.Eventually(t, func() bool {
				_, err := os.Stat(filepath.Join(dir, "started"))
				return err == nil
			}, 10*time.Second, 10*time.Millisecond)
			require.Eventually(t, func() bool { return len(marked(t, mark)) >= tc.marked },
				5*time.Second, 10*time.Millisecond, "the marked processes did not start")

			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()
			require.Eventually(t, func() bool { return len(marked(t, mark)) == 0 }, 5*time.Second, 20*time.Millisecond,
				"processes outlived the tools process: %v", marked(t, mark))
		})
	}
}

// bash streams its output as the call's progress while the command
// runs, stdout and stderr in the order the result has them, whole lines
// only; when panto cancels the call for the user, the result is the
// output so far, marked interrupted with the time it ran.
func TestBashStreamsProgressAndKeepsItOnInterrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mu sync.Mutex
	var pieces []string
	got := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(pieces, "")
	}
	ctx, cancel := context.WithCancelCause(sdk.WithProgress(context.Background(), func(text string) {
		mu.Lock()
		defer mu.Unlock()
		pieces = append(pieces, text)
	}))
	done := make(chan sdk.ToolResult, 1)
	go func() {
		done <- callCtx(t, ctx, dir, "bash", `{"command":"echo starting; echo oops >&2; printf 'half'; sleep 0.3; echo ' line'; sleep 60"}`)
	}()
	require.Eventually(t, func() bool { return strings.Contains(got(), "half line\n") }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "starting\noops\nhalf line\n", got(), "whole lines, as they came, before the command ended")
	cancel(sdk.ErrCallCancelled)
	var res sdk.ToolResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("bash did not return after the interrupt")
	}
	require.True(t, res.IsError)
	require.Regexp(t, `^starting\noops\nhalf line\n\[interrupted by the user after [0-9.]+m?s: the command and its process group were killed\]$`, res.Content)
}

// A command that floods its output is sent as a few pieces, each at most
// the last 64 KiB of what came since the one before, and the end of the
// output is never held back.
func TestBashProgressOfAFlood(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var pieces []string
	ctx := sdk.WithProgress(context.Background(), func(text string) {
		mu.Lock()
		defer mu.Unlock()
		pieces = append(pieces, text)
	})
	start := time.Now()
	res := callCtx(t, ctx, t.TempDir(), "bash", `{"command":"yes | head -c 20000000; echo end"}`)
	took := time.Since(start)
	require.False(t, res.IsError, res.Content)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		// "end" may come in a piece of its own, after the last y.
		return len(pieces) > 0 && strings.HasSuffix(strings.Join(pieces, ""), "y\nend\n")
	}, 5*time.Second, 10*time.Millisecond, "the last lines are sent")
	mu.Lock()
	defer mu.Unlock()
	require.LessOrEqual(t, len(pieces), int(took/(50*time.Millisecond))+3, "one piece per 50 ms at most")
	for _, p := range pieces {
		require.LessOrEqual(t, len(p), 64<<10)
		require.True(t, strings.HasSuffix(p, "\n"), "whole lines")
	}
}
