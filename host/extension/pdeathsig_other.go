//go:build unix && !linux

package extension

import "syscall"

// pdeathsig starts the extension in a session of its own, without a
// controlling terminal (see the Linux version), leading a process group
// whose id is its pid. Other systems have no parent-death signal;
// extensions are killed when panto exits normally.
func pdeathsig() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
