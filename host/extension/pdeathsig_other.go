//go:build unix && !linux

package extension

import "syscall"

// pdeathsig makes the extension the leader of a process group of its
// own, whose id is its pid, and, when panto has a controlling terminal,
// of a session of its own, without one (see the Linux version). Other
// systems have no parent-death signal; extensions are killed when panto
// exits normally.
func pdeathsig() *syscall.SysProcAttr {
	if hasTerminal() {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}
