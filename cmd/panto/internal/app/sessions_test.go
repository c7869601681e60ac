package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testio"
	"github.com/panto-dev/panto/sessionlog"
)

// testDirs are the directories of a run in a test's own folder: HOME and
// the XDG variables under it, the working directory a project in it.
func testDirs(t *testing.T) layers.Dirs {
	t.Helper()
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	require.NoError(t, os.MkdirAll(cwd, 0o755))
	env := map[string]string{
		"HOME":            filepath.Join(root, "home"),
		"XDG_DATA_HOME":   filepath.Join(root, "data"),
		"XDG_CONFIG_HOME": filepath.Join(root, "config"),
		"XDG_STATE_HOME":  filepath.Join(root, "state"),
	}
	d, err := layers.Resolve(func(k string) string { return env[k] }, cwd)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "data", "panto", "sessions"), d.Sessions)
	return d
}

// epoch is when the test sessions were last written, give or take their
// age: file times in the past, set apart by whole minutes, so their
// order is the test's, not the clock's.
var epoch = time.Now().Add(-24 * time.Hour).Truncate(time.Second)

// writeSession writes the log of session id, started in cwd, in cwd's
// folder of d's sessions, holding msgs, last changed age before epoch.
func writeSession(t *testing.T, d layers.Dirs, cwd, id string, age time.Duration, msgs ...conversation.Message) string {
	t.Helper()
	path := newSessionPath(filepath.Join(d.Sessions, layers.EncodePath(cwd)), id, epoch.Add(-age))
	w, err := sessionlog.Create(path, sessionlog.Header{ID: id, Cwd: cwd})
	require.NoError(t, err)
	for _, m := range msgs {
		_, err := w.Append(sessionlog.MessageEntry(m))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	setAge(t, path, age)
	return path
}

// writeFile writes a file named like a session log of session id in the
// working directory's sessions folder, with content data.
func writeFile(t *testing.T, d layers.Dirs, id string, age time.Duration, data string) string {
	t.Helper()
	path := newSessionPath(d.SessionDir(), id, epoch.Add(-age))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	setAge(t, path, age)
	return path
}

func setAge(t *testing.T, path string, age time.Duration) {
	t.Helper()
	at := epoch.Add(-age)
	require.NoError(t, os.Chtimes(path, at, at))
}

// warnings collects what a store warns of.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) warn(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, s)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

func assistant(text string) conversation.Message { return conversation.AssistantText(text) }

// A new session's log is named in the working directory's folder of the
// sessions folder, by its UTC start time and a fresh id; nothing is
// written yet. Each call names another.
func TestPickNew(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	s := NewStore(d, nil)
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	path, id, err := s.Pick(Pick{}, now)
	require.NoError(t, err)
	require.NotEmpty(t, id)
	require.Equal(t, filepath.Join(d.SessionDir(), "20260304T040607Z_"+id+".jsonl"), path)
	require.True(t, strings.HasPrefix(path, d.Sessions+string(filepath.Separator)))
	require.NoFileExists(t, path)

	path2, id2, err := s.Pick(Pick{}, now)
	require.NoError(t, err)
	require.NotEqual(t, id, id2)
	require.NotEqual(t, path, path2)

	// From is not checked here: a new log is still new.
	path3, id3, err := s.Pick(Pick{From: "abc"}, now)
	require.NoError(t, err)
	require.NotEmpty(t, id3)
	require.Equal(t, d.SessionDir(), filepath.Dir(path3))
}

// --no-session records nothing: no path, no id, whatever the folder holds.
func TestPickNoSession(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	writeSession(t, d, d.CWD, "11111111-0000-4000-8000-000000000000", 0, typedMessage("hi"))
	path, id, err := NewStore(d, nil).Pick(Pick{NoSession: true}, time.Now())
	require.NoError(t, err)
	require.Empty(t, path)
	require.Empty(t, id)
}

// At most one of --session, -c, --resume and --no-session: two are a
// usage error, naming the flags.
func TestPickExclusive(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	s := NewStore(d, nil)
	for _, p := range []Pick{
		{Session: filepath.Join(d.CWD, "s.jsonl"), Continue: true},
		{Continue: true, Resume: "ab"},
		{Resume: "ab", NoSession: true},
		{Session: filepath.Join(d.CWD, "s.jsonl"), NoSession: true},
	} {
		_, _, err := s.Pick(p, time.Now())
		require.ErrorIsf(t, err, ErrUsage, "%+v", p)
		require.Contains(t, err.Error(), "exclude each other")
	}
}

// --session FILE is that file, new or not, when its directory exists and
// what is there is a regular file; no id is made for it (the log has
// one, or the start makes one).
func TestPickSession(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	s := NewStore(d, nil)
	existing := writeSession(t, d, d.CWD, "22222222-0000-4000-8000-000000000000", 0, typedMessage("hi"))
	path, id, err := s.Pick(Pick{Session: existing}, time.Now())
	require.NoError(t, err)
	require.Equal(t, existing, path)
	require.Empty(t, id)

	fresh := filepath.Join(d.CWD, "mine.jsonl")
	path, id, err = s.Pick(Pick{Session: fresh}, time.Now())
	require.NoError(t, err)
	require.Equal(t, fresh, path)
	require.Empty(t, id)
	require.NoFileExists(t, fresh, "nothing is written yet")

	missing := filepath.Join(d.CWD, "no-such-dir", "s.jsonl")
	_, _, err = s.Pick(Pick{Session: missing}, time.Now())
	require.ErrorContains(t, err, "--session "+missing+": directory "+filepath.Dir(missing)+" does not exist")
	require.NoDirExists(t, filepath.Dir(missing), "the directory is not made")

	_, _, err = s.Pick(Pick{Session: d.CWD}, time.Now())
	require.ErrorContains(t, err, "a directory, want a session log file")

	fifo := filepath.Join(d.CWD, "fifo.jsonl")
	testio.Mkfifo(t, fifo, 0o600)
	_, _, err = s.Pick(Pick{Session: fifo}, time.Now())
	require.ErrorContains(t, err, "want a session log file")
}

// -c continues the working directory's latest session that can be
// continued: a newer log whose header cannot be read and a newer one
// holding only its header are passed over, each warned of, and left
// alone; a newer session of another directory sharing the folder is
// not this directory's.
func TestPickContinue(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	w := &warnings{}
	s := NewStore(d, w.warn)
	writeSession(t, d, d.CWD, "33333333-0000-4000-8000-000000000001", 3*time.Minute, typedMessage("oldest"))
	want := writeSession(t, d, d.CWD, "33333333-0000-4000-8000-000000000002", 2*time.Minute, typedMessage("latest"), assistant("ok"))
	headerOnly := writeSession(t, d, d.CWD, "33333333-0000-4000-8000-000000000003", time.Minute)
	garbled := writeFile(t, d, "33333333-0000-4000-8000-000000000004", 0, "this is not a session log\nnor is this line\n")
	// Distinct directories can share a folder (layers.EncodePath): the
	// newest log there, written just now, is another directory's.
	theirs := newSessionPath(d.SessionDir(), "33333333-0000-4000-8000-000000000005", time.Now())
	wr, err := sessionlog.Create(theirs, sessionlog.Header{ID: "33333333-0000-4000-8000-000000000005", Cwd: d.CWD + "-other"})
	require.NoError(t, err)
	_, err = wr.Append(sessionlog.MessageEntry(typedMessage("another directory's")))
	require.NoError(t, err)
	require.NoError(t, wr.Close())
	before, err := os.ReadFile(garbled)
	require.NoError(t, err)

	path, id, err := s.Pick(Pick{Continue: true}, time.Now())
	require.NoError(t, err)
	require.Equal(t, want, path)
	require.Empty(t, id)

	warned := w.all()
	require.Len(t, warned, 2, "%q", warned)
	require.Contains(t, strings.Join(warned, "\n"), "--continue skips "+headerOnly+": it holds only its header")
	require.Contains(t, strings.Join(warned, "\n"), "--continue skips an unreadable log")
	require.Contains(t, strings.Join(warned, "\n"), garbled)
	after, err := os.ReadFile(garbled)
	require.NoError(t, err)
	require.Equal(t, before, after, "a log passed over is left alone")
	require.FileExists(t, headerOnly)
}

// -c with nothing to continue says so: none at all, or none readable.
func TestPickContinueNone(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	_, _, err := NewStore(d, nil).Pick(Pick{Continue: true}, time.Now())
	require.ErrorContains(t, err, "--continue: no session to continue in "+d.CWD)

	writeSession(t, d, d.CWD, "44444444-0000-4000-8000-000000000001", 0)
	writeFile(t, d, "44444444-0000-4000-8000-000000000002", time.Minute, "{\"type\":\"sess")
	_, _, err = NewStore(d, nil).Pick(Pick{Continue: true}, time.Now())
	require.ErrorContains(t, err, "--continue: no readable session to continue in "+d.CWD)
}

// --resume takes a session's id or a unique prefix of one: the working
// directory's sessions first, then every directory's. An ambiguous
// prefix lists the logs it starts; an unknown one is named.
func TestPickResume(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	s := NewStore(d, nil)
	a := writeSession(t, d, d.CWD, "3fa20000-0000-4000-8000-000000000001", time.Minute, typedMessage("a"))
	b := writeSession(t, d, d.CWD, "3fa29999-0000-4000-8000-000000000002", 0, typedMessage("b"))
	elsewhere := filepath.Join(filepath.Dir(d.CWD), "elsewhere")
	c := writeSession(t, d, elsewhere, "9c000000-0000-4000-8000-000000000003", 0, typedMessage("c"))
	// The same prefix elsewhere does not make one here ambiguous.
	writeSession(t, d, elsewhere, "3fa20000-1111-4000-8000-000000000004", 0, typedMessage("d"))

	for ref, want := range map[string]string{
		"3fa20000-0000-4000-8000-000000000001": a,
		"3fa20":                                a,
		"3fa29":                                b,
		"9c":                                   c,
	} {
		path, id, err := s.Pick(Pick{Resume: ref}, time.Now())
		require.NoErrorf(t, err, "--resume %s", ref)
		require.Equalf(t, want, path, "--resume %s", ref)
		require.Empty(t, id)
	}

	_, _, err := s.Pick(Pick{Resume: "3fa2"}, time.Now())
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "--resume 3fa2: 2 sessions match; give more of the id"), err.Error())
	require.Contains(t, err.Error(), a)
	require.Contains(t, err.Error(), b)

	_, _, err = s.Pick(Pick{Resume: "ffff"}, time.Now())
	require.EqualError(t, err, "--resume ffff: no session with that id (see panto session list)")
	require.False(t, errors.Is(err, ErrUsage))
}

