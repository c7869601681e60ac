package sessionlog

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testio"
)

// dirNames returns the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteNew(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, entries := writeSample(t, t.TempDir())
	path := filepath.Join(dir, "new.jsonl")
	h, err := WriteNew(context.Background(), path, Header{ID: "n1", Cwd: "/p", ParentSession: "s", ParentEntry: entries[3].ID}, entries)
	require.NoError(t, err)
	require.Equal(t, "n1", h.ID)
	got, err := Read(path)
	require.NoError(t, err)
	want, err := Read(src)
	require.NoError(t, err)
	require.Equal(t, want.Messages(), got.Messages())
	require.Equal(t, []string{"new.images", "new.jsonl"}, dirNames(t, dir), "no lock file, no temporary file")
	require.Len(t, dirNames(t, filepath.Join(dir, "new.images")), 1, "the sample's one image, once, no temporary file")
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// Nothing is replaced: the log, a dangling symlink, a FIFO.
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "link.jsonl")))
	testio.Mkfifo(t, filepath.Join(dir, "fifo.jsonl"), 0o600)
	for _, name := range []string{"new.jsonl", "link.jsonl", "fifo.jsonl"} {
		_, err := WriteNew(context.Background(), filepath.Join(dir, name), Header{Cwd: "/p"}, entries)
		require.ErrorIs(t, err, ErrExists, name)
	}
	require.ElementsMatch(t, []string{"new.jsonl", "new.images", "link.jsonl", "fifo.jsonl"}, dirNames(t, dir))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	again, err := Read(path)
	require.NoError(t, err)
	require.Equal(t, got.Entries, again.Entries, string(after))

	// A directory that does not exist is not made.
	_, err = WriteNew(context.Background(), filepath.Join(dir, "no", "x.jsonl"), Header{Cwd: "/p"}, entries)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoDirExists(t, filepath.Join(dir, "no"))
}

// A failure leaves nothing: not a log with part of the entries, not one
// with only its header.
func TestWriteNewFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "new.jsonl")
	bad := []Entry{MessageEntry(conversation.UserText("a")), LabelEntry("nosuch", "x")}
	_, err := WriteNew(context.Background(), path, Header{Cwd: "/p"}, bad)
	require.ErrorContains(t, err, "names no entry")
	require.Empty(t, dirNames(t, dir))

	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped by SIGTERM")
	cancel(stop)
	_, err = WriteNew(ctx, path, Header{Cwd: "/p"}, []Entry{MessageEntry(conversation.UserText("a"))})
	require.ErrorIs(t, err, stop)
	require.Empty(t, dirNames(t, dir))
}

func TestHeaderOnly(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		content string
		want    bool
	}{
		"header":          {testHeader + "\n", true},
		"no newline":      {testHeader, true},
		"blank after":     {testHeader + "\n\n  \n", true},
		"an entry":        {testHeader + "\n" + line("e1", "", userHi) + "\n", false},
		"a torn entry":    {testHeader + "\n" + `{"type":"mess`, false},
		"long first line": {strings.Repeat("x", maxHeaderLine+10), false},
	} {
		got, err := HeaderOnly(writeFile(t, "x.jsonl", tc.content))
		require.NoError(t, err, name)
		require.Equal(t, tc.want, got, name)
	}
	fifo := filepath.Join(t.TempDir(), "f.jsonl")
	testio.Mkfifo(t, fifo, 0o600)
	done := make(chan error)
	go func() { _, err := HeaderOnly(fifo); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrNotRegular)
	case <-time.After(10 * time.Second):
		t.Fatal("HeaderOnly waits on a FIFO")
	}
}

func TestLooksLikeLog(t *testing.T) {
	t.Parallel()
	for content, want := range map[string]bool{
		testHeader + "\n": true,
		testHeader:        true,
		`{"type":"session","version":99,"id":"s","created":"2030-01-01T00:00:00Z","cwd":"/p","more":1}` + "\n": true,
		`{"version":99,"type":"session"}` + "\n":       true,
		`{"type":"session"}` + "\n":                    true, // garbled, but a header
		`{"type":"session","version":1,"id":"s1","cre`: true, // torn
		`{"type":"session"`:                            true,
		`{ "type" : "sess`:                             true,
		`{"type"`:                                      true,
		`{"ty`:                                         false,
		"":                                             false,
		"<!DOCTYPE html>\n":                            false,
		"# Session\n":                                  false,
		`{"type":"message","id":"e1"}` + "\n":          false,
		`{"name":"package.json"}` + "\n":               false,
		`{"type":"sessions"}` + "\n":                   false,
		`{"type":"session" oops` + "\n" + "more":       true,
	} {
		got, err := LooksLikeLog(writeFile(t, "x", content))
		require.NoError(t, err, content)
		require.Equal(t, want, got, content)
	}
	_, err := LooksLikeLog(t.TempDir())
	require.ErrorIs(t, err, ErrNotRegular)
}

// FuzzLooksLikeLog: it never panics; every header the writer writes, of
// any version, and every start of one that holds its "type" key, looks
// like a log.
func FuzzLooksLikeLog(f *testing.F) {
	f.Add([]byte(testHeader), uint8(1), uint16(40))
	f.Add([]byte("<html>"), uint8(99), uint16(9))
	f.Fuzz(func(t *testing.T, data []byte, version uint8, cut uint16) {
		_ = looksLikeHeader(data)
		var buf bytes.Buffer
		h := Header{Version: int(version%8) + 1, ID: strings.ToValidUTF8(string(data), "?"), Created: time.Unix(int64(cut)*1000, 0), Cwd: "/p"}
		if h.ID == "" {
			h.ID = "x"
		}
		require.NoError(t, appendHeader(&buf, h))
		require.True(t, looksLikeHeader(buf.Bytes()), "%s", buf.Bytes())
		n := min(len(buf.Bytes()), len(`{"type"`)+int(cut))
		require.True(t, looksLikeHeader(buf.Bytes()[:n]), "%s", buf.Bytes()[:n])
	})
}
