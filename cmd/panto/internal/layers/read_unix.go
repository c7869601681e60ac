//go:build unix

package layers

import (
	"os"
	"syscall"
)

// openNonblocking opens path for reading without waiting for a FIFO's
// writer; on a regular file O_NONBLOCK changes nothing.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
