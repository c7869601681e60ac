package sdk

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/protocol"
)

// The extension admits only panto: the pid panto gives in
// PANTO_HOST_PID, or its parent from a panto that gives none; where the
// system cannot say who connected, it admits (and logs that).
func TestOnlyPanto(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == protocol.HostPIDEnv {
				return v
			}
			return ""
		}
	}
	require.Equal(t, 42, pantoPID(env("42"), 7))
	require.Equal(t, 7, pantoPID(env(""), 7))
	require.Equal(t, 7, pantoPID(env("x"), 7))

	check := onlyPanto(42, hclog.NewNullLogger(), "call this extension")
	require.NoError(t, check(42, nil))
	require.ErrorContains(t, check(43, nil), "refused a connection with pid 43: only panto (pid 42) may call this extension")
	require.Error(t, check(0, errors.New("getsockopt: bad file descriptor")))
	require.NoError(t, check(0, fmt.Errorf("%w: a tcp connection", protocol.ErrPeerUnknown)))
}
