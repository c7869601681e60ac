package extension

import "syscall"

// pdeathsig kills the extension when panto dies, even by SIGKILL, and puts
// it in its own process group so a terminal's Ctrl-C reaches only panto.
func pdeathsig() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
