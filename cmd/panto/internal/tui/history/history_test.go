package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
