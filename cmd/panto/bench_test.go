package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/testgen"
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
	h.env = map[string]string{
		"HOME": h.home, "PATH": os.Getenv("PATH"), "ANTHROPIC_API_KEY": "k", "PANTO_LOG_LEVEL": "off",
	}

	srv, arrived := firstByteServer(b)
	var total time.Duration
	var maxRSS int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		args := append([]string{"-p", "hi", "--provider", "anthropic", "--base-url", srv.URL}, prepare(h)...)
		cmd := h.command("", args...)
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
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxRSS {
			maxRSS = ru.Maxrss
		}
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
		h.write(filepath.Join(h.projectDir(), "config.toml"), "context_window = 1000000000\n")
		return []string{"--session", dst}
	})
}

func syncFile(b *testing.B, path string) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(b, err)
	require.NoError(b, f.Sync())
	require.NoError(b, f.Close())
}
