//go:build unix

package main

import "syscall"

// mknodFull makes a copy of /dev/full (char 1:7) at path; it needs root.
func mknodFull(path string) error {
	return syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|7)
}
