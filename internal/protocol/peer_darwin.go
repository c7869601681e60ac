package protocol

import "golang.org/x/sys/unix"

// peerPID is the pid LOCAL_PEERPID records: the process that called
// connect().
func peerPID(fd uintptr) (int, error) {
	return unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
}
