//go:build windows

package extension

import (
	"errors"
	"os"
	"os/exec"
)

// killGroup kills proc alone and reports whether it was still running.
// Windows has no process groups to kill at once: what an extension
// started itself is not killed with it (a Job object would be the way to
// do that). Once proc was waited for, os.Process refuses to signal it
// (ErrProcessDone), so a reused pid is never hit.
func killGroup(proc *os.Process) bool {
	return proc.Kill() == nil
}

// killedBySIGKILL reports whether cmd.Wait's error says the process was
// killed: on Windows, that it ended with exit code 1, which is what
// os.Process.Kill (TerminateProcess) gives it. A process that exited 1
// by itself reads the same.
func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 1
}
