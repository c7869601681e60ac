//go:build unix

package extension

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStopTimes measures how long one stop takes, as a median over runs,
// for a healthy extension and for the ones that will not stop. It is a
// measurement, not a check, so it runs only when asked:
//
//	PANTO_MEASURE_STOP=1 go test -run TestStopTimes -v ./host/extension/
func TestStopTimes(t *testing.T) {
	if os.Getenv("PANTO_MEASURE_STOP") == "" {
		t.Skip("set PANTO_MEASURE_STOP=1 to measure")
	}
	const runs = 7
	for _, c := range []struct {
		name, body string
		freeze     bool
	}{
		{"healthy", "exec " + pluginPath("calm"), false},
		{"ignores Shutdown", "exec " + pluginPath("stubborn"), false},
		{"SIGSTOPped", "exec " + pluginPath("calm"), true},
		{"child holds the pipes", "sleep 600 &\nexec " + pluginPath("calm"), false},
	} {
		var ds []time.Duration
		for range runs {
			marker := newMarker(t)
			h := startOne(t, nil, Spec{Path: script(t, marker, "ext", c.body), Source: "measure"})
			if c.freeze {
				for _, pid := range markedPids(marker) {
					require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
				}
			}
			ds = append(ds, bounded(t, 5*time.Second, "Close", func() { h.m.Close(context.Background()) }))
			requireNoneLeft(t, marker)
		}
		lo, hi := minMax(ds)
		t.Logf("%-22s median %8s  (min %s, max %s, %d runs)", c.name, median(ds).Round(10*time.Microsecond), lo.Round(10*time.Microsecond), hi.Round(10*time.Microsecond), runs)
	}
}

func minMax(ds []time.Duration) (time.Duration, time.Duration) {
	lo, hi := ds[0], ds[0]
	for _, d := range ds {
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}
