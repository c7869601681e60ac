//go:build unix

package main

import (
	"os"
	"syscall"
)

// lockJournal takes an exclusive flock(2) on a journal without waiting:
// held while its process runs, released by the kernel however the
// process ends. It fails when another process holds it.
func lockJournal(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
