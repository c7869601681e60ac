//go:build !linux

package keys

// undumpable has no portable equivalent outside Linux.
func undumpable() {}

func dumpable() bool { return true }
