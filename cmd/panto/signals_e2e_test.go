package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
)

// ptyRun starts panto with a pseudo-terminal as its stdin, stdout and
// stderr, as a user's shell would; out collects what it prints. It runs
// the line loop (--plain): the full-screen UI has its own tests
// (ui_tmux_e2e_test.go).
type ptyRun struct {
	cmd *exec.Cmd
	tty *os.File
	out syncBuffer
}

func (h *harness) startPTY(args ...string) *ptyRun {
	h.t.Helper()
	p := &ptyRun{cmd: h.command("", append([]string{"--plain"}, args...)...)}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = nil, nil, nil
	tty, err := pty.StartWithSize(p.cmd, &pty.Winsize{Rows: 40, Cols: 120})
	require.NoError(h.t, err)
	p.tty = tty
	go io.Copy(&p.out, tty)
	h.t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		tty.Close()
	})
	return p
}

// waitFor waits until the output holds s.
func (p *ptyRun) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(p.out.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output:\n%s", s, p.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitExit waits at most d for panto to exit and returns its status.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("panto did not exit within %s", d)
	}
	return cmd.ProcessState.ExitCode()
}

// marked returns the pids of the processes whose environment holds
// PANTO_TEST_MARK=mark: what a test started, found without trusting
// process names.
func marked(mark string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil {
			continue
		}
		if bytes.Contains(env, []byte("PANTO_TEST_MARK="+mark+"\x00")) {
			var pid int
			fmt.Sscan(filepath.Base(d), &pid)
			pids = append(pids, pid)
		}
	}
	return pids
}

// requireNoneMarked waits a moment for the marked processes to go, and
// fails naming those still there.
func requireNoneMarked(t *testing.T, mark string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := marked(mark)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
			t.Fatalf("processes outlived panto: %v", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newMark(t *testing.T) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
}

// SIGTERM and SIGHUP at the interactive prompt end panto at once, with
// 128+signal, and leave the session to the next run.
func TestTerminatingSignalAtThePrompt(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			p := h.startPTY("--provider", "echo")
			p.waitFor(t, "> ")
			require.NoError(t, p.cmd.Process.Signal(sig))
			require.Equal(t, 128+int(sig), waitExit(t, p.cmd, 3*time.Second), p.out.String())
			require.NotContains(t, p.out.String(), "Ctrl-D or /quit to leave")
			h.ok("-p", "next", "--provider", "echo", "-c") // the lock is free
		})
	}
}

// Ctrl-C at the prompt only reminds how to leave.
func TestCtrlCAtThePromptReminds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.startPTY("--provider", "echo")
	p.waitFor(t, "> ")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	p.waitFor(t, "Ctrl-D or /quit to leave")
	_, err := p.tty.WriteString("/quit\r")
	require.NoError(t, err)
	require.Equal(t, 0, waitExit(t, p.cmd, 5*time.Second))
}

// A terminating signal during a tool call: every call has a result, the
// tool's processes are gone, the exit status names the signal.
func TestTerminatingSignalDuringAToolCall(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			mark := newMark(t)
			in, _ := json.Marshal(map[string]string{"command": "PANTO_TEST_MARK=" + mark + " sleep 60 & PANTO_TEST_MARK=" + mark + " sleep 60"})
			cmd := h.command("", "--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"), "-p", "tool:bash "+string(in))
			var out, errb syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			require.NoError(t, cmd.Start())
			deadline := time.Now().Add(10 * time.Second)
			for len(marked(mark)) < 2 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			require.Len(t, marked(mark), 2, "the command runs")
			require.NoError(t, cmd.Process.Signal(sig))
			require.Equal(t, 128+int(sig), waitExit(t, cmd, 5*time.Second), errb.String())
			requireNoneMarked(t, mark)
			res := toolResults(t, h.sessionFiles()[0])
			require.Len(t, res, 1)
			require.True(t, res[0]["is_error"].(bool))
			h.ok("-p", "resume", "--provider", "echo", "-c", "--no-extensions")
		})
	}
}

// After SIGKILL during a tool call, the next resume answers the call
// before it sends anything, so the provider gets a valid conversation;
// and the tool's processes did not outlive panto.
func TestResumeAfterSIGKILLAnswersTheCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mark := newMark(t)
	in, _ := json.Marshal(map[string]string{"command": "PANTO_TEST_MARK=" + mark + " sleep 60 & PANTO_TEST_MARK=" + mark + " sleep 60"})
	cmd := h.command("", "--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"), "-p", "tool:bash "+string(in))
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(10 * time.Second)
	for len(marked(mark)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.Len(t, marked(mark), 2, "the command runs")
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	requireNoneMarked(t, mark) // bash's group dies with the tools extension

	fake := newFake(t, anthropicText("ok"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	r := h.ok("-p", "what happened?", "-c", "--provider", "anthropic", "--base-url", fake.srv.URL)
	require.Contains(t, r.stderr, "recorded them as interrupted")
	var req struct {
		Messages []struct {
			Role    string
			Content []map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(fake.request(t, 0).body, &req))
	var shape []string
	for _, m := range req.Messages {
		for _, c := range m.Content {
			shape = append(shape, m.Role+":"+c["type"].(string))
		}
	}
	require.Equal(t, []string{"user:text", "assistant:text", "assistant:tool_use", "user:tool_result", "user:text"}, shape)
	res := toolResults(t, h.sessionFiles()[0])
	require.Contains(t, res[0]["text"], "interrupted: panto stopped before this call finished")
}

// A reader of stdout that goes away early does not lose the reply.
func TestClosedStdoutStillRecordsTheReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cmd := h.command("", "-p", "hi", "--provider", "echo")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	buf := make([]byte, 10)
	_, err = io.ReadFull(stdout, buf)
	require.NoError(t, err)
	stdout.Close() // as head -c 10 does
	require.Equal(t, 0, waitExit(t, cmd, 10*time.Second), errb.String())
	var roles []string
	for _, e := range entriesOfType(t, h.sessionFiles()[0], "message") {
		roles = append(roles, e["message"].(map[string]any)["role"].(string))
	}
	require.Equal(t, []string{"system", "user", "assistant"}, roles)
}

// -p /help lists the commands, built-in and the extensions'.
func TestPrintHelpListsCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.ok("-p", "/help", "--provider", "echo", "--extension", filepath.Join(pluginDir, "sysprompt"))
	require.Contains(t, r.stdout, "/prompt    show the effective system prompt")
	require.Contains(t, r.stdout, "/system-append TEXT")
}
