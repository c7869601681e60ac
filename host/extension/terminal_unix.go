//go:build unix

package extension

import (
	"errors"
	"syscall"
)

// hasTerminal reports whether panto has a controlling terminal: whether
// /dev/tty opens (it fails with ENXIO for a process without one).
func hasTerminal() bool {
	fd, err := syscall.Open("/dev/tty", syscall.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err == nil {
		syscall.Close(fd)
		return true
	}
	return !errors.Is(err, syscall.ENXIO)
}
