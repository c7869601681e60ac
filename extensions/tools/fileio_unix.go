//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount is how many names (hard links) the file of fi has.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink) // not a uint64 on every system
	}
	return 1
}

// copyOwner gives f the owner and group of the file of old, where
// allowed (best effort: only root may give a file away).
func copyOwner(f *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
