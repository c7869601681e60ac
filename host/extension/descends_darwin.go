package extension

import "golang.org/x/sys/unix"

// descends reports whether process pid was started, directly or not, by
// process ancestor (its parents, as the kernel gives them, lead to it).
func descends(pid, ancestor int) bool {
	for range 64 {
		kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
		if err != nil {
			return false
		}
		ppid := int(kp.Eproc.Ppid)
		if ppid <= 1 {
			return false
		}
		if ppid == ancestor {
			return true
		}
		pid = ppid
	}
	return false
}
