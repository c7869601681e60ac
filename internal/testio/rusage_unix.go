//go:build unix

package testio

import (
	"os"
	"syscall"
	"time"
)

// MaxRSS is the peak resident set size of the ended process ps, as
// getrusage(2) reports it (kilobytes on Linux, bytes on macOS); ok is
// false where the system does not report one (Windows).
func MaxRSS(ps *os.ProcessState) (rss int64, ok bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return int64(ru.Maxrss), true
}

// CPUTime returns the CPU time (user and system, all threads) this
// process has used; 0 where it is not known. On a loaded machine it
// tells the work done apart from the time spent waiting for a core.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
