//go:build !linux && !darwin

package tui

// bytesWaiting cannot tell here: each read is judged as a burst of its
// own.
func bytesWaiting(uintptr) bool { return false }
