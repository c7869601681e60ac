package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
)

func requireSupport(t *testing.T) {
	t.Helper()
	if s := Probe(); !s.OK() {
		t.Skip("this machine cannot sandbox: " + s.Reason)
	}
}

// TestRequireSupport fails, where CI sets PANTO_REQUIRE_SANDBOX=1, when
// the kernel cannot sandbox, so that the tests below really run there.
func TestRequireSupport(t *testing.T) {
	if os.Getenv("PANTO_REQUIRE_SANDBOX") != "1" {
		t.Skip("PANTO_REQUIRE_SANDBOX is not 1")
	}
	s := Probe()
	require.True(t, s.OK(), "%+v", s)
	require.True(t, s.Seccomp)
	require.GreaterOrEqual(t, s.LandlockABI, minLandlockABI)
}

// TestApplyMessages runs real commands under the sandbox and checks
// both what the sandbox refuses and that Blocked reads the real
// messages right.
func TestApplyMessages(t *testing.T) {
	requireSupport(t)
	t.Parallel()
	ws, tmp := t.TempDir(), t.TempDir()
	p := sdk.Sandbox{Mode: sdk.SandboxWorkspaceWrite, WritableRoots: []string{ws}, TmpDir: tmp}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	for _, tc := range []struct {
		name, command string
		want          string // Blocked's answer
	}{
		{"write outside", "echo x > /etc/panto-sandbox-test", WriteBlocked},
		{"touch outside", "touch /etc/panto-sandbox-test", WriteBlocked},
		{"tcp", "exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(port), NetworkBlocked},
		{"udp", "echo x > /dev/udp/127.0.0.1/" + strconv.Itoa(port), NetworkBlocked},
		{"inside is fine, a missing file is not the sandbox", "echo x > f && cat nope", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := sandboxed(t, p, ws, tc.command)
			require.NotZero(t, code, out)
			require.Equal(t, tc.want, Blocked(p, out, code), out)
		})
	}
	require.NoFileExists(t, "/etc/panto-sandbox-test")
	require.FileExists(t, filepath.Join(ws, "f"))
}

func TestApplyTmpDirAndReadOnly(t *testing.T) {
	requireSupport(t)
	t.Parallel()
	ws, tmp := t.TempDir(), t.TempDir()
	p := sdk.Sandbox{Mode: sdk.SandboxReadOnly, WritableRoots: []string{ws}, TmpDir: tmp}
	out, code := sandboxed(t, p, ws, `echo "$TMPDIR" && echo t > "$TMPDIR/t" && touch f`)
	require.Equal(t, 1, code, out)
	require.True(t, strings.HasPrefix(out, tmp+"\n"), out)
	require.FileExists(t, filepath.Join(tmp, "t"))
	require.NoFileExists(t, filepath.Join(ws, "f"))
	require.Equal(t, ReadOnlyBlocked, Blocked(p, out, code))
}

func TestApplyNetworkOn(t *testing.T) {
	requireSupport(t)
	t.Parallel()
	ws := t.TempDir()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	p := sdk.Sandbox{Mode: sdk.SandboxWorkspaceWrite, WritableRoots: []string{ws}, TmpDir: t.TempDir(), Network: true}
	out, code := sandboxed(t, p, ws, "exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)+" && head -1 <&3")
	require.Equal(t, 0, code, out)
	require.Equal(t, "hello\n", out)
}
