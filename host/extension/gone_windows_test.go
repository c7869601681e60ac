package extension

import "os"

// gone reports whether the process pid has exited: on Windows, whether it
// can no longer be opened (os.FindProcess opens a handle to it).
func gone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}
