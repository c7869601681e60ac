package protocol

import "golang.org/x/sys/unix"

// peerPID is the pid SO_PEERCRED records: the process that called
// connect(), as the kernel saw it.
func peerPID(fd uintptr) (int, error) {
	cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}
