//go:build !linux && !darwin

package protocol

import (
	"fmt"
	"runtime"
)

// peerPID: only Linux and macOS say which process connected a unix
// socket (others, through getpeereid, give only its user).
func peerPID(uintptr) (int, error) {
	return 0, fmt.Errorf("%w (on %s)", ErrPeerUnknown, runtime.GOOS)
}
