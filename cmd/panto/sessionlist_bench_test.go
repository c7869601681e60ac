package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readBytes returns how many bytes this process has read so far (rchar of
// /proc/self/io), or -1 where that is not known.
func readBytes() int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// BenchmarkSessionList lists a directory holding one small session and,
// in the second case, one of 200 MB: the cost must not grow with the log
// (summarize reads the header and at most listScan). It reports the bytes
// read per listing (rchar of /proc/self/io) and the allocations.
func BenchmarkSessionList(b *testing.B) {
	for _, tc := range []struct {
		name string
		big  int
	}{{"small-only", 0}, {"with-200MB-log", 200 << 20}} {
		b.Run(tc.name, func(b *testing.B) {
			h := newHarness(b)
			h.ok("-p", "a small one", "--provider", "echo")
			if tc.big > 0 {
				big := writeBigLog(b, h, tc.big)
				st, err := os.Stat(big)
				require.NoError(b, err)
				b.Logf("big log: %.1f MB", float64(st.Size())/1e6)
			}
			e := &env{stdin: strings.NewReader(""), stderr: &bytes.Buffer{}, cwd: h.project,
				getenv: func(k string) string { return h.env[k] }}
			b.ReportAllocs()
			var read int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var out bytes.Buffer
				e.stdout = &out
				before := readBytes()
				require.NoError(b, runSessionList(e, false))
				read += readBytes() - before
				if !strings.Contains(out.String(), "a small one") {
					b.Fatal(out.String())
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(read)/float64(b.N), "read-B/op")
		})
	}
}
