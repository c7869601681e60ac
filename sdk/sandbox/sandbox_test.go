package sandbox

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
)

func TestProbeUnsupportedEnv(t *testing.T) {
	t.Setenv(UnsupportedEnv, "simulated: no Landlock here")
	s := Probe()
	require.False(t, s.OK())
	require.Equal(t, "simulated: no Landlock here", s.Reason)
}

func TestProbeNotLinux(t *testing.T) {
	if runtime.GOOS == "linux" {
		t.Skip("on Linux")
	}
	t.Parallel()
	s := Probe()
	require.False(t, s.OK())
	require.Equal(t, "the sandbox needs Linux (Landlock and seccomp); this is "+runtime.GOOS, s.Reason)
	require.Error(t, Apply(sdk.Sandbox{}))
}

func TestEnviron(t *testing.T) {
	t.Parallel()
	require.Nil(t, Environ(sdk.Sandbox{}))
	require.Equal(t, []string{"TMPDIR=/t", "TMP=/t", "TEMP=/t"}, Environ(sdk.Sandbox{TmpDir: "/t"}))
}

func TestWritable(t *testing.T) {
	t.Parallel()
	ws := sdk.Sandbox{Mode: sdk.SandboxWorkspaceWrite, WritableRoots: []string{"/w", "/x/y"}, TmpDir: "/t"}
	ro := ws
	ro.Mode = sdk.SandboxReadOnly
	for _, tc := range []struct {
		path   string
		ws, ro bool
	}{
		{"/w", true, false},
		{"/w/a/b", true, false},
		{"/x/y/z", true, false},
		{"/x", false, false},
		{"/wx", false, false},
		{"/t/f", true, true},
		{"/etc/passwd", false, false},
	} {
		require.Equal(t, tc.ws, Writable(ws, tc.path), "workspace-write %s", tc.path)
		require.Equal(t, tc.ro, Writable(ro, tc.path), "read-only %s", tc.path)
	}
}

// The messages are those of real runs under the sandbox (see
// TestApplyMessages, which checks them live) and of the same programs
// failing for other reasons, which must not be blamed on it.
func TestBlocked(t *testing.T) {
	t.Parallel()
	ws := sdk.Sandbox{Mode: sdk.SandboxWorkspaceWrite, WritableRoots: []string{"/work/p"}, TmpDir: "/tmp/s"}
	ro := ws
	ro.Mode = sdk.SandboxReadOnly
	net := ws
	net.Network = true
	for _, tc := range []struct {
		name   string
		p      sdk.Sandbox
		output string
		code   int
		want   string
	}{
		{"exit 0", ws, "bash: line 1: /etc/x: Permission denied\n", 0, ""},
		{"bash redirect", ws, "bash: line 1: /etc/x: Permission denied\n", 1, WriteBlocked},
		{"touch", ws, "touch: cannot touch '/etc/y': Permission denied\n", 1, WriteBlocked},
		{"mkdir", ws, "mkdir: cannot create directory ‘/etc/zz’: Permission denied\n", 1, WriteBlocked},
		{"cp", ws, "cp: cannot create regular file '/etc/f': Permission denied\n", 1, WriteBlocked},
		{"tee", ws, "tee: /etc/t: Permission denied\n", 1, WriteBlocked},
		{"go cache", ws, "go: creating work dir: mkdir /root/.cache/go-build/x: permission denied\n", 1, WriteBlocked},
		{"python write", ws, "PermissionError: [Errno 13] Permission denied: '/etc/x'\n", 1, WriteBlocked},
		{"read-only mode", ro, "touch: cannot touch 'f': Permission denied\n", 1, ReadOnlyBlocked},
		{"read-only mode, tmp is writable", ro, "touch: cannot touch '/tmp/s/f': Permission denied\n", 1, ""},
		{"inside the roots: not the sandbox", ws, "touch: cannot touch '/work/p/f': Permission denied\n", 1, ""},
		{"relative in workspace-write", ws, "touch: cannot touch 'f': Permission denied\n", 1, ""},
		{"a read refused: not the sandbox", ws, "cat: /root/secret: Permission denied\n", 1, ""},
		{"grep of an unreadable file", ws, "grep: /etc/shadow: Permission denied\n", 2, ""},
		{"exec of a non-executable in the project", ws, "bash: line 1: ./run.sh: Permission denied\n", 126, ""},
		{"ordinary failure", ws, "make: *** [Makefile:3: all] Error 1\n", 2, ""},
		{"missing file", ws, "cat: nope: No such file or directory\n", 1, ""},
		{"bash /dev/tcp", ws, "bash: socket: Operation not permitted\nbash: line 1: /dev/tcp/127.0.0.1/22: Operation not permitted\n", 1, NetworkBlocked},
		{"curl resolve", ws, "curl: (6) Could not resolve host: example.com\n", 6, NetworkBlocked},
		{"curl connect", ws, "curl: (7) Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server\n", 7, NetworkBlocked},
		{"git remote", ws, "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com\n", 128, NetworkBlocked},
		{"python socket", ws, "  File \"/usr/lib/python3.11/socket.py\", line 232, in __init__\n    _socket.socket.__init__(self, family, type, proto, fileno)\nPermissionError: [Errno 1] Operation not permitted\n", 1, NetworkBlocked},
		{"go dial", ws, "dial tcp 127.0.0.1:80: socket: operation not permitted\n", 1, NetworkBlocked},
		{"dns", ws, "ping: example.com: Temporary failure in name resolution\n", 2, NetworkBlocked},
		{"network on: not the sandbox", net, "curl: (6) Could not resolve host: example.com\n", 6, ""},
		{"network on, write still blocked", net, "touch: cannot touch '/etc/y': Permission denied\n", 1, WriteBlocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, Blocked(tc.p, tc.output, tc.code))
		})
	}
}
