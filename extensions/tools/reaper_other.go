//go:build unix && !linux

package main

import (
	"os"
	"syscall"
)

// reaperAttr puts the reaper in a process group of its own. Other
// systems have no parent-death signal: there the reaper and bash are
// killed on timeout and cancel, but not when the tools process is
// SIGKILLed.
func reaperAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// becomeSubreaper: only Linux has subreapers; elsewhere the reaper ends
// with bash.
func becomeSubreaper() {}

// selfExe is the tools binary.
func selfExe() (string, error) { return os.Executable() }
