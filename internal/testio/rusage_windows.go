package testio

import (
	"os"
	"time"
)

// MaxRSS reports no peak resident set size on Windows (ok is false):
// its process state holds none. (On Unix it is getrusage's.)
func MaxRSS(*os.ProcessState) (rss int64, ok bool) { return 0, false }

// CPUTime returns 0 on Windows: not known. (On Unix it is the CPU time
// this process has used.)
func CPUTime() time.Duration { return 0 }
