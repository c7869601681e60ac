package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sandbox"
)

// requireSandbox skips t when this machine cannot sandbox (see
// TestSandboxProbe, which fails instead where CI asks for it).
func requireSandbox(t testing.TB) {
	t.Helper()
	if s := sandbox.Probe(); !s.OK() {
		t.Skip("this machine cannot sandbox: " + s.Reason)
	}
}

// TestSandboxProbe: where CI sets PANTO_REQUIRE_SANDBOX=1 (a kernel with
// Landlock ABI 4 or later), the sandbox tests must run, not skip.
func TestSandboxProbe(t *testing.T) {
	if os.Getenv("PANTO_REQUIRE_SANDBOX") != "1" {
		t.Skip("PANTO_REQUIRE_SANDBOX is not 1")
	}
	s := sandbox.Probe()
	require.True(t, s.OK(), "this machine cannot sandbox: %s (Landlock ABI %d, seccomp %v)", s.Reason, s.LandlockABI, s.Seccomp)
}

// box is a sandbox of workspace-write, network off, with a fresh
// workspace and temporary folder.
type box struct {
	ws, tmp string
	sb      sdk.Sandbox
}

func newBox(t testing.TB) box {
	t.Helper()
	ws, tmp := t.TempDir(), t.TempDir()
	return box{ws: ws, tmp: tmp, sb: sdk.Sandbox{Mode: sdk.SandboxWorkspaceWrite, WritableRoots: []string{ws}, TmpDir: tmp}}
}

// callBox runs tool name of an ext rooted at dir with input under sb,
// the way the SDK does.
func callBox(t testing.TB, dir string, sb *sdk.Sandbox, name string, input any) sdk.ToolResult {
	t.Helper()
	raw, err := json.Marshal(input)
	require.NoError(t, err)
	for _, tool := range (&ext{dir: dir}).Tools() {
		if tool.Name == name {
			res, err := tool.Run(context.Background(), nil, sdk.ToolCall{ID: "c1", Name: name, Input: raw, Sandbox: sb})
			require.NoError(t, err)
			return res
		}
	}
	t.Fatalf("no tool %q", name)
	return sdk.ToolResult{}
}

// bash runs command with the bash tool in b's workspace under sb.
func (b box) bash(t testing.TB, command string) sdk.ToolResult {
	t.Helper()
	return callBox(t, b.ws, &b.sb, "bash", map[string]any{"command": command})
}

// outside is a folder outside every writable root, holding a file
// target with content "orig".
func outside(t testing.TB) (dir, target string) {
	t.Helper()
	dir = t.TempDir()
	target = filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("orig\n"), 0o644))
	return dir, target
}

// requireUnchanged asserts that dir holds only target, unchanged.
func requireUnchanged(t testing.TB, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "target"))
	require.NoError(t, err)
	require.Equal(t, "orig\n", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "%s holds new files", dir)
}

func TestSandboxWorkspaceWrite(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	for _, tc := range []struct{ name, command string }{
		{"redirect", `echo a > f && test "$(cat f)" = a`},
		{"heredoc", "cat > h.txt <<'EOF'\nline one\nEOF\ngrep -q 'line one' h.txt"},
		{"mv across folders (refer)", "mkdir -p a sub && echo x > a/y && mv a/y sub/b && test -f sub/b && ! test -e a/y"},
		{"hard link within", "echo x > f && mkdir d && ln f d/g && test d/g -ef f"},
		{"git init, add, commit", "git init -q && echo c > c.txt && git add c.txt && " +
			"git -c user.email=a@b -c user.name=n commit -qm x && git log --oneline | grep -q x"},
		{"TMPDIR", `test -n "$TMPDIR" && echo t > "$TMPDIR/t" && f=$(mktemp) && case $f in "$TMPDIR"/*) ;; *) exit 9;; esac`},
		{"device files", "echo x > /dev/null && head -c1 /dev/zero >/dev/null && head -c1 /dev/urandom >/dev/null"},
		{"pipes", "echo x | cat | grep -q x && cat <(echo y) | grep -q y"},
		{"socketpair", "if command -v python3 >/dev/null; then " +
			`python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"'; fi`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBox(t)
			res := b.bash(t, tc.command)
			require.False(t, res.IsError, res.Content)
			require.Empty(t, res.SandboxBlocked)
		})
	}
	t.Run("TMPDIR is the sandbox's", func(t *testing.T) {
		t.Parallel()
		b := newBox(t)
		res := b.bash(t, `echo "$TMPDIR $TMP $TEMP"`)
		require.Equal(t, b.tmp+" "+b.tmp+" "+b.tmp+"\n[exit code 0]", res.Content)
	})
	t.Run("TMPDIR is made when missing", func(t *testing.T) {
		t.Parallel()
		b := newBox(t)
		b.sb.TmpDir = filepath.Join(b.tmp, "session", "tmp")
		res := b.bash(t, `echo x > "$TMPDIR/x"`)
		require.False(t, res.IsError, res.Content)
		fi, err := os.Stat(b.sb.TmpDir)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	})
}

