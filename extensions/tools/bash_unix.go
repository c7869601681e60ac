//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sandbox"
)

// runUnderReaper is runBash's run of a checked command: under a reaper
// that leads a process group of its own (see runReaper), and applies
// the sandbox sb when it is not nil.
func runUnderReaper(ctx context.Context, dir, command string, timeout time.Duration, sb *sdk.Sandbox) sdk.ToolResult {
	failed := func(err error) sdk.ToolResult { return sdk.ToolResult{Content: "bash: " + err.Error(), IsError: true} }
	env := []string{"PAGER=cat", "GIT_PAGER=cat"}
	if sb != nil {
		policy, err := json.Marshal(sb)
		if err != nil {
			return failed(err)
		}
		env = append(append(env, sandbox.Environ(*sb)...), sandboxEnv+"="+string(policy))
	}
	cmd, err := reaperCommand(dir, command, env...)
	if err != nil {
		return failed(err)
	}
	// stdout and stderr are one pipe, read here; the reaper reports on
	// another. stdin stays empty (/dev/null).
	outR, outW, err := os.Pipe()
	if err != nil {
		return failed(err)
	}
	defer outR.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return failed(err)
	}
	defer statusR.Close()
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{statusW} // fd 3: reaperStatusFD
	err = cmd.Start()
	outW.Close()
	statusW.Close()
	if err != nil {
		return failed(err)
	}
	pgid := cmd.Process.Pid

	out := &tailBuffer{max: maxBytes}
	copied := make(chan struct{})
	start := time.Now()
	go func() {
		// The output streams to panto as progress while it comes.
		_, _ = io.Copy(io.MultiWriter(out, &progressLines{ctx: ctx}), outR) // until every writer is gone, or outR is closed
		close(copied)
	}()

	var (
		mu     sync.Mutex
		reason string // why the group was killed, if it was
	)
	done, killerDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(killerDone)
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		var why string
		select {
		case <-done:
			return
		case <-timer.C:
			why = fmt.Sprintf("timed out after %s", timeout)
		case <-ctx.Done():
			why = interruptedAfter(ctx, start)
		}
		mu.Lock()
		reason = why
		mu.Unlock()
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}()
	// The report comes when bash has ended; EOF without one, when the
	// reaper died first (killed with its group).
	report, _ := io.ReadAll(statusR)
	close(done)
	<-killerDone
	mu.Lock()
	killed := reason
	mu.Unlock()
	end := parseReaperStatus(string(report))
	if end.reported {
		// The reaper stays while background jobs run; reap it then. Not
		// before the killer above is done: until the reaper is reaped
		// its pid, the group's id, cannot be reused.
		go func() { _ = cmd.Wait() }()
	} else if err := cmd.Wait(); killed == "" {
		// Not killed by us: by someone else (kill, the OOM killer), or
		// the reaper failed.
		var exitErr *exec.ExitError
		ws, ok := syscall.WaitStatus(0), false
		if errors.As(err, &exitErr) {
			ws, ok = exitErr.Sys().(syscall.WaitStatus)
		}
		if ok && ws.Signaled() {
			end.status = ws
		} else {
			end.err = fmt.Sprintf("the reaper ended before bash did: %v", err)
		}
	}
	// A background job may hold the output open: read it a little
	// longer, then stop.
	select {
	case <-copied:
	case <-time.After(bashPipeGrace):
		outR.Close()
		<-copied
	}

	var b strings.Builder
	b.WriteString(out.String())
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch ws := end.status; {
	case killed != "":
		fmt.Fprintf(&b, "[%s: the command and its process group were killed]", killed)
		return sdk.ToolResult{Content: b.String(), IsError: true}
	case end.err != "":
		fmt.Fprintf(&b, "[bash: %s]", end.err)
		return sdk.ToolResult{Content: b.String(), IsError: true}
	case ws.Signaled():
		fmt.Fprintf(&b, "[killed by signal: %s]", ws.Signal())
		return sdk.ToolResult{Content: b.String(), IsError: true}
	default:
		fmt.Fprintf(&b, "[exit code %d]", ws.ExitStatus())
		res := sdk.ToolResult{Content: b.String(), IsError: ws.ExitStatus() != 0}
		if sb != nil && res.IsError {
			if res.SandboxBlocked = sandbox.Blocked(*sb, out.String(), ws.ExitStatus()); res.SandboxBlocked != "" {
				res.Content += "\n[blocked by the sandbox: " + res.SandboxBlocked + "]"
			}
		}
		return res
	}
}
