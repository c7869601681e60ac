package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

// /export writes the session's HTML beside the project, or where asked,
// and refuses what OutputPath refuses.
func TestExport(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	log := writeSession(t, d, d.CWD, "0123456789abcdef0123", 0,
		conversation.UserText("what is panto?"), assistant("An agent host."))
	a := &App{dirs: d}
	s := &fakeSession{name: "0123456789abcdef0123", path: log}
	got, err := a.Export(context.Background(), s, "")
	require.NoError(t, err)
	require.Equal(t, a.ExportPath("0123456789abcdef0123"), got)
	require.Equal(t, d.CWD, filepath.Dir(got))
	data, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Contains(t, string(data), "<html")
	require.Contains(t, string(data), "An agent host.")

	got, err = a.Export(context.Background(), s, "out/x.html")
	require.ErrorContains(t, err, "does not exist")
	require.Empty(t, got)
	_, err = a.Export(context.Background(), s, log)
	require.ErrorContains(t, err, "session log")

	_, err = a.Export(context.Background(), &fakeSession{name: "x"}, "")
	require.ErrorIs(t, err, host.ErrNotRecorded)
}
