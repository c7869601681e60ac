package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/testio"
	"github.com/stretchr/testify/require"
)

func TestAppendLoad(t *testing.T) {
	t.Parallel()
	path := Path(t.TempDir(), "/home/ann/proj")
	got, err := Load(path)
	require.NoError(t, err)
	require.Empty(t, got, "no file yet")
	for _, e := range []string{"first", "multi\n\tline", "multi\n\tline", "   ", "last"} {
		require.NoError(t, Append(path, e))
	}
	got, err = Load(path)
	require.NoError(t, err)
	require.Equal(t, []string{"first", "multi\n\tline", "last"}, got, "whole entries, repeats and blanks left out")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.NotEqual(t, Path("/s", "/a"), Path("/s", "/b"), "per project")
}

// The file is bounded: past twice Max entries it is rewritten with the
// last Max; a line that does not read is skipped.
func TestBounded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h.jsonl")
	var b strings.Builder
	for i := range 2*Max + 5 {
		fmt.Fprintf(&b, "%q\n", fmt.Sprint("entry ", i))
	}
	b.WriteString("{not json\n")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	got, err := Load(path)
	require.NoError(t, err)
	require.Len(t, got, Max)
	require.Equal(t, fmt.Sprint("entry ", 2*Max+4), got[Max-1])
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, Max, strings.Count(string(data), "\n"), "rewritten")
}

func TestCursor(t *testing.T) {
	t.Parallel()
	c := NewCursor([]string{"a", "b"})
	_, ok := c.Next()
	require.False(t, ok, "at the draft already")
	s, _ := c.Prev("draft")
	require.Equal(t, "b", s)
	s, _ = c.Prev("")
	require.Equal(t, "a", s)
	_, ok = c.Prev("")
	require.False(t, ok, "the oldest")
	s, _ = c.Next()
	require.Equal(t, "b", s)
	s, _ = c.Next()
	require.Equal(t, "draft", s)
	c.Prepend([]string{"older"})
	s, _ = c.Prev("")
	require.Equal(t, "b", s)
	c.Add("c")
	s, _ = c.Prev("")
	require.Equal(t, "c", s)
}

// A symbolic link at the history file's path is refused, never written
// through (a cloned repository cannot make panto append to ~/.bashrc);
// a FIFO is refused without waiting on it; the directory is made 0700.
func TestRefusesALinkOrAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "bashrc")
	require.NoError(t, os.WriteFile(target, []byte("# mine\n"), 0o644))
	path := Path(filepath.Join(dir, "state"), "/p")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.Symlink(target, path))
	err := Append(path, "rm -rf ~")
	require.ErrorIs(t, err, ErrNotRegular)
	require.Contains(t, err.Error(), path)
	data, _ := os.ReadFile(target)
	require.Equal(t, "# mine\n", string(data), "nothing written through the link")
	_, err = Load(path)
	require.ErrorIs(t, err, ErrNotRegular)

	fifo := filepath.Join(dir, "fifo.jsonl")
	testio.Mkfifo(t, fifo, 0o600)
	require.ErrorIs(t, Append(fifo, "x"), ErrNotRegular)
	_, err = Load(fifo)
	require.ErrorIs(t, err, ErrNotRegular)

	fresh := Path(filepath.Join(dir, "new", "state"), "/p")
	require.NoError(t, Append(fresh, "x"))
	fi, err := os.Stat(filepath.Dir(fresh))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

// Whatever the history file holds, Load gives whole entries, none blank,
// at most Max, and never fails on a line it cannot read.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("\"a\"\n\"multi\\nline\"\nnot json\n\"\"\n"))
	f.Add([]byte(strings.Repeat("\"x\"\n", 3)))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "h.jsonl")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		got, err := Load(path)
		if err != nil {
			require.Contains(t, err.Error(), path, "an error names the file")
		}
		require.LessOrEqual(t, len(got), Max)
		for _, e := range got {
			require.NotEmpty(t, strings.TrimSpace(e))
		}
	})
}
