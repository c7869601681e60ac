package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/internal/testio"
	"github.com/panto-dev/panto/sessionlog"
)

// Files panto writes on disk (issue 15, item 7 and the summary and fork
// parts of item 10): session export -o and session fork -o never replace
// what is not theirs to replace, never wait on a FIFO, and leave no
// temporary file behind, after a signal or a kill included.

// sfilesRun runs panto like h.run, but kills it after limit: a panto
// that waits on a FIFO fails the test instead of hanging it.
func sfilesRun(t *testing.T, h *harness, limit time.Duration, args ...string) result {
	t.Helper()
	cmd := h.command("", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	var killed atomic.Bool
	timer := time.AfterFunc(limit, func() {
		killed.Store(true)
		cmd.Process.Kill()
	})
	err := cmd.Wait()
	timer.Stop()
	if killed.Load() {
		t.Fatalf("panto %v did not finish within %s (waiting on something?)\nstderr: %s", args, limit, errb.String())
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{out.String(), errb.String(), code}
}

// sfilesSnap is what a target was before panto was pointed at it.
type sfilesSnap struct {
	mode    os.FileMode
	info    os.FileInfo
	content string // of a regular file
}

func sfilesSnapshot(t *testing.T, path string) sfilesSnap {
	t.Helper()
	st, err := os.Lstat(path)
	require.NoError(t, err)
	s := sfilesSnap{mode: st.Mode(), info: st}
	if st.Mode().IsRegular() {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		s.content = string(b)
	}
	return s
}

// sfilesUnchanged requires path to be the file it was: same inode, type
// and content.
func sfilesUnchanged(t *testing.T, path string, was sfilesSnap) {
	t.Helper()
	st, err := os.Lstat(path)
	require.NoError(t, err, "%s is gone", path)
	require.Equal(t, was.mode.Type(), st.Mode().Type(), "%s changed type", path)
	require.True(t, os.SameFile(was.info, st), "%s was replaced", path)
	if st.Mode().IsRegular() {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, was.content, string(b), "%s changed", path)
	}
}

// sfilesHidden returns the names of dir starting with a dot: where a
// temporary file would be.
func sfilesHidden(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// sfilesSessionDir is the sessions folder of h's project.
func sfilesSessionDir(h *harness) string {
	return filepath.Join(h.home, "data", "panto", "sessions", layers.EncodePath(h.project))
}

// Every -o target that is not a plain regular file of the user's, or a
// new one, is refused, by export and fork alike, and left as it was: a
// FIFO (not waited on), a device, a socket, a running session's lock
// file, a file in the sessions folder, a log of a newer panto, a log torn
// while it was created. A directory that does not exist is refused, not
// made. A plain file is replaced by an export (a fork writes only new
// files).
func TestSessionFilesOutputTargets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "the first question", "--provider", "echo")
	h.ok("session", "list") // writes the summary sidecar beside the log
	logs := h.sessionFiles()
	require.Len(t, logs, 1)
	log := logs[0]

	dir := filepath.Join(h.root, "out")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	targets := map[string]string{} // name: path
	add := func(name, path string) { targets[name] = path }

	fifo := filepath.Join(dir, "fifo.html")
	testio.Mkfifo(t, fifo, 0o644)
	add("a FIFO", fifo)
	// A device node: a copy of /dev/full (char 1:7), as root.
	dev := filepath.Join(dir, "full.html")
	if err := mknodFull(dev); err == nil {
		add("a device", dev)
	} else {
		t.Logf("no device target (mknod: %v; the tests run as root in CI)", err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	add("a socket", sock)
	// A running session's lock: this test holds the writer.
	w, _, err := sessionlog.Open(log)
	require.NoError(t, err)
	add("a running session's .lock", log+".lock")
	add("a file in the sessions folder", log+".summary")
	newer := filepath.Join(dir, "newer.jsonl")
	h.write(newer, `{"type":"session","version":99,"id":"n1","created":"2030-01-01T00:00:00Z","cwd":"/p","novel":true}`+"\n"+`{"type":"hologram","id":"x"}`+"\n")
	add("a newer panto's log", newer)
	torn := filepath.Join(dir, "torn.jsonl")
	h.write(torn, `{"type":"session","version":1,"id":"t1","crea`)
	add("a log torn while it was created", torn)
	add("the log itself", log)

	snaps := map[string]sfilesSnap{}
	for name, p := range targets {
		snaps[name] = sfilesSnapshot(t, p)
	}
	for name, p := range targets {
		for _, args := range [][]string{
			{"session", "export", "--format", "md", "-o", p},
			{"session", "fork", log, "-o", p},
		} {
			r := sfilesRun(t, h, 20*time.Second, args...)
			require.Equal(t, 1, r.code, "%s: %v\n%s%s", name, args, r.stdout, r.stderr)
			require.Contains(t, r.stderr, "-o "+p, name)
			sfilesUnchanged(t, p, snaps[name])
		}
	}
	require.Empty(t, sfilesHidden(t, dir), "a temporary file is left")
	require.Empty(t, sfilesHidden(t, sfilesSessionDir(h)), "a temporary file is left")

	// The lock still holds: a second panto cannot write the session.
	r := h.run("", "--session", log, "-p", "a second writer", "--provider", "echo")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "open for writing by pid")
	require.NoError(t, w.Close())

	// The messages say what is wrong.
	r = sfilesRun(t, h, 20*time.Second, "session", "export", "-o", fifo)
	require.Contains(t, r.stderr, "panto: session export: -o "+fifo+" is a named pipe (FIFO): write the export to a regular file")
	r = sfilesRun(t, h, 20*time.Second, "session", "export", "-o", newer)
	require.Contains(t, r.stderr, "is a session log: write the export elsewhere")
	r = sfilesRun(t, h, 20*time.Second, "session", "fork", log, "-o", torn)
	require.Contains(t, r.stderr, "a file is already there; a fork is a new file")

	// A directory that does not exist: refused as --session refuses it,
	// and not made.
	missing := filepath.Join(h.root, "nope", "deeper")
	for _, args := range [][]string{
		{"session", "export", "-o", filepath.Join(missing, "x.html")},
		{"session", "fork", log, "-o", filepath.Join(missing, "x.jsonl")},
	} {
		r := sfilesRun(t, h, 20*time.Second, args...)
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, ": directory "+missing+" does not exist", args)
		require.NoDirExists(t, filepath.Join(h.root, "nope"))
	}

	// A plain file of the user's is replaced by an export, whole; a new
	// one is made; a fork makes a new log there, and -c is not confused.
	plain := filepath.Join(dir, "notes.html")
	h.write(plain, "my notes")
	h.ok("session", "export", "-o", plain)
	require.Contains(t, string(mustRead(t, plain)), "the first question")
	forked := filepath.Join(dir, "fork.jsonl")
	h.ok("session", "fork", log, "-o", forked)
	fh, err := sessionlog.ReadHeader(forked)
	require.NoError(t, err)
	require.NotEmpty(t, fh.ParentSession)
	require.Empty(t, sfilesHidden(t, dir), "a temporary file is left")
}

