package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/internal/testio"
)

const (
	exportCmd = "session export"
	forkCmd   = "session fork"
)

// outputDirs are a run's directories, a folder of the user's outside
// them, and there a copy of a session log to export: outside the
// sessions folder, so that the refusal seen is not that one.
func outputDirs(t *testing.T) (d layers.Dirs, dir, src string) {
	t.Helper()
	d = testDirs(t)
	log := writeSession(t, d, d.CWD, "66666666-0000-4000-8000-000000000001", 0, typedMessage("hi"))
	dir = t.TempDir()
	src = filepath.Join(dir, "mine.jsonl")
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(src, data, 0o600))
	return d, dir, src
}

// Refused whatever replace says: a directory that does not exist (and it
// is not made), a parent that is a file, a FIFO, a directory, a symlink
// to nothing, to a directory or to a FIFO.
func TestOutputPathRefusesWhatIsNoFile(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	dir := t.TempDir()
	src := writeSession(t, d, d.CWD, "66666666-0000-4000-8000-000000000002", 0, typedMessage("hi"))

	file := filepath.Join(dir, "file.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	fifo := filepath.Join(dir, "fifo")
	testio.Mkfifo(t, fifo, 0o600)
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nothing"), dangling))
	toDir := filepath.Join(dir, "to-dir")
	require.NoError(t, os.Symlink(sub, toDir))
	toFIFO := filepath.Join(dir, "to-fifo")
	require.NoError(t, os.Symlink(fifo, toFIFO))

	missing := filepath.Join(dir, "no", "such", "out.html")
	for _, cmd := range []string{exportCmd, forkCmd} {
		_, err := OutputPath(cmd, missing, src, d, cmd == exportCmd)
		require.EqualError(t, err, cmd+": -o "+missing+": directory "+filepath.Dir(missing)+" does not exist")
		require.NoDirExists(t, filepath.Join(dir, "no"), "the directory is not made")

		under := filepath.Join(file, "out.html")
		_, err = OutputPath(cmd, under, src, d, cmd == exportCmd)
		require.ErrorContains(t, err, file+" is not a directory")
	}

	for dst, why := range map[string]string{
		fifo:     " is a named pipe (FIFO): write the export to a regular file",
		sub:      " is a directory: write the export to a regular file",
		toDir:    " is a directory: write the export to a regular file",
		toFIFO:   " is a named pipe (FIFO): write the export to a regular file",
		dangling: " is a symbolic link to nothing that can be written",
	} {
		got, err := OutputPath(exportCmd, dst, src, d, true)
		require.ErrorContainsf(t, err, exportCmd+": -o "+dst+why, "export -o %s", dst)
		require.Empty(t, got)
	}

	// A fork is a new file: anything there at all is refused, a dangling
	// symlink too (a fork written through it would land elsewhere).
	for dst, what := range map[string]string{
		fifo:     "a named pipe (FIFO)",
		sub:      "a directory",
		toDir:    "a symbolic link",
		dangling: "a symbolic link",
		file:     "a file",
	} {
		got, err := OutputPath(forkCmd, dst, src, d, false)
		require.EqualErrorf(t, err, forkCmd+": -o "+dst+": "+what+" is already there; a fork is a new file: name one that does not exist", "fork -o %s", dst)
		require.Empty(t, got)
	}
	require.FileExists(t, file)
}

// Refused though a regular file: the log being exported (by its name, a
// hard link or a symlink to it), another session log (any version, or
// a header cut short), a lock file.
func TestOutputPathRefusesLogs(t *testing.T) {
	t.Parallel()
	d, dir, src := outputDirs(t)
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
		return p
	}
	hard := filepath.Join(dir, "hard")
	require.NoError(t, os.Link(src, hard))
	soft := filepath.Join(dir, "soft")
	require.NoError(t, os.Symlink(src, soft))

	for _, dst := range []string{src, hard, soft} {
		_, err := OutputPath(exportCmd, dst, src, d, true)
		require.EqualErrorf(t, err, exportCmd+": -o "+dst+" is the session log being exported: write the export elsewhere", "-o %s", dst)
	}

	data, err := os.ReadFile(src)
	require.NoError(t, err)
	for _, dst := range []string{
		write("other.txt", string(data)),
		write("newer.md", `{"type":"session","version":99,"id":"x","created":"2030-01-01T00:00:00Z","cwd":"/p"}`+"\n"),
		write("torn.html", `{"type":"session","vers`),
		write("headeronly", `{"type":"session","version":1,"id":"x","created":"2026-01-01T00:00:00Z","cwd":"/p"}`+"\n"),
	} {
		_, err := OutputPath(exportCmd, dst, src, d, true)
		require.EqualErrorf(t, err, exportCmd+": -o "+dst+" is a session log: write the export elsewhere", "-o %s", dst)
	}

	lock := write("s.jsonl.lock", "")
	_, err = OutputPath(exportCmd, lock, src, d, true)
	require.EqualError(t, err, exportCmd+": -o "+lock+" is a lock file (a running session's, perhaps): write the export elsewhere")
	lockLink := filepath.Join(dir, "lock-link")
	require.NoError(t, os.Symlink(lock, lockLink))
	_, err = OutputPath(exportCmd, lockLink, src, d, true)
	require.ErrorContains(t, err, "is a lock file", "a symlink to a lock file is one")
}

