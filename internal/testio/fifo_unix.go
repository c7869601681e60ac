//go:build unix

package testio

import (
	"io/fs"
	"syscall"
	"testing"
)

// Mkfifo makes a named pipe (FIFO) at path, failing the test if it
// cannot. Windows has no FIFOs in the file system: there it skips the
// test.
func Mkfifo(t testing.TB, path string, perm fs.FileMode) {
	t.Helper()
	if err := syscall.Mkfifo(path, uint32(perm.Perm())); err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
}
