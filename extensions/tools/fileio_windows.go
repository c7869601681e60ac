package main

import (
	"io/fs"
	"os"
)

// linkCount is 1 on Windows: a FileInfo there does not hold the number
// of hard links, so write and edit do not warn that other names keep the
// old content.
func linkCount(fs.FileInfo) uint64 { return 1 }

// copyOwner does nothing on Windows: a file has an access list, not a
// Unix owner and group, and the new file gets its folder's.
func copyOwner(*os.File, fs.FileInfo) {}
