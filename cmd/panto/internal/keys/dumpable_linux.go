package keys

import "golang.org/x/sys/unix"

// undumpable makes the process's /proc entries root's, so no process of
// the same user reads its environ, cmdline, mem or fds, or ptraces it.
func undumpable() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// dumpable reports the process's dumpable flag.
func dumpable() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err != nil || v != 0
}
