package main

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probe tries every route to the terminal: /dev/tty (writing Marker and,
// with input, pushing it), and pts by path (pushing input, or one
// harmless byte when none is given and inject is false).
func probe(pts, input string, inject bool) Report {
	r := Report{PID: os.Getpid()}
	push := input
	if !inject {
		push = " "
	}
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err != nil {
		r.DevTTY = err.Error()
	} else {
		r.DevTTY = "ok"
		_, err := f.WriteString(Marker)
		r.DevTTYWrite = errText(err)
		r.DevTTYInject = errText(tiocsti(f, push))
		f.Close()
	}
	if f, err := os.OpenFile(pts, os.O_RDWR|syscall.O_NOCTTY, 0); err != nil {
		r.PTS = err.Error()
	} else {
		r.PTS = "ok"
		r.PTSInject = errText(tiocsti(f, push))
		f.Close()
	}
	return r
}

// tiocsti pushes s into the terminal's input queue, byte by byte.
func tiocsti(f *os.File, s string) error {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.TIOCSTI, uintptr(unsafe.Pointer(&b))); errno != 0 {
			return errno
		}
	}
	return nil
}

func leaveGroup() error { return syscall.Setpgid(0, 0) }
