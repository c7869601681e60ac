package main

import (
	"os"
	"syscall"
)

// reaperAttr puts the reaper in a process group of its own and asks the
// kernel to send it SIGTERM when the tools process dies, SIGKILL
// included. (The signal comes when the thread that started the reaper
// exits; Go ends a thread only when a goroutine locked to it returns,
// which the tools extension never does.)
func reaperAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// becomeSubreaper makes the orphans among the reaper's descendants (the
// background jobs of a bash that exited) its children, so that it can
// wait for them. It also names the process, which ps would show as "exe"
// (see selfExe).
func becomeSubreaper() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	_ = os.WriteFile("/proc/self/comm", []byte("panto-reaper"), 0)
}

// selfExe is the tools binary. /proc/self/exe stays valid when the file
// was replaced or deleted since the extension started (make install
// during a session), where os.Executable's path would not.
func selfExe() (string, error) {
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err == nil {
		return self, nil
	}
	return os.Executable() // no /proc

}
