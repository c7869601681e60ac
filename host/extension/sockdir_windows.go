package extension

import (
	"io/fs"
	"syscall"
)

var tempVars = []string{"TMP", "TEMP"}

// rootName is the socket root's name in the user's temporary folder
// (per user on Windows). go-plugin uses TCP on Windows; the folders it
// makes stay empty, but they are made.
func rootName() string { return "panto" }

// checkOwner: the user's temporary folder is the user's own.
func checkOwner(string, fs.FileInfo) error { return nil }

// processQueryLimitedInformation is PROCESS_QUERY_LIMITED_INFORMATION.
const processQueryLimitedInformation = 0x1000

// stillActive is STILL_ACTIVE, the exit code of a running process.
const stillActive = 259

// running reports whether a process with this pid is running.
func running(pid int) bool {
	h, err := syscall.OpenProcess(processQueryLimitedInformation, false, uint32(pid))
	if err != nil {
		// Access denied: it runs, as another user.
		return err == syscall.ERROR_ACCESS_DENIED
	}
	defer syscall.CloseHandle(h)
	var code uint32
	return syscall.GetExitCodeProcess(h, &code) == nil && code == stillActive
}