// A signal while a large session is exported: panto stops, the
// temporary file is gone (and nothing was written at -o).
func TestSessionFilesExportSignal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 120 MB session")
	}
	h := newHarness(t)
	writeBigLog(t, h, 120<<20)
	out := filepath.Join(h.root, "out")
	require.NoError(t, os.MkdirAll(out, 0o755))
	dst := filepath.Join(out, "big.html")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := h.command("", "session", "export", "--all", "-o", dst)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		require.NoError(t, cmd.Start())
		if !sfilesAwait(func() bool { return len(sfilesHidden(t, out)) > 0 }, cmd, 60*time.Second) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no temporary file appeared in %s\nstderr: %s", out, errb.String())
		}
		require.NoError(t, cmd.Process.Signal(sig))
		err := cmd.Wait()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "panto finished the export despite %v", sig)
		require.Equal(t, 128+int(sig), exit.ExitCode(), errb.String())
		require.Empty(t, sfilesHidden(t, out), "the temporary file survived %v", sig)
		require.NoFileExists(t, dst)
	}
}

// sfilesAwait polls cond until it holds (true), cmd exits or limit passes
// (false).
func sfilesAwait(cond func() bool, cmd *exec.Cmd, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		if cmd.ProcessState != nil {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// A fork killed with SIGKILL midway leaves no log that -c (or a listing)
// takes up: what it leaves is a hidden temporary file, which a later
// listing removes once it is stale.
func TestSessionFilesForkKilled(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 120 MB session")
	}
	h := newHarness(t)
	src := writeBigLog(t, h, 120<<20)
	dir := filepath.Dir(src)
	before := map[string]bool{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		before[e.Name()] = true
	}
	cmd := h.command("", "session", "fork", src)
	var outb, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	require.NoError(t, cmd.Start())
	appeared := func() bool {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !before[e.Name()] && !strings.HasSuffix(e.Name(), ".lock") {
				return true
			}
		}
		return false
	}
	if !sfilesAwait(appeared, cmd, 60*time.Second) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the fork made no file\nstdout: %s\nstderr: %s", outb.String(), errb.String())
	}
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	if strings.Contains(outb.String(), "forked") {
		t.Skip("the fork finished before the kill")
	}

	require.Equal(t, []string{src}, h.sessionFiles(), "the killed fork left a session log")
	r := h.ok("-c", "-p", "/session", "--provider", "echo", "--no-extensions")
	require.Contains(t, r.stdout, "log "+src+"\n", "-c did not continue the session\n%s", r.stderr)

	// A listing removes what the kill left, once it is stale.
	hidden := sfilesHidden(t, dir)
	old := time.Now().Add(-2 * time.Hour)
	for _, name := range hidden {
		require.NoError(t, os.Chtimes(filepath.Join(dir, name), old, old))
	}
	h.ok("session", "list")
	for _, name := range hidden {
		require.NoFileExists(t, filepath.Join(dir, name), "a listing keeps the killed fork's temporary file")
	}
}

