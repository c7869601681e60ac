package atomicfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/testio"
	"github.com/stretchr/testify/require"
)

// names returns the names in dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestCommitReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dst := filepath.Join(dir, "out.html")
	require.NoError(t, os.WriteFile(dst, []byte("old"), 0o644))
	f, err := Create(context.Background(), dst)
	require.NoError(t, err)
	require.True(t, IsTemp(filepath.Base(f.Name())), f.Name())
	_, err = f.Write([]byte("new"))
	require.NoError(t, err)
	require.NoError(t, f.Commit(true))
	f.Abort() // a deferred Abort after Commit does nothing
	got, err := os.ReadFile(dst)
	require.NoError(t, err)
	require.Equal(t, "new", string(got))
	require.Equal(t, []string{"out.html"}, names(t, dir))
}

func TestCommitNoReplace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dst := filepath.Join(dir, "new.jsonl")
	f, err := Create(context.Background(), dst)
	require.NoError(t, err)
	_, err = f.Write([]byte("a"))
	require.NoError(t, err)
	require.NoError(t, f.Commit(false))
	require.Equal(t, []string{"new.jsonl"}, names(t, dir))

	// Whatever is there stays: a file, a dangling symlink.
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "link")))
	for _, name := range []string{"new.jsonl", "link"} {
		f, err := Create(context.Background(), filepath.Join(dir, name))
		require.NoError(t, err)
		_, err = f.Write([]byte("b"))
		require.NoError(t, err)
		err = f.Commit(false)
		require.ErrorIs(t, err, ErrExists, name)
	}
	got, err := os.ReadFile(dst)
	require.NoError(t, err)
	require.Equal(t, "a", string(got))
	require.ElementsMatch(t, []string{"new.jsonl", "link"}, names(t, dir))
}

func TestAbortRemoves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f, err := Create(context.Background(), filepath.Join(dir, "x"))
	require.NoError(t, err)
	_, err = f.Write([]byte("half"))
	require.NoError(t, err)
	f.Abort()
	f.Abort()
	require.Empty(t, names(t, dir))
	require.Error(t, f.Commit(true))
	require.Empty(t, names(t, dir))
}

// A cancelled context removes the file at once, before anyone calls
// Abort (a process that exits right after a signal leaves nothing), and
// Commit fails with the cause.
func TestCancelRemovesAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	f, err := Create(ctx, filepath.Join(dir, "x"))
	require.NoError(t, err)
	_, err = f.Write([]byte("half"))
	require.NoError(t, err)
	stop := errors.New("stopped by SIGTERM")
	cancel(stop)
	require.Eventually(t, func() bool { return len(names(t, dir)) == 0 }, 5*time.Second, time.Millisecond)
	_, err = f.Write([]byte("more"))
	require.ErrorIs(t, err, stop)
	require.ErrorIs(t, f.Commit(true), stop)
	require.Empty(t, names(t, dir))
}

func TestCreateInMissingDir(t *testing.T) {
	t.Parallel()
	_, err := Create(context.Background(), filepath.Join(t.TempDir(), "no", "x"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestLongName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dst := filepath.Join(dir, strings.Repeat("é", 120)) // 240 bytes
	f, err := Create(context.Background(), dst)
	require.NoError(t, err)
	require.True(t, IsTemp(filepath.Base(f.Name())))
	require.NoError(t, f.Commit(true))
	_, err = os.Stat(dst)
	require.NoError(t, err)
}

func TestIsTemp(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		".out.html.0123456789ab.panto-tmp": true,
		".x.jsonl.abcdefabcdef.panto-tmp":  true,
		"out.html.0123456789ab.panto-tmp":  false, // not hidden
		".out.html.0123456789a.panto-tmp":  false,
		".out.html.0123456789ag.panto-tmp": false,
		".out.html0123456789ab.panto-tmp":  false,
		".out.html.0123456789ab.panto-tm":  false,
		".panto-tmp":                       false,
		"session.jsonl":                    false,
	} {
		require.Equal(t, want, IsTemp(name), name)
	}
}

// RemoveStale removes what a killed writer left, and nothing a live
// writer holds, nothing young, nothing not named as this package names.
func TestRemoveStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-2 * StaleAge)

	// Left by a killed writer: its lock went with it.
	left := filepath.Join(dir, ".a.html.0123456789ab.panto-tmp")
	require.NoError(t, os.WriteFile(left, []byte("x"), 0o600))
	require.NoError(t, os.Chtimes(left, old, old))
	// Young, unheld.
	young := filepath.Join(dir, ".b.html.0123456789ab.panto-tmp")
	require.NoError(t, os.WriteFile(young, []byte("x"), 0o600))
	// Held by a live writer, old.
	live, err := Create(context.Background(), filepath.Join(dir, "c.html"))
	require.NoError(t, err)
	defer live.Abort()
	require.NoError(t, os.Chtimes(live.Name(), old, old))
	// Not ours; a FIFO named like ours.
	other := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o600))
	require.NoError(t, os.Chtimes(other, old, old))
	fifo := filepath.Join(dir, ".d.html.0123456789ab.panto-tmp")
	testio.Mkfifo(t, fifo, 0o600)

	removed, err := RemoveStale(dir)
	require.NoError(t, err)
	require.Equal(t, []string{left}, removed)
	require.ElementsMatch(t, []string{filepath.Base(young), filepath.Base(live.Name()), "notes.txt", filepath.Base(fifo)}, names(t, dir))

	removed, err = RemoveStale(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	require.Empty(t, removed)
}

// FuzzIsTemp: IsTemp never panics on a name found on disk, and the
// temporary file Create makes for any target name is one.
func FuzzIsTemp(f *testing.F) {
	f.Add("out.html")
	f.Add(".x.0123456789ab.panto-tmp")
	f.Add(strings.Repeat("é", 200))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name string) {
		_ = IsTemp(name)
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 200 {
			return
		}
		tmp, err := Create(context.Background(), filepath.Join(dir, name))
		if err != nil {
			return
		}
		defer tmp.Abort()
		require.True(t, IsTemp(filepath.Base(tmp.Name())), tmp.Name())
	})
}
