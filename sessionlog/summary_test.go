package sessionlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// summaryOfRead is the Summary computed from Read's whole log.
func summaryOfRead(t *testing.T, path string) Summary {
	log, err := Read(path)
	require.NoError(t, err)
	want := Summary{Header: log.Header, Messages: log.MessageCount(), Branches: len(log.Tree().Branches()),
		Entries: len(log.Entries), FirstUserText: excerpt(log.FirstUserText()), Usage: UsageByModel(log.Entries), Warnings: log.Warnings}
	if labels := log.Labels(); len(labels) > 0 {
		want.Labels = labels
	}
	if leaf := log.Leaf(); leaf != nil {
		want.Leaf, want.LastTime = leaf.ID, leaf.Time
	}
	return want
}

func TestSummarizeMatchesRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	paths := []string{filepath.Join("testdata", "branched.jsonl"), filepath.Join("testdata", "golden.jsonl"),
		filepath.Join("testdata", "sections.jsonl"), filepath.Join("testdata", "modeless.jsonl"),
		writeFile(t, "torn.jsonl", testHeader+"\n"+line("e1", "", userHi)+"\n"+moveText("m1", "zz", "e1")+"\n"+`{"type":"mess`),
		writeFile(t, "empty.jsonl", testHeader+"\n")}
	for seed := range uint64(12) {
		paths = append(paths, randomLog(t, dir, seed, 30+int(seed)*11))
	}
	for _, p := range paths {
		want := summaryOfRead(t, p)
		got, err := Summarize(p)
		require.NoError(t, err, p)
		require.Equal(t, want, got, p)
	}
	got, err := Summarize(filepath.Join("testdata", "branched.jsonl"))
	require.NoError(t, err)
	require.Equal(t, 2, got.Branches)
	require.Equal(t, "second try", got.FirstUserText)
	require.Equal(t, 4, got.Messages)
}

func TestCachedSummary(t *testing.T) {
	t.Parallel()
	path, _ := writeSample(t, t.TempDir())
	want := summaryOfRead(t, path)
	got, err := CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, want, got)
	st, err := os.Stat(path + ".summary")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// Valid while the log is unchanged: a doctored sidecar is believed,
	// which shows it is what is read.
	data, err := os.ReadFile(path + ".summary")
	require.NoError(t, err)
	require.Contains(t, string(data), `"messages":10`)
	require.NoError(t, os.WriteFile(path+".summary", []byte(strings.Replace(string(data), `"messages":10`, `"messages":99`, 1)), 0o600))
	got, err = CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, 99, got.Messages)

	// An append makes it stale: it is computed and written again.
	w, _, err := Open(path)
	require.NoError(t, err)
	rec, err := w.Append(MessageEntry(conversation.UserText("one more")), LabelEntry("00000000000000a3", "start"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	got, err = CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, summaryOfRead(t, path), got)
	require.Equal(t, 11, got.Messages)
	require.Equal(t, map[string]string{"00000000000000a3": "start"}, got.Labels)
	require.Equal(t, rec[1].ID, got.Leaf)
	again, err := CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, got, again)

	// So does a change of the modification time alone, and a sidecar that
	// cannot be read is rebuilt; deleting it loses nothing.
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(path, future, future))
	require.NoError(t, os.WriteFile(path+".summary", []byte(`{"format":1,"size":`), 0o600))
	got, err = CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, summaryOfRead(t, path), got)
	require.NoError(t, os.Remove(path+".summary"))
	got, err = CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, summaryOfRead(t, path), got)

	// A log that cannot be read is an error, not cached.
	bad := writeFile(t, "bad.jsonl", testHeader+"\n{bad\n"+line("e1", "", userHi)+"\n")
	_, err = CachedSummary(bad)
	require.ErrorContains(t, err, "line 2: invalid JSON")
	require.NoFileExists(t, bad+".summary")

	// A directory that cannot be written still gives the summary.
	ro := t.TempDir()
	p, _ := writeSample(t, ro)
	require.NoError(t, os.Chmod(ro, 0o500))
	t.Cleanup(func() { os.Chmod(ro, 0o700) })
	got, err = CachedSummary(p)
	require.NoError(t, err)
	require.Equal(t, summaryOfRead(t, p), got)
}
