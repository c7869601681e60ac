package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testgen"
	"github.com/panto-dev/panto/sessionlog"
)

// The full-screen UI's speed, measured on the real binary under a
// pseudo-terminal (the targets of issue 12, checked here and never by a
// timed test). Each reports the median over its iterations: run with
// -count to see several medians (make bench does).

// placeholder is what the first frame shows in the editor.
const placeholder = "Write a message"

// median returns the median and the 90th percentile of ds, in ms.
func median(ds []time.Duration) (p50, p90 float64) {
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(s[len(s)/2]), ms(s[min(len(s)-1, len(s)*9/10)])
}

// quit ends a UI run with Ctrl-D and waits for it.
func (r *uiRun) quit(t testing.TB) {
	r.write(t, "\x15\x04") // Ctrl-U, Ctrl-D
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("panto did not quit")
	}
}

// Exec to the first frame, with the three first-party extensions
// installed (they start after it); and exec to the session being open
// (the status line names the model).
func BenchmarkUIFirstFrame(b *testing.B) {
	h := newHarness(b)
	h.installFirstParty()
	h.env["PANTO_LOG_LEVEL"] = "off"
	var first, ready []time.Duration
	for b.Loop() {
		r := h.startUI(100, 30, "--provider", "echo", "--no-session")
		t1 := r.waitFor(b, placeholder)
		t2 := r.waitFor(b, "echo/echo")
		first = append(first, t1.Sub(r.start))
		ready = append(ready, t2.Sub(r.start))
		b.StopTimer()
		r.quit(b)
		b.StartTimer()
	}
	p50, p90 := median(first)
	b.ReportMetric(p50, "ms-first-frame-p50")
	b.ReportMetric(p90, "ms-first-frame-p90")
	p50, _ = median(ready)
	b.ReportMetric(p50, "ms-session-open-p50")
}

// Resume of a 2,000-message session: exec to the first frame, and to
// the conversation drawn (its last message on screen).
func BenchmarkUIResume2000(b *testing.B) {
	h := newHarness(b)
	h.env["PANTO_LOG_LEVEL"] = "off"
	src := filepath.Join(b.TempDir(), "src.jsonl")
	w, err := sessionlog.Create(src, sessionlog.Header{Cwd: h.project})
	require.NoError(b, err)
	msgs := testgen.Messages(1999)
	msgs = append(msgs, conversation.AssistantText("the last reply: END-OF-HISTORY"))
	var batch []sessionlog.Entry
	for _, m := range msgs {
		batch = append(batch, sessionlog.MessageEntry(m))
	}
	_, err = w.Append(batch...)
	require.NoError(b, err)
	require.NoError(b, w.Close())
	data, err := os.ReadFile(src)
	require.NoError(b, err)
	b.Logf("session log: %d messages, %.1f MB", len(msgs), float64(len(data))/1e6)
	var first, drawn []time.Duration
	for b.Loop() {
		b.StopTimer()
		dst := filepath.Join(h.root, "s.jsonl")
		require.NoError(b, os.WriteFile(dst, data, 0o600))
		syncFile(b, dst)
		b.StartTimer()
		r := h.startUI(100, 30, "--provider", "echo", "--session", dst)
		t1 := r.waitFor(b, placeholder)
		t2 := r.waitFor(b, "END-OF-HISTORY")
		first = append(first, t1.Sub(r.start))
		drawn = append(drawn, t2.Sub(r.start))
		b.StopTimer()
		r.quit(b)
		b.StartTimer()
	}
	p50, p90 := median(first)
	b.ReportMetric(p50, "ms-first-frame-p50")
	b.ReportMetric(p90, "ms-first-frame-p90")
	p50, p90 = median(drawn)
	b.ReportMetric(p50, "ms-history-drawn-p50")
	b.ReportMetric(p90, "ms-history-drawn-p90")
}

// Keystroke to frame while a reply streams (a piece every 5 ms): the
// time from writing a character to the pty to reading it back in the
// frame panto draws.
func BenchmarkUIKeystrokeWhileStreaming(b *testing.B) {
	h := newHarness(b)
	h.env["PANTO_LOG_LEVEL"] = "off"
	h.env["ANTHROPIC_API_KEY"] = "k"
	words := strings.Fields("streaming words of a long reply, some **bold**, some `code`, and a few more")
	srv, started := slowProvider(b, 100000, 5*time.Millisecond, func(i int) string {
		w := words[i%len(words)] + " "
		if i%60 == 59 {
			w += "\n\n"
		}
		return w
	})
	var lat []time.Duration
	for b.Loop() {
		b.StopTimer()
		r := h.startUI(100, 30, "--provider", "anthropic", "--base-url", srv.URL, "--no-session")
		r.waitFor(b, placeholder)
		r.write(b, "go\r")
		<-started
		time.Sleep(300 * time.Millisecond) // well into the stream
		b.StartTimer()
		for i := range 40 {
			n := r.count("Ж")
			t0 := time.Now()
			r.write(b, "Ж")
			r.waitCount(b, "Ж", n+1, 5*time.Second)
			lat = append(lat, time.Since(t0))
			b.StopTimer()
			time.Sleep(time.Duration(7+i%11) * time.Millisecond) // off the frame ticker's beat
			b.StartTimer()
		}
		b.StopTimer()
		r.write(b, "\x1b")
		time.Sleep(100 * time.Millisecond)
		r.quit(b)
		b.StartTimer()
	}
	p50, p90 := median(lat)
	b.ReportMetric(p50, "ms-key-to-frame-p50")
	b.ReportMetric(p90, "ms-key-to-frame-p90")
	b.ReportMetric(float64(len(lat)), "keys")
}
