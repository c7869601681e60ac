package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSandboxEscapes tries to get out of a workspace-write sandbox with
// the network off: each attempt aims at a file outside every writable
// root (%[1]s is its folder, holding target) or at a listener of the
// test (%[2]d a TCP port, %[3]d a UDP port), and the test asserts the
// target unchanged, nothing new beside it, and nothing received.
//
// Out of scope, by design or by what Landlock covers:
//   - Reads. The sandbox restricts writes and the network, not reading:
//     every file the user can read stays readable to the command, keys
//     and tokens included. It does not hide secrets.
//   - File metadata. Landlock has no right for chmod, chown, utimes or
//     extended attributes: chmod and touch -d on a file outside the
//     roots succeed (the content cannot change; the mode and times can).
//   - Other resources: CPU, memory, processes, time (the bash timeout
//     and the process group are what bound a call).
//   - 32-bit (i386) programs on amd64 are not seen by the seccomp
//     filter; Landlock still refuses their TCP, not their UDP before
//     Landlock ABI 10 (see sandbox.Apply).
func TestSandboxEscapes(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	has := func(name string) bool { _, err := exec.LookPath(name); return err == nil }
	for _, tc := range []struct {
		name, command string
		needs         string // a program the attempt needs; skipped without it
		fails         bool   // the command itself must fail
		later         bool   // it acts after the call returned
	}{
		{name: "command substitution", command: "$(echo echo) pwn > %[1]s/target", fails: true},
		{name: "backticks", command: "`echo echo` pwn > %[1]s/target", fails: true},
		{name: "here-doc script", command: "cat > s.sh <<'EOF'\necho pwn > %[1]s/target\nEOF\nbash s.sh", fails: true},
		{name: "xargs", command: "echo %[1]s/target | xargs -I{} sh -c 'echo pwn > {}'", fails: true},
		{name: "find -exec", command: `find %[1]s -name target -exec sh -c 'echo pwn > "$1"' _ {} +`, fails: true},
		{name: "bash -c", command: "bash -c 'echo pwn > %[1]s/target'", fails: true},
		{name: "sh -c", command: "sh -c 'echo pwn > %[1]s/target'", fails: true},
		{name: "env -i", command: "env -i /bin/sh -c 'echo pwn > %[1]s/target'", fails: true},
		{name: "symlink to the folder, then write", command: "ln -s %[1]s out && echo pwn > out/target", fails: true},
		{name: "symlink to the file, then >", command: "ln -s %[1]s/target l && echo pwn > l", fails: true},
		{name: "new file through a symlink", command: "ln -s %[1]s/new l && echo pwn > l", fails: true},
		{name: "/proc/self/root", command: "echo pwn > /proc/self/root%[1]s/target", fails: true},
		// A hard link from outside into a writable root would gain the
		// root's rights: Landlock refuses it (EXDEV), so there is nothing
		// to write through.
		{name: "hard link in", command: "ln %[1]s/target hl 2>&1 | grep -q 'Invalid cross-device link' && ! test -e hl"},
		{name: "LD_PRELOAD", command: "echo garbage > x.so && LD_PRELOAD=$PWD/x.so sh -c 'echo pwn > %[1]s/target'", fails: true},
		{name: "PATH", command: "mkdir bin && printf '#!/bin/sh\\necho pwn > %[1]s/target\\n' > bin/ls && chmod +x bin/ls && PATH=$PWD/bin:$PATH ls", fails: true},
		{name: "setsid", command: "setsid -w sh -c 'echo pwn > %[1]s/target'", fails: true},
		{name: "nohup in the background", command: "nohup sh -c 'sleep 0.2; echo pwn > %[1]s/target' >/dev/null 2>&1 &", later: true},
		{name: "background job after the call", command: "(sleep 0.2; echo pwn > %[1]s/target; echo pwn > %[1]s/new) >/dev/null 2>&1 &", later: true},
		{name: "python3", command: "python3 -c 'open(\"%[1]s/target\", \"w\").write(\"pwn\")'", needs: "python3", fails: true},
		{name: "cp", command: "echo pwn > f && cp f %[1]s/target", fails: true},
		{name: "mv into the folder", command: "echo pwn > f && mv f %[1]s/target", fails: true},
		{name: "mv out of the folder", command: "mv %[1]s/target .", fails: true},
		{name: "rm", command: "rm -f %[1]s/target", fails: true},
		{name: "truncate", command: "truncate -s 0 %[1]s/target", fails: true},
		{name: "dd of=", command: "echo pwn | dd of=%[1]s/target", fails: true},
		{name: "tee", command: "echo pwn | tee %[1]s/target", fails: true},
		{name: "mount over it", command: "mount -t tmpfs none %[1]s", fails: true},
		{name: "bind mount", command: "mkdir m && mount --bind %[1]s m && echo pwn > m/target", fails: true},
		{name: "unshare", command: "unshare -r -m sh -c 'mount -t tmpfs none %[1]s && echo pwn > %[1]s/target'", fails: true},
		{name: "chroot", command: "chroot / sh -c 'echo pwn > %[1]s/target'", fails: true},
		// io_uring_setup (425 on amd64 and arm64) is refused: exit 0.
		{name: "io_uring via python", command: "python3 -c 'import ctypes,sys; r=ctypes.CDLL(None).syscall(425,8,ctypes.create_string_buffer(120)); sys.exit(0 if r<0 else 1)'", needs: "python3"},
		// The network.
		{name: "tcp with /dev/tcp", command: "exec 3<>/dev/tcp/127.0.0.1/%[2]d", fails: true},
		{name: "udp with /dev/udp", command: "echo x > /dev/udp/127.0.0.1/%[3]d", fails: true},
		{name: "curl", command: "curl -sS --max-time 5 http://127.0.0.1:%[2]d/", needs: "curl", fails: true},
		{name: "wget", command: "wget -q -T 5 -t 1 -O- http://127.0.0.1:%[2]d/", needs: "wget", fails: true},
		{name: "nc", command: "echo x | nc -w 2 127.0.0.1 %[2]d", needs: "nc", fails: true},
		{name: "nc udp", command: "echo x | nc -u -w 1 127.0.0.1 %[3]d", needs: "nc", fails: true},
		{name: "python3 udp", command: "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", %[3]d))'", needs: "python3", fails: true},
		{name: "python3 ipv6 socket", command: "python3 -c 'import socket; socket.socket(socket.AF_INET6)'", needs: "python3", fails: true},
		{name: "python3 raw socket", command: "python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'", needs: "python3", fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs != "" && !has(tc.needs) {
				t.Skip("no " + tc.needs)
			}
			t.Parallel()
			b := newBox(t)
			out, _ := outside(t)
			tcpPort, accepted := listenTCP(t)
			udpPort, received := listenUDP(t)
			command := tc.command
			if strings.Contains(command, "%[") {
				command = fmt.Sprintf(command, out, tcpPort, udpPort)
			}
			res := b.bash(t, command)
			if tc.fails {
				require.True(t, res.IsError, res.Content)
			} else if !tc.later {
				require.False(t, res.IsError, res.Content)
			}
			if tc.later {
				time.Sleep(600 * time.Millisecond)
			}
			requireUnchanged(t, out)
			time.Sleep(50 * time.Millisecond)
			require.Zero(t, accepted(), "a TCP connection got through")
			require.Zero(t, received(), "a UDP datagram got through")
		})
	}
}
