//go:build !linux

package lineloop

import "os"

// isTTY reports whether f is a terminal; off Linux panto does not discard
// a terminal's input queue, and says no.
func isTTY(*os.File) bool { return false }

// flushTTYInput does nothing off Linux: the lines panto read ahead are
// still discarded before a question.
func flushTTYInput(int) error { return nil }
