package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// /resume's picker: every message's text to search, a name written to a
// log not running, a log deleted with its summary; a running session's
// log is neither named nor deleted.
func TestResumeHelpers(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	path := writeSession(t, d, d.CWD, "aaaa0000-0000-4000-8000-000000000001", 0,
		conversation.UserText("Fix the Parser"), assistant("Done: the LEXER was wrong."))
	text, err := SearchText(path)
	require.NoError(t, err)
	require.Contains(t, text, "fix the parser")
	require.Contains(t, text, "the lexer was wrong")

	name, err := NameLog(path, " the  parser ")
	require.NoError(t, err)
	require.Equal(t, "the parser", name)
	sum, err := sessionlog.CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, "the parser", sum.Name)

	w, _, err := sessionlog.Open(path) // a panto runs it
	require.NoError(t, err)
	_, err = NameLog(path, "x")
	require.ErrorIs(t, err, sessionlog.ErrLocked)
	require.ErrorIs(t, DeleteLog(path), sessionlog.ErrLocked)
	require.FileExists(t, path)
	require.NoError(t, w.Close())

	require.FileExists(t, path+".summary")
	images := sessionlog.ImageDir(path)
	require.NoError(t, os.MkdirAll(images, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(images, "sha256-00.png"), []byte("x"), 0o600))
	require.NoError(t, DeleteLog(path))
	require.NoDirExists(t, images, "the session's images go with it")
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(path + ".summary")
	require.ErrorIs(t, err, os.ErrNotExist)
}

// ListAll lists every directory's sessions, newest first, each with its
// directory; List only this one's.
func TestListAll(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	writeSession(t, d, d.CWD, "aaaa0000-0000-4000-8000-000000000001", 2*time.Minute, conversation.UserText("here"))
	other := filepath.Join(filepath.Dir(d.CWD), "other")
	writeSession(t, d, other, "bbbb0000-0000-4000-8000-000000000002", time.Minute, conversation.UserText("there"))
	s := NewStore(d, nil)
	here, err := s.List()
	require.NoError(t, err)
	require.Len(t, here, 1)
	all, err := s.ListAll()
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, "there", all[0].First)
	require.Equal(t, other, all[0].Cwd)
	require.Equal(t, d.CWD, all[1].Cwd)
}
