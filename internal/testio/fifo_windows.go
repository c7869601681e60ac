package testio

import (
	"io/fs"
	"testing"
)

// Mkfifo skips the test: Windows has no named pipes (FIFOs) in the file
// system. (On Unix it makes one at path.)
func Mkfifo(t testing.TB, path string, _ fs.FileMode) {
	t.Helper()
	t.Skipf("no FIFO at %s: Windows has none in the file system", path)
}
