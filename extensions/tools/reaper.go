//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/panto-dev/panto/internal/reap"
	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sandbox"
)

// The reaper's file descriptor 3 is the pipe on which it reports how
// bash ended: "status N" (N a syscall.WaitStatus) or "error MESSAGE".
const reaperStatusFD = 3

// reaperCommand is the tools binary re-executed as the reaper of bash -c
// command in dir, with env added to the environment: the leader of a
// process group of its own, which the system signals (SIGTERM) when the
// tools process dies, even by SIGKILL (on Linux; see reap.Attr).
func reaperCommand(dir, command string, env ...string) (*exec.Cmd, error) {
	self, err := reap.SelfExe()
	if err != nil {
		return nil, fmt.Errorf("find the tools binary: %w", err)
	}
	cmd := exec.Command(self, command)
	cmd.Args[0] = "panto-tools-reaper"
	cmd.Dir = dir
	cmd.SysProcAttr = reap.Attr()
	cmd.Env = append(append(cmd.Environ(), env...), reaperEnv+"="+strconv.Itoa(os.Getpid()))
	return cmd, nil
}

// runReaper is the reaper's whole program (main calls it when reaperEnv
// is set): it runs bash -c os.Args[1] in its own process group, with its
// stdin, stdout and stderr, and writes how bash ended to fd 3. It then
// stays, as the subreaper of the background jobs bash left, until they
// have all ended, so that they too die with the tools process: when the
// tools process dies the reaper gets SIGTERM and kills its whole group
// with SIGKILL. A command that leaves the group (setsid) escapes this.
func runReaper() int {
	parent, _ := strconv.Atoi(os.Getenv(reaperEnv))
	os.Unsetenv(reaperEnv) // bash and what it runs are not reapers
	syscall.CloseOnExec(reaperStatusFD)
	status := os.NewFile(reaperStatusFD, "status")

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	go func() {
		<-sigs
		_ = syscall.Kill(0, syscall.SIGKILL) // the whole group, the reaper too
	}()
	// The tools process may have died before the death signal was set.
	if os.Getppid() != parent {
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
	reap.BecomeSubreaper("panto-reaper")

	if len(os.Args) < 2 {
		fmt.Fprintf(status, "error reaper: no command")
		return 2
	}
	// The sandbox confines the reaper and so bash and all it starts;
	// the reaper itself only waits and writes to fd 3 from now on. When
	// it cannot be applied nothing runs: never unsandboxed silently.
	// This is the one place: bash is the only program the tools start
	// (read, ls, find and grep are Go code in the tools process, and only
	// read; write and edit check the roots themselves, see sandbox.go).
	if policy, ok := os.LookupEnv(sandboxEnv); ok {
		os.Unsetenv(sandboxEnv)
		var sb sdk.Sandbox
		if err := json.Unmarshal([]byte(policy), &sb); err != nil {
			fmt.Fprintf(status, "error sandbox: the policy from the tools process: %v; nothing was run", err)
			return 1
		}
		if err := sandbox.Apply(sb); err != nil {
			fmt.Fprintf(status, "error %v; nothing was run", err)
			return 1
		}
	}
	bash := exec.Command("bash", "-c", os.Args[1])
	bash.Stdin, bash.Stdout, bash.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := bash.Start(); err != nil {
		fmt.Fprintf(status, "error %v", err)
		return 1
	}
	// Reap every child: bash, then whatever is left to us. bash is
	// waited for here, not with bash.Wait, so that the loop sees it.
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: no children left
			return 0
		}
		if pid == bash.Process.Pid {
			fmt.Fprintf(status, "status %d", uint32(ws))
			status.Close()
			// Only bash's background jobs hold the output open now.
			os.Stdin.Close()
			os.Stdout.Close()
			os.Stderr.Close()
		}
	}
}

// bashEnd is how a bash call ended, as its reaper reported it.
type bashEnd struct {
	status   syscall.WaitStatus
	reported bool   // the reaper reported; if not, it died first
	err      string // bash could not be started
}

func parseReaperStatus(s string) bashEnd {
	if msg, ok := strings.CutPrefix(s, "error "); ok {
		return bashEnd{reported: true, err: msg}
	}
	if n, ok := strings.CutPrefix(s, "status "); ok {
		if ws, err := strconv.ParseUint(n, 10, 32); err == nil {
			return bashEnd{reported: true, status: syscall.WaitStatus(ws)}
		}
	}
	return bashEnd{}
}
