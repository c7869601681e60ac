//go:build !unix

package layers

import "os"

// openNonblocking opens path for reading; where there are no FIFOs to
// block on, a plain open.
func openNonblocking(path string) (*os.File, error) {
	return os.Open(path)
}
