//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
)

// Issue 15's adversarial pass: the extensions, and so the model's bash,
// are kept apart from the user's terminal and from the sockets panto and
// the other extensions talk on, and a SIGKILLed panto leaves no socket
// folder behind for good. Each test runs the real binaries — as an
// unprivileged user when the tests run as root, as a user's panto runs —
// with the probes in testdata/ttyprobe and testdata/sockprobe as what a
// hostile command would run.

// isoSetup is a harness in a folder every user can enter, with panto,
// the tools and guard extensions and the probes in root/bin, guard
// installed in the user layer, and a TMPDIR of its own (short, for
// socket paths). Run as the user uid gives (0: this process's).
type isoSetup struct {
	h        *harness
	bin, tmp string
	uid      int
}

func newIsoSetup(t *testing.T) *isoSetup {
	t.Helper()
	root, err := os.MkdirTemp("", "pi-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.Chmod(root, 0o755))
	s := &isoSetup{h: newHarnessAt(t, root), bin: filepath.Join(root, "bin"), tmp: filepath.Join(root, "t")}
	for _, d := range []string{s.bin, s.tmp} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, name := range []string{"panto", "tools", "guard", "ttyprobe", "sockprobe"} {
		keysCopy(t, filepath.Join(pluginDir, name), filepath.Join(s.bin, name))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(s.h.userDir(), "extensions"), 0o755))
	keysCopy(t, filepath.Join(pluginDir, "guard"), filepath.Join(s.h.userDir(), "extensions", "guard"))
	s.h.env["TMPDIR"] = s.tmp
	if os.Geteuid() == 0 {
		// root could push input into any terminal it opens (TIOCSTI
		// needs no controlling terminal for CAP_SYS_ADMIN): run as a
		// user's panto runs.
		s.uid = 65534
		require.NoError(t, filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, s.uid, s.uid)
		}))
	}
	return s
}

// command is panto from root/bin with args, in the project, as s.uid.
func (s *isoSetup) command(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, "panto"), args...)
	cmd.Dir = s.h.project
	cmd.Env = s.h.environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if s.uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.uid)}
	}
	return cmd
}

// provider is an Anthropic fake answering script, and the flags that
// use it with the tools extension.
func (s *isoSetup) provider(t *testing.T, script ...reply) (*fakeProvider, []string) {
	fake := newFake(t, script...)
	s.h.env["ANTHROPIC_API_KEY"] = "k"
	return fake, []string{"--provider", "anthropic", "--model", "claude-test", "--base-url", fake.srv.URL, "--extension", filepath.Join(s.bin, "tools")}
}

// bashCall is a reply calling bash with command.
func bashCall(t *testing.T, id, command string) reply {
	in, err := json.Marshal(map[string]string{"command": command})
	require.NoError(t, err)
	return anthropicTools(toolCall{id, "bash", string(in)})
}

// ttyReport is what testdata/ttyprobe reports.
type ttyReport struct {
	PID          int    `json:"pid"`
	DevTTY       string `json:"dev_tty"`
	DevTTYWrite  string `json:"dev_tty_write"`
	DevTTYInject string `json:"dev_tty_inject"`
	PTS          string `json:"pts"`
	PTSInject    string `json:"pts_inject"`
	Setpgid      string `json:"setpgid"`
}

// requireNoTerminal requires that r reached the terminal by no route:
// /dev/tty does not open (the process has no controlling terminal), and
// the terminal opened by its path refuses TIOCSTI (not its controlling
// terminal).
func requireNoTerminal(t *testing.T, what string, r ttyReport) {
	t.Helper()
	require.Equal(t, "open /dev/tty: no such device or address", r.DevTTY, "%s: %+v", what, r)
	require.Equal(t, "ok", r.PTS, "%s: the terminal opens by its path (the same user's); only a sandbox stops that: %+v", what, r)
	require.Equal(t, "operation not permitted", r.PTSInject, "%s: %+v", what, r)
}

