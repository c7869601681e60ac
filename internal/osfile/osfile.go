// Package osfile holds the few file operations whose system calls differ
// between Unix and Windows, so that the packages that need them
// (sessionlog's writer lock, atomicfile, the UI's history) are written
// once: an exclusive lock taken without waiting, an open that does not
// follow a symbolic link, and an open whose file may be renamed or
// removed while it is open.
//
// On Unix each is the system call it has always been (flock(2),
// O_NOFOLLOW, open(2)); nothing is weaker there. On Windows each is the
// nearest equivalent, and its doc comment says where it differs.
//
// What does not belong here: what a lock or a file means (the callers
// decide), and anything Linux-only.
package osfile

import "errors"

// ErrLocked is returned by TryLock when another open file — in this
// process or another — holds the lock. Do not retry in a loop: the
// caller says who holds it, or waits for it.
var ErrLocked = errors.New("the file is locked by another open file")
