package lineloop

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTTY reports whether f is a terminal (not only a character device,
// as /dev/null is).
func isTTY(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// flushTTYInput discards what the terminal fd holds as input and nobody
// has read: lines typed ahead, the line being typed, a terminal's answer
// to a query (tcflush(TCIFLUSH)).
func flushTTYInput(fd int) error {
	return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
}
