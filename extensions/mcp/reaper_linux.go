package main

import (
	"os"
	"syscall"
)

// reaperAttr puts the reaper in a process group of its own and asks the
// kernel to send it SIGTERM when the extension dies, SIGKILL included
// (the signal comes when the thread that started the reaper exits; Go
// ends a thread only when a goroutine locked to it returns, which this
// extension never does).
func reaperAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// becomeSubreaper makes the orphans among the reaper's descendants its
// children, and names the process as ps shows it.
func becomeSubreaper() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	_ = os.WriteFile("/proc/self/comm", []byte("panto-mcp-reaper"), 0)
}

// selfExe is the mcp binary; /proc/self/exe stays valid when the file was
// replaced since the extension started.
func selfExe() (string, error) {
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err == nil {
		return self, nil
	}
	return os.Executable()
}
