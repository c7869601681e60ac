package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// in runs panto in dir instead of the harness's project directory.
func (h *harness) in(dir string, stdin string, args ...string) result {
	h.t.Helper()
	require.NoError(h.t, os.MkdirAll(dir, 0o755))
	saved := h.project
	h.project = dir
	defer func() { h.project = saved }()
	return h.run(stdin, args...)
}

// okIn is in that requires exit status 0.
func (h *harness) okIn(dir string, args ...string) result {
	h.t.Helper()
	r := h.in(dir, "", args...)
	require.Equal(h.t, 0, r.code, "panto %v in %s\nstdout: %s\nstderr: %s", args, dir, r.stdout, r.stderr)
	return r
}

// /w/a/b and /w/a-b encode to the same sessions folder; each directory
// still sees only its own sessions.
func TestSessionsOfDirectoriesSharingAFolder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ab := filepath.Join(h.root, "w", "a", "b")
	aDashB := filepath.Join(h.root, "w", "a-b")

	h.okIn(ab, "-p", "from a/b", "--provider", "echo")
	require.Len(t, h.sessionFiles(), 1)
	abLog := h.sessionFiles()[0]

	require.Contains(t, h.okIn(aDashB, "session", "list").stdout, "no sessions in "+aDashB)
	r := h.in(aDashB, "", "-p", "again", "--provider", "echo", "-c")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "no session to continue")
	require.Equal(t, 1, h.in(aDashB, "", "prompt", "-c").code)

	// A session of a-b, newer than a/b's, in the same folder.
	h.okIn(aDashB, "-p", "from a-b", "--provider", "echo")
	files := h.sessionFiles()
	require.Len(t, files, 2)
	require.Equal(t, filepath.Dir(files[0]), filepath.Dir(files[1]), "the two directories share a folder")
	dashLog := files[0]
	if dashLog == abLog {
		dashLog = files[1]
	}

	list := h.okIn(aDashB, "session", "list").stdout
	require.Contains(t, list, "from a-b")
	require.NotContains(t, list, "from a/b")
	list = h.okIn(ab, "session", "list").stdout
	require.Contains(t, list, "from a/b")
	require.NotContains(t, list, "from a-b")

	// -c in a/b continues a/b's session, though a-b's is newer.
	h.okIn(ab, "-p", "second in a/b", "--provider", "echo", "-c")
	data, err := os.ReadFile(abLog)
	require.NoError(t, err)
	require.Contains(t, string(data), "second in a/b")
	data, err = os.ReadFile(dashLog)
	require.NoError(t, err)
	require.NotContains(t, string(data), "second in a/b")

	// --resume ID prefers this directory's sessions: a prefix that both
	// ids share is not ambiguous in a-b.
	dir := filepath.Dir(abLog)
	h.write(filepath.Join(dir, "20200101T000000Z_feed0001-0000-4000-8000-000000000000.jsonl"), header("feed0001-0000-4000-8000-000000000000", ab))
	h.write(filepath.Join(dir, "20200101T000000Z_feed0002-0000-4000-8000-000000000000.jsonl"), header("feed0002-0000-4000-8000-000000000000", aDashB))
	r = h.okIn(aDashB, "prompt", "--resume", "feed000", "--json")
	require.Contains(t, r.stdout, `"blocks"`)
	r = h.in(h.project, "", "prompt", "--resume", "feed000")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "2 sessions match")
}

// header is the first line of a session log of cwd.
func header(id, cwd string) string {
	q, _ := json.Marshal(cwd)
	return `{"type":"session","version":1,"id":"` + id + `","created":"2020-01-01T00:00:00Z","cwd":` + string(q) + "}\n"
}

// A crash while a session was created leaves a log with a torn header; -c
// skips it with a warning and continues the newest readable session, and
// session list marks it without hiding the others. The file is left as is.
func TestContinueSkipsATornHeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "first", "--provider", "echo")
	require.Len(t, h.sessionFiles(), 1)
	good := h.sessionFiles()[0]

	const torn = `{"type":"session","vers`
	bad := filepath.Join(filepath.Dir(good), "29990101T000000Z_0badc0de-0000-4000-8000-000000000000.jsonl")
	h.write(bad, torn)
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(bad, later, later))

	r := h.ok("-p", "second", "--provider", "echo", "-c")
	require.Contains(t, r.stderr, "warning: --continue skips an unreadable log: session log "+bad)
	require.Equal(t, 1, strings.Count(r.stderr, bad), r.stderr)
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	require.Contains(t, string(data), "second")
	data, err = os.ReadFile(bad)
	require.NoError(t, err)
	require.Equal(t, torn, string(data))

	r = h.ok("prompt", "-c")
	require.Contains(t, r.stderr, "skips an unreadable log")

	list := strings.Split(strings.TrimSpace(h.ok("session", "list").stdout), "\n")
	require.Len(t, list, 3, list)
	require.Contains(t, list[1], "0badc0de-0000-4000-8000-000000000000")
	require.Contains(t, list[1], "(unreadable: missing or garbled header (line 1)")
	require.Contains(t, list[2], "first")

	// Only the torn log: nothing to continue, and still nothing touched.
	h2 := newHarness(t)
	bad2 := filepath.Join(h2.home, "data", "panto", "sessions", layers.EncodePath(h2.project), "20260101T000000Z_0badc0de-0000-4000-8000-000000000000.jsonl")
	h2.write(bad2, torn)
	r = h2.run("", "-p", "hi", "--provider", "echo", "-c")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "skips an unreadable log")
	require.Contains(t, r.stderr, "no readable session to continue")
	data, err = os.ReadFile(bad2)
	require.NoError(t, err)
	require.Equal(t, torn, string(data))
}
