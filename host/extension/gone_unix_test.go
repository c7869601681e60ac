//go:build unix

package extension

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// gone reports whether the process pid has exited: no such process, or a
// zombie nobody reaps yet (its parent died and init may be slow to reap).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return os.IsNotExist(err)
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}
