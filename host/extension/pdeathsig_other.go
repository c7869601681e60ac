//go:build unix && !linux

package extension

import "syscall"

// pdeathsig: other systems have no parent-death signal; extensions are
// killed when panto exits normally.
func pdeathsig() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