// An export refuses any file in panto's sessions folder, new or not,
// named through a symlink or not.
func TestOutputPathRefusesTheSessionsFolder(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	src := writeSession(t, d, d.CWD, "66666666-0000-4000-8000-000000000003", 0, typedMessage("hi"))
	notes := filepath.Join(d.SessionDir(), "notes.md")
	require.NoError(t, os.WriteFile(notes, []byte("mine"), 0o600))
	outside := t.TempDir()
	linkDir := filepath.Join(outside, "sessions-link")
	require.NoError(t, os.Symlink(d.Sessions, linkDir))
	linkFile := filepath.Join(outside, "notes-link.md")
	require.NoError(t, os.Symlink(notes, linkFile))

	for _, dst := range []string{
		filepath.Join(d.Sessions, "export.html"),
		filepath.Join(d.SessionDir(), "export.html"),
		notes,
		src + ".summary",
		filepath.Join(linkDir, "export.html"),
		linkFile,
	} {
		got, err := OutputPath(exportCmd, dst, src, d, true)
		require.ErrorContainsf(t, err, " is in panto's sessions folder "+d.Sessions+": write the export elsewhere", "-o %s", dst)
		require.Empty(t, got)
	}
}

// What is written: a new file as named, a regular file of the user's
// replaced by an export, and for a symlink to a regular file the file it
// names. A fork takes only a new name, in the sessions folder too
// (docs/cli.md: only an export refuses that folder).
func TestOutputPathWrites(t *testing.T) {
	t.Parallel()
	d, dir, src := outputDirs(t)
	fresh := filepath.Join(dir, "new.html")
	mine := filepath.Join(dir, "mine.md")
	require.NoError(t, os.WriteFile(mine, []byte("# old export\n"), 0o600))
	link := filepath.Join(dir, "link.md")
	require.NoError(t, os.Symlink("mine.md", link))

	for _, cmd := range []string{exportCmd, forkCmd} {
		got, err := OutputPath(cmd, fresh, src, d, cmd == exportCmd)
		require.NoError(t, err)
		require.Equal(t, fresh, got)
	}
	got, err := OutputPath(exportCmd, mine, src, d, true)
	require.NoError(t, err)
	require.Equal(t, mine, got)

	got, err = OutputPath(exportCmd, link, src, d, true)
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(mine)
	require.NoError(t, err)
	require.Equal(t, want, got, "the file the link names")

	_, err = OutputPath(forkCmd, mine, src, d, false)
	require.ErrorContains(t, err, "a file is already there")
	_, err = OutputPath(forkCmd, link, src, d, false)
	require.ErrorContains(t, err, "a symbolic link is already there")

	forked := filepath.Join(d.SessionDir(), "fork.jsonl")
	require.NoError(t, os.MkdirAll(d.SessionDir(), 0o700))
	got, err = OutputPath(forkCmd, forked, src, d, false)
	require.NoError(t, err)
	require.Equal(t, forked, got)

	data, err := os.ReadFile(mine)
	require.NoError(t, err)
	require.Equal(t, "# old export\n", string(data), "checking writes nothing")
}