// The list of the working directory's sessions is newest first; each
// item's First is what the user typed first, not the USER_PROMPT.md text
// panto put before it; a log that cannot be read keeps its item, with
// Err set and its id from the file name; another directory's session
// sharing the folder, and a FIFO named like a log, are not listed (the
// FIFO is warned of).
func TestList(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	w := &warnings{}
	s := NewStore(d, w.warn)
	oldest := writeSession(t, d, d.CWD, "55555555-0000-4000-8000-000000000001", 4*time.Minute,
		conversation.SystemMessage("seed", conversation.ModeAppend),
		typedMessage("fix the lexer bug"), assistant("done"), typedMessage("and the parser"))
	garbled := writeFile(t, d, "55555555-0000-4000-8000-000000000002", 3*time.Minute, "not a log\n")
	// A readable header, then a line no reader takes, then an entry.
	torn := writeSession(t, d, d.CWD, "55555555-0000-4000-8000-000000000003", 0, typedMessage("x"))
	f, err := os.OpenFile(torn, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"type\":\"message\",\"id\":\n{\"type\":\"label\"}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	setAge(t, torn, 2*time.Minute)
	headerOnly := writeSession(t, d, d.CWD, "55555555-0000-4000-8000-000000000004", time.Minute)
	newest := writeSession(t, d, d.CWD, "55555555-0000-4000-8000-000000000005", 0,
		typedMessage("newest"), assistant("ok"))
	fifo := filepath.Join(d.SessionDir(), "fifo.jsonl")
	testio.Mkfifo(t, fifo, 0o600)
	writeSession(t, d, filepath.Join(filepath.Dir(d.CWD), "elsewhere"), "55555555-0000-4000-8000-000000000006", 0, typedMessage("elsewhere"))

	items, err := s.List()
	require.NoError(t, err)
	var paths []string
	for _, it := range items {
		paths = append(paths, it.Path)
	}
	require.Equal(t, []string{newest, headerOnly, torn, garbled, oldest}, paths, "newest first")

	require.NoError(t, items[0].Err)
	require.Equal(t, "55555555-0000-4000-8000-000000000005", items[0].ID)
	require.Equal(t, "newest", items[0].First)
	require.Equal(t, 2, items[0].Messages)

	require.NoError(t, items[1].Err)
	require.Empty(t, items[1].First)
	require.Zero(t, items[1].Messages)

	require.Error(t, items[2].Err, "an entry that cannot be read")
	require.Equal(t, "55555555-0000-4000-8000-000000000003", items[2].ID)
	require.Empty(t, items[2].First)

	require.Error(t, items[3].Err, "a header that cannot be read")
	require.Equal(t, "55555555-0000-4000-8000-000000000002", items[3].ID, "the id of the file name")
	require.Equal(t, epoch.Add(-3*time.Minute), items[3].Updated, "the file's time")

	require.NoError(t, items[4].Err)
	require.Equal(t, "fix the lexer bug", items[4].First, "what was typed, without the USER_PROMPT.md block")
	require.Equal(t, 4, items[4].Messages, "the system message counts")
	require.Equal(t, 1, items[4].Branches)

	warned := w.all()
	require.Len(t, warned, 1, "%q", warned)
	require.Contains(t, warned[0], "skipping "+fifo)

	// Listing again reads the sidecars the first list wrote: the same.
	again, err := s.List()
	require.NoError(t, err)
	require.Len(t, again, len(items))
	for i := range items {
		require.Equal(t, items[i].Path, again[i].Path)
		require.Equal(t, items[i].First, again[i].First)
		require.Equal(t, items[i].Err != nil, again[i].Err != nil)
	}
}

// An empty sessions folder, or none yet, lists nothing and is no error.
func TestListNone(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	items, err := NewStore(d, nil).List()
	require.NoError(t, err)
	require.Empty(t, items)
	require.Empty(t, NewStore(d, nil).IDs(""))
}

// IDs are the working directory's session ids that start with a prefix,
// newest first, from the headers: not another directory's, not a log
// whose header cannot be read.
func TestIDs(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	s := NewStore(d, nil)
	writeSession(t, d, d.CWD, "ab000000-0000-4000-8000-000000000001", 3*time.Minute, typedMessage("1"))
	writeSession(t, d, d.CWD, "ab110000-0000-4000-8000-000000000002", 2*time.Minute, typedMessage("2"))
	writeSession(t, d, d.CWD, "cd000000-0000-4000-8000-000000000003", time.Minute)
	writeFile(t, d, "ab220000-0000-4000-8000-000000000004", 0, "garbage\n")
	writeSession(t, d, filepath.Join(filepath.Dir(d.CWD), "elsewhere"), "ab330000-0000-4000-8000-000000000005", 0, typedMessage("5"))

	require.Equal(t, []string{
		"cd000000-0000-4000-8000-000000000003",
		"ab110000-0000-4000-8000-000000000002",
		"ab000000-0000-4000-8000-000000000001",
	}, s.IDs(""))
	require.Equal(t, []string{
		"ab110000-0000-4000-8000-000000000002",
		"ab000000-0000-4000-8000-000000000001",
	}, s.IDs("ab"))
	require.Equal(t, []string{"ab110000-0000-4000-8000-000000000002"}, s.IDs("ab1"))
	require.Empty(t, s.IDs("ef"))
}
