//go:build unix

package main

import (
	"os"
	"syscall"
)

// umask is the process's umask.
func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}
