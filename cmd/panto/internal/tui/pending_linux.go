package tui

import (
	"syscall"
	"unsafe"
)

// bytesWaiting reports whether the terminal fd has input waiting to be
// read (TIOCINQ, FIONREAD's name on Linux).
func bytesWaiting(fd uintptr) bool {
	var n int32
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	return e == 0 && n > 0
}
