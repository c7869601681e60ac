package reap

import (
	"os"
	"syscall"
)

// Attr puts a reaper in a process group of its own and asks the kernel to
// send it SIGTERM when the process that started it dies, SIGKILL
// included. (The signal comes when the thread that started the reaper
// exits; Go ends a thread only when a goroutine locked to it returns,
// which the extensions never do.)
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// BecomeSubreaper makes the orphans among the calling process's
// descendants its children, so that it can wait for them, and names the
// process as ps shows it (it would show "exe", see SelfExe).
func BecomeSubreaper(name string) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	_ = os.WriteFile("/proc/self/comm", []byte(name), 0)
}

// SelfExe is the running binary. /proc/self/exe stays valid when the file
// was replaced or deleted since the process started (make install during
// a session), where os.Executable's path would not.
func SelfExe() (string, error) {
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err == nil {
		return self, nil
	}
	return os.Executable() // no /proc
}
