//go:build unix && !linux

package reap

import (
	"os"
	"syscall"
)

// Attr puts a reaper in a process group of its own. Other systems have
// no parent-death signal: there a reaper and its child end on a timeout
// or a cancel, or when the child's input ends, but not when the process
// that started them is SIGKILLed.
func Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// BecomeSubreaper: only Linux has subreapers; elsewhere a reaper ends with
// its child.
func BecomeSubreaper(string) {}

// SelfExe is the running binary.
func SelfExe() (string, error) { return os.Executable() }
