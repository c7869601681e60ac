//go:build unix

package extension

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

var tempVars = []string{"TMPDIR"}

// rootName is the socket root's name in the temporary folder, which all
// users share: panto-UID.
func rootName() string { return "panto-" + strconv.Itoa(os.Getuid()) }

// checkOwner refuses a folder another user owns.
func checkOwner(_ string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("it belongs to uid %d, not to you (uid %d); remove it, or set XDG_RUNTIME_DIR", st.Uid, os.Getuid())
	}
	return nil
}

// running reports whether a process with this pid exists.
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
