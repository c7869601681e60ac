package tui

import (
	"syscall"
	"unsafe"
)

// fionread is FIONREAD on the BSDs: _IOR('f', 127, int).
const fionread = 0x4004667f

// bytesWaiting reports whether the terminal fd has input waiting to be
// read.
func bytesWaiting(fd uintptr) bool {
	var n int32
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, fionread, uintptr(unsafe.Pointer(&n)))
	return e == 0 && n > 0
}
