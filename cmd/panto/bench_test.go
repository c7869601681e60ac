package main

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/testgen"
	"github.com/panto-dev/panto/internal/testio"
	"github.com/panto-dev/panto/sessionlog"
)

// firstByteServer answers every request with a short Anthropic stream and
// reports, on its channel, when each request's first byte arrived.
func firstByteServer(b *testing.B) (*httptest.Server, <-chan time.Time) {
	arrived := make(chan time.Time, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- time.Now(): // the handler runs once the request line and headers are in
		default: // never block a request on the benchmark
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, anthropicText("ok").body)
	}))
	b.Cleanup(srv.Close)
	return srv, arrived
}

// benchStart measures process start to the first request byte at the
// provider, and reports the child's peak RSS (as /usr/bin/time -v does).
func benchStart(b *testing.B, prepare func(h *harness) []string) {
	h := newHarness(b)
	// The harness's environment (its XDG folders: the config a run
	// writes is read), with a key and no log.
	h.env["ANTHROPIC_API_KEY"], h.env["PANTO_LOG_LEVEL"] = "k", "off"

	srv, arrived := firstByteServer(b)
	var total time.Duration
	var maxRSS int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		args := append([]string{"-p", "hi", "--provider", "anthropic", "--base-url", srv.URL}, prepare(h)...)
		cmd := h.command("", args...)
		// The child's own peak RSS: Go starts children with vfork, and
		// Linux then counts the parent's RSS in the child's maxrss; GNU
		// time forks panto itself and reports only its.
		var timeOut strings.Builder
		if _, err := os.Stat("/usr/bin/time"); err == nil {
			cmd.Args = append([]string{"/usr/bin/time", "-f", "%M", cmd.Path}, cmd.Args[1:]...)
			cmd.Path = "/usr/bin/time"
			cmd.Stderr = &timeOut
		}
		b.StartTimer()
		start := time.Now()
		require.NoError(b, cmd.Start())
		first := <-arrived
		b.StopTimer()
		require.NoError(b, cmd.Wait())
		for len(arrived) > 0 {
			<-arrived // one run, one request: anything more is a bug
			b.Fatal("panto sent more than one request")
		}
		total += first.Sub(start)
		rss := int64(-1)
		if out := strings.Fields(timeOut.String()); len(out) > 0 {
			rss, _ = strconv.ParseInt(out[len(out)-1], 10, 64)
		} else if ru, ok := testio.MaxRSS(cmd.ProcessState); ok {
			rss = ru
		}
		maxRSS = max(maxRSS, rss)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms-to-first-byte")
	b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MB")
}

func BenchmarkStartEmptySession(b *testing.B) {
	benchStart(b, func(*harness) []string { return []string{"--no-session"} })
}

func BenchmarkStart20kSession(b *testing.B) {
	src := filepath.Join(b.TempDir(), "src.jsonl")
	w, err := sessionlog.Create(src, sessionlog.Header{Cwd: "/project"})
	require.NoError(b, err)
	msgs := testgen.Messages(20000)
	for len(msgs) > 0 {
		n := min(len(msgs), 500)
		batch := make([]sessionlog.Entry, n)
		for i, m := range msgs[:n] {
			batch[i] = sessionlog.MessageEntry(m)
		}
		_, err := w.Append(batch...)
		require.NoError(b, err)
		msgs = msgs[n:]
	}
	require.NoError(b, w.Close())
	data, err := os.ReadFile(src)
	require.NoError(b, err)
	b.Logf("session log: 20000 messages, %.1f MB", float64(len(data))/1e6)
	benchStart(b, func(h *harness) []string {
		// A fresh copy each run, so every run resumes the same 20,000
		// messages (a run appends to the log it resumes).
		dst := filepath.Join(h.root, "s.jsonl")
		require.NoError(b, os.WriteFile(dst, data, 0o600))
		syncFile(b, dst) // as a log panto wrote earlier would be: on disk, not dirty in the page cache
		// 20,000 messages are far past a real model's window: without a
		// window this large panto would compact first. Measured here is
		// the resume itself.
		h.write(filepath.Join(h.userDir(), "config.toml"), "context_window = 1000000000\n")
		return []string{"--session", dst}
	})
}

func syncFile(b *testing.B, path string) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(b, err)
	require.NoError(b, f.Sync())
	require.NoError(b, f.Close())
}

// heavyBench skips a benchmark that writes gigabytes unless the -bench
// pattern names it (name is in it): make bench does not run these.
func heavyBench(b *testing.B, name string) {
	if f := flag.Lookup("test.bench"); f == nil || !strings.Contains(f.Value.String(), name) {
		b.Skipf("writes a 1 GB log: run with -bench %s", name)
	}
}

// bigLog writes a 1 GB log for the resume benchmarks (kept: messages from
// the latest compaction's cut to the leaf; 0 for none).
func bigLog(b *testing.B, kept int) string {
	path := filepath.Join(b.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	require.NoError(b, err)
	info, err := testgen.WriteLog(f, testgen.LogOptions{Size: 1 << 30, Kept: kept, Branches: 2})
	require.NoError(b, err)
	require.NoError(b, f.Close())
	syncFile(b, path)
	b.Logf("session log: %.2f GB, %d entries, %d messages on the branch", float64(info.Bytes)/1e9, info.Entries, info.Messages)
	return path
}

// BenchmarkResume1GBFirstRequest: panto -p resuming a 1 GB log whose
// latest compaction is 20,000 messages before the leaf, from exec to the
// first request's byte at the provider, and the process's peak RSS.
func BenchmarkResume1GBFirstRequest(b *testing.B) {
	heavyBench(b, "1GB")
	path := bigLog(b, 20000)
	benchStart(b, func(h *harness) []string {
		h.write(filepath.Join(h.userDir(), "config.toml"), "context_window = 1000000000\n")
		return []string{"--session", path}
	})
}

// BenchmarkResume1GBNoCompactionFirstRequest: the same without a
// compaction: every message of the branch is loaded.
func BenchmarkResume1GBNoCompactionFirstRequest(b *testing.B) {
	heavyBench(b, "1GB")
	path := bigLog(b, 0)
	benchStart(b, func(h *harness) []string {
		h.write(filepath.Join(h.userDir(), "config.toml"), "context_window = 1000000000\n")
		return []string{"--session", path}
	})
}
