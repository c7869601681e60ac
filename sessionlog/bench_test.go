package sessionlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testgen"
	"github.com/panto-dev/panto/internal/testio"
	"github.com/stretchr/testify/require"
)

// writeLog writes msgs as a log at path, in batches.
func writeLog(tb testing.TB, path string, msgs []conversation.Message) {
	tb.Helper()
	w, err := Create(path, Header{Cwd: "/home/user/project"})
	require.NoError(tb, err)
	_, err = w.Append(LifecycleEntry(LifecycleStarted, true, []string{"gitbranch"}))
	require.NoError(tb, err)
	const batch = 1000
	for i := 0; i < len(msgs); i += batch {
		es := make([]Entry, 0, batch)
		for _, m := range msgs[i:min(i+batch, len(msgs))] {
			es = append(es, MessageEntry(m))
		}
		_, err := w.Append(es...)
		require.NoError(tb, err)
	}
	require.NoError(tb, w.Close())
}

func BenchmarkRebuild20k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.jsonl")
	msgs := testgen.Messages(20000)
	writeLog(b, path, msgs)
	st, err := os.Stat(path)
	require.NoError(b, err)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	cpu0 := testio.CPUTime()
	for b.Loop() {
		l, err := Read(path)
		if err != nil {
			b.Fatal(err)
		}
		if got := l.Messages(); len(got) != len(msgs) {
			b.Fatalf("rebuilt %d messages, want %d", len(got), len(msgs))
		}
	}
	b.ReportMetric(float64(testio.CPUTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(st.Size())/1e6, "MB-file")
}

func benchWriter(b *testing.B) *Writer {
	w, err := Create(filepath.Join(b.TempDir(), "s.jsonl"), Header{Cwd: "/home/user/project"})
	require.NoError(b, err)
	b.Cleanup(func() { w.Close() })
	return w
}

func BenchmarkAppendFsync(b *testing.B) {
	w := benchWriter(b)
	m := conversation.UserText(strings.Repeat("hello panto ", 50))
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := w.Append(MessageEntry(m)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/append")
}

func BenchmarkAppendBatch(b *testing.B) {
	const batch = 64
	w := benchWriter(b)
	msgs := testgen.Messages(batch)
	es := make([]Entry, batch)
	for i, m := range msgs {
		es[i] = MessageEntry(m)
	}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := w.Append(es...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "entries/s")
}