func TestSandboxWritesOutside(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	for _, tc := range []struct{ name, command string }{
		{"HOME", `export HOME=%[1]s && echo pwn > ~/target`},
		{"HOME, new file", `export HOME=%[1]s && mkdir -p ~/.config && echo pwn > ~/.bashrc`},
		{"/tmp outside TMPDIR", `echo pwn > %[1]s/target`},
		{"/etc", `echo pwn > /etc/panto-sandbox-test # not %[1]s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBox(t)
			out, _ := outside(t)
			res := b.bash(t, fmt.Sprintf(tc.command, out))
			require.True(t, res.IsError, res.Content)
			require.Equal(t, sandbox.WriteBlocked, res.SandboxBlocked, res.Content)
			require.Contains(t, res.Content, "\n[blocked by the sandbox: "+sandbox.WriteBlocked+"]")
			requireUnchanged(t, out)
		})
	}
	require.NoFileExists(t, "/etc/panto-sandbox-test")
}

func TestSandboxReadOnly(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	b := newBox(t)
	b.sb.Mode = sdk.SandboxReadOnly
	writeFiles(t, b.ws, map[string]string{"keep": "k\n"})
	res := b.bash(t, `echo t > "$TMPDIR/t" && echo in tmp; touch f; echo x >> keep; mkdir d; rm keep; git init -q`)
	require.True(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "in tmp\n")
	require.Equal(t, sandbox.ReadOnlyBlocked, res.SandboxBlocked, res.Content)
	entries, err := os.ReadDir(b.ws)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only keep")
	require.FileExists(t, filepath.Join(b.tmp, "t"))
	got, err := os.ReadFile(filepath.Join(b.ws, "keep"))
	require.NoError(t, err)
	require.Equal(t, "k\n", string(got))
}

// listenTCP accepts connections on 127.0.0.1 and counts them.
func listenTCP(t *testing.T) (port int, accepted func() int) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			_, _ = c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, func() int { return int(n.Load()) }
}

// listenUDP counts the datagrams sent to a port on 127.0.0.1.
func listenUDP(t *testing.T) (port int, received func() int) {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	var n atomic.Int32
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	return pc.LocalAddr().(*net.UDPAddr).Port, func() int { return int(n.Load()) }
}

// listenUnix accepts connections on a unix socket outside every
// writable root and counts them.
func listenUnix(t *testing.T) (path string, accepted func() int) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return path, func() int { return int(n.Load()) }
}

// dialCommand is a bash command that connects to network:address with
// this test binary as the helper (see runHelper).
func dialCommand(t testing.TB, target string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	return fmt.Sprintf("%s=dial %q -test.run='^$' %q", helperEnv, self, target)
}

func TestSandboxNetworkOff(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	t.Run("tcp with bash", func(t *testing.T) {
		t.Parallel()
		port, accepted := listenTCP(t)
		res := newBox(t).bash(t, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3", port))
		require.True(t, res.IsError, res.Content)
		require.Equal(t, sandbox.NetworkBlocked, res.SandboxBlocked, res.Content)
		require.Contains(t, res.Content, "[blocked by the sandbox: network is off (sandbox.network = false)]")
		require.Zero(t, accepted())
	})
	t.Run("tcp with Go", func(t *testing.T) {
		t.Parallel()
		port, accepted := listenTCP(t)
		res := newBox(t).bash(t, dialCommand(t, fmt.Sprintf("tcp:127.0.0.1:%d", port)))
		require.True(t, res.IsError, res.Content)
		require.NotContains(t, res.Content, "connected")
		require.Equal(t, sandbox.NetworkBlocked, res.SandboxBlocked, res.Content)
		require.Zero(t, accepted())
	})
	t.Run("udp", func(t *testing.T) {
		t.Parallel()
		port, received := listenUDP(t)
		res := newBox(t).bash(t, fmt.Sprintf("echo x > /dev/udp/127.0.0.1/%d", port))
		require.True(t, res.IsError, res.Content)
		require.Equal(t, sandbox.NetworkBlocked, res.SandboxBlocked, res.Content)
		time.Sleep(100 * time.Millisecond)
		require.Zero(t, received())
	})
	t.Run("unix socket outside the roots", func(t *testing.T) {
		t.Parallel()
		path, accepted := listenUnix(t)
		res := newBox(t).bash(t, dialCommand(t, "unix:"+path))
		require.True(t, res.IsError, res.Content)
		require.NotContains(t, res.Content, "connected")
		require.Zero(t, accepted())
	})
}

func TestSandboxNetworkOn(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	port, accepted := listenTCP(t)
	b := newBox(t)
	b.sb.Network = true
	res := b.bash(t, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3", port))
	require.Equal(t, "hello\n[exit code 0]", res.Content)
	require.Equal(t, 1, accepted())
	// Writes stay confined with the network on.
	out, _ := outside(t)
	res = b.bash(t, fmt.Sprintf("echo pwn > %s/target", out))
	require.Equal(t, sandbox.WriteBlocked, res.SandboxBlocked, res.Content)
	requireUnchanged(t, out)
}

// With the network off but a unix socket allowed, AF_UNIX sockets can
// be made (and, before Landlock ABI 9, connect to any pathname socket:
// see sandbox.Apply); other families stay refused.
func TestSandboxUnixSockets(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	path, accepted := listenUnix(t)
	port, tcpAccepted := listenTCP(t)
	b := newBox(t)
	b.sb.UnixSockets = []string{path}
	res := b.bash(t, dialCommand(t, "unix:"+path))
	require.Equal(t, "connected\n[exit code 0]", res.Content)
	require.Equal(t, 1, accepted())
	res = b.bash(t, dialCommand(t, fmt.Sprintf("tcp:127.0.0.1:%d", port)))
	require.True(t, res.IsError, res.Content)
	require.Zero(t, tcpAccepted())
}

// go build works in the sandbox when its cache is in a writable root;
// with the default cache (under HOME, outside the roots) it fails: the
// host has to put GOCACHE in a writable root (or the user add the
// cache to sandbox.writable_roots).
func TestSandboxGoBuild(t *testing.T) {
	requireSandbox(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go in PATH")
	}
	t.Parallel()
	b := newBox(t)
	writeFiles(t, b.ws, map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() { println(\"hello\") }\n",
	})
	env := fmt.Sprintf("export PATH=%s:$PATH GOTOOLCHAIN=local GOFLAGS= GOENV=off GOPATH=$PWD/.gopath", filepath.Dir(goBin))
	res := b.bash(t, env+" GOCACHE=$PWD/.gocache && go build -o hello . && ./hello")
	require.Equal(t, "hello\n[exit code 0]", res.Content)

	out, _ := outside(t)
	res = b.bash(t, env+fmt.Sprintf(" GOCACHE=%s/cache && go build -o hello2 .", out))
	require.True(t, res.IsError, res.Content)
	require.Equal(t, sandbox.WriteBlocked, res.SandboxBlocked, res.Content)
	requireUnchanged(t, out)
}

// PANTO_SANDBOX_UNSUPPORTED plays a kernel that cannot sandbox: a call
// that requires the sandbox is refused and runs nothing; one that does
// not runs unsandboxed.
func TestSandboxRequired(t *testing.T) {
	t.Setenv(sandbox.UnsupportedEnv, "simulated: no Landlock")
	b := newBox(t)
	b.sb.Required = true
	res := b.bash(t, "touch marker")
	require.True(t, res.IsError)
	require.Equal(t, "bash refused: the sandbox is required (sandbox.required = true) but this kernel cannot sandbox: simulated: no Landlock; nothing was run", res.Content)
	require.Contains(t, res.SandboxBlocked, "simulated: no Landlock")
	require.NoFileExists(t, filepath.Join(b.ws, "marker"))

	b.sb.Required = false
	out, target := outside(t)
	res = b.bash(t, "touch marker && echo unsandboxed > "+target)
	require.Equal(t, "[exit code 0]", res.Content)
	require.Empty(t, res.SandboxBlocked)
	require.FileExists(t, filepath.Join(b.ws, "marker"))
	got, err := os.ReadFile(filepath.Join(out, "target"))
	require.NoError(t, err)
	require.Equal(t, "unsandboxed\n", string(got))
}

func TestSandboxWriteEdit(t *testing.T) {
	t.Parallel() // write and edit are checked in the tools process: no kernel support needed
	edit := func(old, repl string) map[string]any {
		return map[string]any{"edits": []map[string]string{{"old_text": old, "new_text": repl}}}
	}
	with := func(m map[string]any, path string) map[string]any {
		m["path"] = path
		return m
	}
	t.Run("inside", func(t *testing.T) {
		t.Parallel()
		b := newBox(t)
		res := callBox(t, b.ws, &b.sb, "write", map[string]any{"path": "a/f.txt", "content": "one\n"})
		require.False(t, res.IsError, res.Content)
		res = callBox(t, b.ws, &b.sb, "edit", with(edit("one", "two"), "a/f.txt"))
		require.False(t, res.IsError, res.Content)
		res = callBox(t, b.ws, &b.sb, "write", map[string]any{"path": filepath.Join(b.tmp, "t.txt"), "content": "t\n"})
		require.False(t, res.IsError, res.Content)
	})
	for _, tc := range []struct {
		name string
		path func(b box, out string) string
	}{
		{"absolute", func(_ box, out string) string { return filepath.Join(out, "target") }},
		{"dot-dot", func(b box, out string) string {
			rel, err := filepath.Rel(b.ws, filepath.Join(out, "target"))
			require.NoError(t, err)
			return rel
		}},
		{"symlinked folder in the workspace", func(b box, out string) string {
			require.NoError(t, os.Symlink(out, filepath.Join(b.ws, "link")))
			return "link/target"
		}},
		{"symlinked file in the workspace", func(b box, out string) string {
			require.NoError(t, os.Symlink(filepath.Join(out, "target"), filepath.Join(b.ws, "flink")))
			return "flink"
		}},
		{"symlink to a new file outside", func(b box, out string) string {
			require.NoError(t, os.Symlink(filepath.Join(out, "new"), filepath.Join(b.ws, "nlink")))
			return "nlink"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBox(t)
			out, _ := outside(t)
			p := tc.path(b, out)
			res := callBox(t, b.ws, &b.sb, "write", map[string]any{"path": p, "content": "pwn\n"})
			require.True(t, res.IsError, res.Content)
			require.Contains(t, res.Content, "blocked by the sandbox: ")
			require.Contains(t, res.Content, "is outside the writable roots")
			require.Equal(t, sandbox.WriteBlocked, res.SandboxBlocked)
			res = callBox(t, b.ws, &b.sb, "edit", with(edit("orig", "pwn"), p))
			require.True(t, res.IsError, res.Content)
			require.Equal(t, sandbox.WriteBlocked, res.SandboxBlocked, res.Content)
			requireUnchanged(t, out)
		})
	}
	t.Run("read-only", func(t *testing.T) {
		t.Parallel()
		b := newBox(t)
		b.sb.Mode = sdk.SandboxReadOnly
		res := callBox(t, b.ws, &b.sb, "write", map[string]any{"path": "f.txt", "content": "x\n"})
		require.True(t, res.IsError, res.Content)
		require.Equal(t, sandbox.ReadOnlyBlocked, res.SandboxBlocked)
		require.Contains(t, res.Content, `sandbox.mode = "read-only": only `+b.tmp+" is writable")
		require.NoFileExists(t, filepath.Join(b.ws, "f.txt"))
		res = callBox(t, b.ws, &b.sb, "write", map[string]any{"path": filepath.Join(b.tmp, "f.txt"), "content": "x\n"})
		require.False(t, res.IsError, res.Content)
	})
	t.Run("no sandbox", func(t *testing.T) {
		t.Parallel()
		b := newBox(t)
		out, target := outside(t)
		res := callBox(t, b.ws, nil, "write", map[string]any{"path": target, "content": "x\n"})
		require.False(t, res.IsError, res.Content)
		require.Empty(t, res.SandboxBlocked)
		_ = out
	})
}

// BenchmarkBashSandbox is the cost of the sandbox on one trivial bash
// call, start to result: compare sandboxed with plain.
func BenchmarkBashSandbox(b *testing.B) {
	for _, sandboxed := range []bool{false, true} {
		name := "plain"
		if sandboxed {
			name = "sandboxed"
		}
		b.Run(name, func(b *testing.B) {
			bx := newBox(b)
			var sb *sdk.Sandbox
			if sandboxed {
				requireSandbox(b)
				sb = &bx.sb
			}
			for b.Loop() {
				res := runBash(context.Background(), bx.ws, "true", time.Minute, sb)
				if res.Content != "[exit code 0]" {
					b.Fatal(res.Content)
				}
			}
		})
	}
}

// A commit in a git worktree writes to the main repository's git folder
// (git rev-parse --git-common-dir), outside the worktree: the host must
// put that folder in the writable roots too.
func TestSandboxGitWorktree(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git in PATH")
	}
	t.Parallel()
	repo, wt := t.TempDir(), filepath.Join(t.TempDir(), "wt")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=n"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	git(repo, "init", "-q")
	git(repo, "commit", "-q", "--allow-empty", "-m", "root")
	git(repo, "worktree", "add", "-q", wt)
	common := git(wt, "rev-parse", "--path-format=absolute", "--git-common-dir")

	commit := "echo c > c.txt && git add c.txt && git -c user.email=a@b -c user.name=n commit -qm c"
	sb := sdk.Sandbox{Mode: sdk.SandboxWorkspaceWrite, WritableRoots: []string{wt}, TmpDir: t.TempDir()}
	res := callBox(t, wt, &sb, "bash", map[string]any{"command": commit})
	require.True(t, res.IsError, res.Content)

	sb.WritableRoots = append(sb.WritableRoots, common)
	res = callBox(t, wt, &sb, "bash", map[string]any{"command": commit})
	require.False(t, res.IsError, res.Content)
}
