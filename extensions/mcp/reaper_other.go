//go:build unix && !linux

package main

import (
	"os"
	"syscall"
)

// reaperAttr puts the reaper in a process group of its own. Without a
// death signal (only Linux has one) a SIGKILL of the extension leaves
// the reaper running until the server's stdin closes.
func reaperAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func becomeSubreaper() {}

func selfExe() (string, error) { return os.Executable() }