// A header-only log, as an older panto's killed fork left it, is not
// continued by -c: it is skipped with a warning naming it, and the
// session before it continues.
func TestSessionFilesContinueSkipsHeaderOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "the real session", "--provider", "echo", "--no-extensions")
	real := h.sessionFiles()[0]
	empty := filepath.Join(filepath.Dir(real), "20990101T000000Z_e0e0e0e0-0000-4000-8000-000000000000.jsonl")
	header := `{"type":"session","version":1,"id":"e0e0e0e0-0000-4000-8000-000000000000","created":"2099-01-01T00:00:00Z","cwd":` +
		sfilesJSON(h.project) + `,"parent_session":"x","parent_entry":"y"}` + "\n"
	h.write(empty, header)
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(empty, future, future))

	r := h.ok("-c", "-p", "go on", "--provider", "echo", "--no-extensions")
	require.Contains(t, r.stderr, "panto: warning: --continue skips "+empty+": it holds only its header")
	require.Contains(t, string(mustRead(t, real)), "go on")
	require.Equal(t, header, string(mustRead(t, empty)), "the header-only log was written")

	// panto session tree (this directory's latest) skips it too.
	r = h.ok("session", "tree")
	require.Contains(t, r.stdout, "the real session")
	require.Contains(t, r.stderr, "skipping "+empty)
}

func sfilesJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A first message of megabytes: session list shows the start of it, and
// the summary cached beside the log holds a few hundred bytes of it, not
// all. A sidecar an older panto wrote with the whole message is replaced
// by a small one.
func TestSessionFilesSummaryExcerpt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	big := "START " + strings.Repeat("sehr lange Nachricht – ", 5<<20/25) + " END"
	prompt := filepath.Join(h.root, "prompt.txt")
	h.write(prompt, big)
	r := h.run(string(mustRead(t, prompt)), "--provider", "echo", "--no-extensions")
	require.Equal(t, 0, r.code, r.stderr)
	log := h.sessionFiles()[0]

	list := h.ok("session", "list").stdout
	require.Contains(t, list, "START sehr lange Nachricht")
	side := log + ".summary"
	st, err := os.Stat(side)
	require.NoError(t, err)
	require.Less(t, st.Size(), int64(4<<10), "the summary holds the whole first message")
	var sf struct {
		First string `json:"first_user_text"`
	}
	require.NoError(t, json.Unmarshal(mustRead(t, side), &sf))
	require.True(t, strings.HasPrefix(big, strings.TrimSuffix(sf.First, "…")))
	require.LessOrEqual(t, len(sf.First), sessionlog.MaxFirstText)

	// An older panto's sidecar (format 1) with the whole message.
	lst, err := os.Stat(log)
	require.NoError(t, err)
	old, err := json.Marshal(map[string]any{"format": 1, "size": lst.Size(), "mtime_ns": lst.ModTime().UnixNano(),
		"session":  json.RawMessage(strings.SplitN(string(mustRead(t, log)), "\n", 2)[0]),
		"messages": 3, "branches": 1, "entries": 5, "first_user_text": "OLD " + big})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(side, old, 0o600))
	list = h.ok("session", "list").stdout
	require.Contains(t, list, "START sehr lange Nachricht")
	require.NotContains(t, list, "OLD START", "the old sidecar was believed")
	st, err = os.Stat(side)
	require.NoError(t, err)
	require.Less(t, st.Size(), int64(4<<10), "the old sidecar was kept")
}

// A listing removes the temporary files a killed panto left in the
// sessions folder — its own names only, once stale — and nothing else.
func TestSessionFilesListRemovesStaleTemps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "hi", "--provider", "echo", "--no-extensions")
	dir := sfilesSessionDir(h)
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]bool{ // name: removed
		".20260101T000000Z_x.jsonl.0123456789ab.panto-tmp":         true, // a fork's, killed
		".20260101T000000Z_x.jsonl.summary.abcdefabcdef.panto-tmp": true, // a summary's
		".20260101T000000Z_x.jsonl.summary-0123456789ab":           true, // a summary's, by an older panto
		".notes": false,
		"20260101T000000Z_x.jsonl.summary-0123456789ab": false,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		h.write(p, "x")
		require.NoError(t, os.Chtimes(p, old, old))
	}
	young := filepath.Join(dir, ".20260101T000000Z_y.jsonl.0123456789ab.panto-tmp")
	h.write(young, "being written")
	h.ok("session", "list")
	for name, removed := range files {
		_, err := os.Lstat(filepath.Join(dir, name))
		require.Equal(t, removed, errors.Is(err, os.ErrNotExist), name)
	}
	require.FileExists(t, young)
}
