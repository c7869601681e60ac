package extension

import "syscall"

// createNoWindow is CREATE_NO_WINDOW: the process gets a console of its
// own, with no window, instead of sharing panto's.
const createNoWindow = 0x08000000

// pdeathsig starts the extension in a process group of its own
// (CREATE_NEW_PROCESS_GROUP), so a console's Ctrl-C reaches only panto,
// and with a hidden console of its own (CREATE_NO_WINDOW), so that
// neither it nor what it starts (the model's bash) writes to the user's
// console or puts input into it. Windows has no parent-death signal:
// extensions are killed when panto exits normally, not when it is killed.
func pdeathsig() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | createNoWindow}
}
