//go:build unix

package extension

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// killGroup sends SIGKILL to the process group that proc leads (its pid
// is the group's id) and reports whether any process was in it.
func killGroup(proc *os.Process) bool {
	return syscall.Kill(-proc.Pid, syscall.SIGKILL) == nil
}

// killedBySIGKILL reports whether cmd.Wait's error says SIGKILL ended
// the process.
func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
