package extension

import "syscall"

// pdeathsig starts the extension in a process group of its own
// (CREATE_NEW_PROCESS_GROUP), so a console's Ctrl-C reaches only panto.
// Windows has no parent-death signal: extensions are killed when panto
// exits normally, not when it is killed.
func pdeathsig() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
