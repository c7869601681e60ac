package extension

import "syscall"

// pdeathsig kills the extension when panto dies, even by SIGKILL, and
// starts it in a session of its own (setsid), without a controlling
// terminal: a terminal's Ctrl-C reaches only panto, and neither the
// extension nor anything it starts (the model's bash) can open /dev/tty,
// write to the user's terminal through it, or push input into it with
// TIOCSTI. As a session's leader it also leads a process group whose id
// is its pid, which is what killGroup kills.
func pdeathsig() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
}
