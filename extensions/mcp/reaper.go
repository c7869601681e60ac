//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/panto-dev/panto/internal/reap"
)

// reaperEnv, set in the environment of the extension re-executed, makes
// it the reaper of one server (its value is the extension's pid).
const reaperEnv = "PANTO_MCP_REAPER"

// serverCommand is the command that runs a stdio server. On Unix it is
// the mcp binary re-executed as the server's reaper (see runReaper): the
// leader of a process group of its own, which the system signals when
// the extension dies (on Linux, even by SIGKILL), so that no server, nor
// anything a server started (npx starts node), outlives panto.
func serverCommand(name string, args []string) (*exec.Cmd, error) {
	self, err := reap.SelfExe()
	if err != nil {
		// No way to re-execute: run it directly, in a group of its own.
		cmd := exec.Command(name, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd, nil
	}
	cmd := exec.Command(self, append([]string{name}, args...)...)
	cmd.Args[0] = "panto-mcp-reaper"
	cmd.SysProcAttr = reap.Attr()
	cmd.Env = append(os.Environ(), reaperEnv+"="+strconv.Itoa(os.Getpid()))
	return cmd, nil
}

// runReaper is the reaper's whole program: it runs os.Args[1:] with its
// stdin, stdout and stderr (the pipes to the extension), in its process
// group, and exits with its status once it has ended, killing the group
// first, so that what the server left behind dies with it. When the
// extension dies (the death signal) or stops it (SIGTERM), it kills the
// whole group.
func runReaper() int {
	parent, _ := strconv.Atoi(os.Getenv(reaperEnv))
	os.Unsetenv(reaperEnv)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	go func() {
		<-sigs
		_ = syscall.Kill(0, syscall.SIGKILL) // the whole group, the reaper too
	}()
	if os.Getppid() != parent { // the extension died before the death signal was set
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
	reap.BecomeSubreaper("panto-mcp-reaper")
	if len(os.Args) < 2 {
		os.Stderr.WriteString("panto-mcp-reaper: no command\n")
		return 2
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString("panto-mcp-reaper: " + err.Error() + "\n")
		return 127
	}
	code := 1
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			break
		}
		if pid == cmd.Process.Pid {
			if ws.Exited() {
				code = ws.ExitStatus()
			}
			break
		}
	}
	// The server ended. What it left behind would hold the pipes open:
	// with anything left, the whole group goes (the reaper too).
	if _, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); !errors.Is(err, syscall.ECHILD) {
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
	return code
}
