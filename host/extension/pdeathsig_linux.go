package extension

import "syscall"

// pdeathsig kills the extension when panto dies, even by SIGKILL, and
// makes it the leader of a process group of its own, whose id is its
// pid (what killGroup kills), so a terminal's Ctrl-C reaches only panto.
//
// When panto has a controlling terminal, the extension starts in a
// session of its own (setsid) instead, without one: neither it nor
// anything it starts (the model's bash) can then open /dev/tty, write to
// the user's terminal through it, or push input into it with TIOCSTI. A
// session's leader leads a process group whose id is its pid too.
// Without a terminal there is nothing to keep from the extension, and it
// stays in panto's session: a new session is a new scheduling group
// (autogroup) on Linux, which makes each hook's round trip slower on a
// busy machine.
func pdeathsig() *syscall.SysProcAttr {
	if hasTerminal() {
		return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	}
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