func readTTYReport(t *testing.T, path string) ttyReport {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			var r ttyReport
			require.NoError(t, json.Unmarshal(data, &r), "%s", data)
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The model's bash, in the full line loop under a terminal, with guard
// asking before rm: /dev/tty does not open, so nothing it writes there
// reaches the terminal (the title and text of the probe's Marker), and
// neither a background job pushing "yes" while guard's question is on
// the screen, nor a process that left its process group to outlive
// panto and types into the terminal once panto has exited, can push
// input into it (TIOCSTI). Before, the extensions shared panto's
// session and its controlling terminal: the job answered guard's
// question and rm ran, and the lurker typed a command into the user's
// shell.
func TestTheModelsBashHasNoTerminal(t *testing.T) {
	t.Parallel()
	s := newIsoSetup(t)
	// The probe reports outside the project: the terminal's isolation,
	// tested without the sandbox that would also refuse the report.
	s.h.write(filepath.Join(s.h.userDir(), "config.toml"), "[sandbox]\nmode = \"off\"\n")
	ptm, pts, err := pty.Open()
	require.NoError(t, err)
	defer ptm.Close()
	require.NoError(t, pty.Setsize(ptm, &pty.Winsize{Rows: 50, Cols: 200}))
	if s.uid != 0 {
		// The user's terminal is the user's: they can open it by path.
		require.NoError(t, os.Chown(pts.Name(), s.uid, s.uid))
	}
	victim := filepath.Join(s.h.project, "victim")
	s.h.write(filepath.Join(victim, "important"), "keep me\n")
	if s.uid != 0 {
		require.NoError(t, os.Lchown(victim, s.uid, s.uid))
	}
	probe := filepath.Join(s.bin, "ttyprobe")
	go1, res1 := filepath.Join(s.tmp, "go1"), filepath.Join(s.tmp, "res1")
	go2, res2 := filepath.Join(s.tmp, "go2"), filepath.Join(s.tmp, "res2")
	job := filepath.Join(s.tmp, "job.pid")
	first := fmt.Sprintf("%[1]s check %[2]s; (%[1]s inject %[3]s %[4]s %[2]s yes >/dev/null 2>&1 &); (%[1]s inject -setpgid %[5]s %[6]s %[2]s 'echo typed-by-the-lurker' >/dev/null 2>&1 &); (sh -c 'echo $$ > %[7]s; exec sleep 600' >/dev/null 2>&1 &)",
		probe, pts.Name(), go1, res1, go2, res2, job)
	fake, args := s.provider(t,
		bashCall(t, "b1", first),
		bashCall(t, "b2", "rm -rf "+victim),
		anthropicText("QZX-TURN-OVER"),
	)
	cmd := s.command(append([]string{"--plain", "--no-session"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty = true, true
	require.NoError(t, cmd.Start())
	pts.Close()
	var out syncBuffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, ptm); close(copied) }()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitOut := func(s string, n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for strings.Count(out.String(), s) < n {
			if time.Now().After(deadline) {
				t.Fatalf("no %q (×%d) in the output:\n%s", s, n, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	typeIn := func(s string) {
		t.Helper()
		_, err := ptm.WriteString(s)
		require.NoError(t, err)
	}

	waitOut("> ", 1)
	typeIn("go\r")
	waitOut("type yes to confirm", 1)
	// Past the question's grace (300 ms), when a typed yes would count.
	time.Sleep(600 * time.Millisecond)
	s.h.write(go1, "")
	r1 := readTTYReport(t, res1)
	time.Sleep(300 * time.Millisecond) // what it pushed, if anything, is read
	typeIn("no\r")
	waitOut("QZX-TURN-OVER", 1)
	waitOut("> ", 2)
	typeIn("\x04")
	require.Equal(t, 0, waitExit(t, cmd, 30*time.Second), out.String())
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	atExit := len(out.String())
	// In a session of its own, bash's process group still dies with
	// panto (the tools extension's reaper kills it).
	data, err := os.ReadFile(job)
	require.NoError(t, err)
	jobPID, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(jobPID, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(jobPID, syscall.SIGKILL)
			t.Fatalf("bash's background job %d outlived panto", jobPID)
		}
	}

	// After panto exited: the lurker tries.
	s.h.write(go2, "")
	r2 := readTTYReport(t, res2)
	if p, err := os.FindProcess(r2.PID); err == nil {
		p.Kill()
	}

	require.Equal(t, 3, fake.count(), out.String())
	results := lastResults(t, fake.request(t, 1).body)
	require.Len(t, results, 1)
	var check ttyReport
	line, _, _ := strings.Cut(results[0].text(), "\n")
	require.NoError(t, json.Unmarshal([]byte(line), &check), results[0].text())
	requireNoTerminal(t, "bash", check)
	requireNoTerminal(t, "a background job during guard's question", r1)
	requireNoTerminal(t, "a process outliving panto", r2)
	require.Equal(t, "ok", r2.Setpgid)

	require.DirExists(t, victim, "nothing answered guard's question but the user's no")
	results = lastResults(t, fake.request(t, 2).body)
	require.Len(t, results, 1)
	require.True(t, results[0].IsError, results[0].text())
	require.Contains(t, results[0].text(), "guard")
	raw := out.String()
	require.NotContains(t, raw, "QZX-TTY-PROBE", "what bash wrote to /dev/tty reached the terminal")
	require.Empty(t, strings.TrimSpace(raw[atExit:]), "nothing reached the terminal after panto exited")
}

// sockReport is what testdata/sockprobe reports.
type sockReport struct {
	Sockets []string          `json:"sockets"`
	Calls   map[string]string `json:"calls"`
	Through []string          `json:"through"`
}

// The model's bash finds every socket of panto's extensions (the
// extensions' own servers and the Host service panto serves each) and
// calls them: a system block recorded in an extension's name, a question
// to the user, a notice, a bash call through the tools extension. Every
// call is refused — only panto connects to an extension, only the
// extension to its Host service — and the session goes on. Before, the
// sockets had no authentication and every call went through.
func TestTheModelsBashCannotCallPantosSockets(t *testing.T) {
	t.Parallel()
	s := newIsoSetup(t)
	// panto's own check of who connects, under the sandbox that would
	// refuse the probe's unix sockets first (permissions_e2e_test.go).
	s.h.write(filepath.Join(s.h.userDir(), "config.toml"), "[sandbox]\nmode = \"off\"\n")
	through := filepath.Join(s.tmp, "through")
	fake, args := s.provider(t,
		bashCall(t, "b1", filepath.Join(s.bin, "sockprobe")+" "+s.tmp+" "+through),
		bashCall(t, "b2", "echo QZX-STILL-WORKS"),
		anthropicText("over"),
	)
	cmd := s.command(append([]string{"-p", "probe"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, 3, fake.count(), "%s", out)
	results := lastResults(t, fake.request(t, 1).body)
	require.Len(t, results, 1)
	text := results[0].text()
	var r sockReport
	line, _, _ := strings.Cut(text, "\n")
	require.NoError(t, json.Unmarshal([]byte(line), &r), text)
	// Two extensions, each with its own server's socket and its Host
	// service's.
	require.GreaterOrEqual(t, len(r.Sockets), 4, "the probe found the sockets: %s", text)
	require.Empty(t, r.Through, "calls that went through: %s", text)
	require.Len(t, r.Calls, 4*len(r.Sockets), text)
	for call, res := range r.Calls {
		// Refused before gRPC read a byte: not an answer of a service.
		require.Contains(t, res, "code = Unavailable", "%s: %s", call, text)
	}
	require.NoFileExists(t, through, "a bash call through the tools extension ran")

	results = lastResults(t, fake.request(t, 2).body)
	require.Len(t, results, 1)
	require.Contains(t, results[0].text(), "QZX-STILL-WORKS", "the tools extension still works")
	require.NotContains(t, string(out), "QZX-SPOOFED")
	for _, f := range s.h.sessionFiles() {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NotContains(t, string(data), "QZX-SPOOFED", "a spoofed block was recorded")
	}
	log, err := os.ReadFile(filepath.Join(s.h.home, "state", "panto", "panto.log"))
	require.NoError(t, err)
	require.Contains(t, string(log), "refused a connection", "the refusals are logged")
}

// A SIGKILLed panto cannot remove its extensions' socket folders; the
// next panto removes them. Before, go-plugin's /tmp/plugin-dir* of every
// SIGKILLed panto stayed for good.
func TestSocketFoldersOfASigkilledPantoAreRemoved(t *testing.T) {
	t.Parallel()
	s := newIsoSetup(t)
	_, args := s.provider(t, bashCall(t, "b1", "echo QZX-STARTED; sleep 60"), anthropicText("never"))
	cmd := s.command(append([]string{"-p", "go"}, args...)...)
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "→ bash") {
		if time.Now().After(deadline) {
			t.Fatalf("no bash call: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	sockets := func() []string {
		var out []string
		filepath.Walk(s.tmp, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode()&os.ModeSocket != 0 {
				out = append(out, p)
			}
			return nil
		})
		return out
	}
	require.NotEmpty(t, sockets(), "the extensions' sockets are in TMPDIR")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	entries, err := os.ReadDir(s.tmp)
	require.NoError(t, err)
	require.NotEmpty(t, entries, "SIGKILL leaves the folders")

	s.h.env["ANTHROPIC_API_KEY"] = ""
	next := s.command("-p", "hi", "--provider", "echo", "--no-session", "--extension", filepath.Join(s.bin, "tools"))
	out, err := next.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var left []string
	filepath.Walk(s.tmp, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != s.tmp {
			left = append(left, strings.TrimPrefix(p, s.tmp+"/"))
		}
		return nil
	})
	require.Equal(t, []string{fmt.Sprintf("panto-%d", s.effectiveUID())}, left, "the next panto removed the leftovers, and its own folder as it exited")
}

func (s *isoSetup) effectiveUID() int {
	if s.uid != 0 {
		return s.uid
	}
	return os.Getuid()
}
