//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
	"sync"

	"github.com/panto-dev/panto/sdk"
)

var probeOnce = sync.OnceValue(func() Support {
	return Support{Reason: "the sandbox needs Linux (Landlock and seccomp); this is " + runtime.GOOS}
})

// Apply fails outside Linux: there is no Landlock or seccomp to confine
// the process with.
func Apply(sdk.Sandbox) error {
	return errors.New("sandbox: " + probeOnce().Reason)
}
