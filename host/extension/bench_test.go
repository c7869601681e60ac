package extension

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/pb"
)

// median returns the median of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func benchOptions() Options {
	return Options{StartTimeout: 10 * time.Second, HookTimeout: 5 * time.Second}
}

// benchStart starts n copies of a minimal extension concurrently, then
// closes them; ns/op and ms/start-all (the median) time Start alone.
func benchStart(b *testing.B, n int) {
	sp := make([]Spec, n)
	for i := range sp {
		sp[i] = Spec{Path: pluginPath(fmt.Sprintf("bench-%d", i)), Source: "bench"}
	}
	var ds []time.Duration
	b.ResetTimer()
	for range b.N {
		errs := &syncBuffer{}
		opts := benchOptions()
		opts.Report = reportTo(errs)
		t0 := time.Now()
		m := Start(context.Background(), sp, newRecorder(), opts)
		ds = append(ds, time.Since(t0))
		b.StopTimer()
		if len(m.Extensions()) != n {
			b.Fatalf("started %d of %d: %s", len(m.Extensions()), n, errs.String())
		}
		m.Close(context.Background())
		b.StartTimer()
	}
	b.ReportMetric(float64(median(ds))/float64(time.Millisecond), "ms/start-all")
}

func BenchmarkStart1(b *testing.B)  { benchStart(b, 1) }
func BenchmarkStart10(b *testing.B) { benchStart(b, 10) }

// benchHook fires req at one running extension b.N times and reports the
// median duration of one Fire. The host runs with one P, as panto does once
// its extensions are loaded (cmd/panto); go test -bench Hook -cpu 2 shows
// the cost of a second one.
func benchHook(b *testing.B, req *pb.EventRequest, wantEdits int) {
	if os.Getenv("GOMAXPROCS") == "" && !cpuFlagSet() {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	rec := newRecorder()
	errs := &syncBuffer{}
	opts := benchOptions()
	opts.Report = reportTo(errs)
	m := Start(context.Background(), specs("bench-hook"), rec, opts)
	b.Cleanup(func() { m.Close(context.Background()) })
	if len(m.Extensions()) != 1 {
		b.Fatalf("not started: %s", errs.String())
	}
	ctx := context.Background()
	for range 20 { // warm up the connections
		m.fire(ctx, req)
	}
	before := len(rec.Edits())
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		m.fire(ctx, req)
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	if e := m.Extensions()[0].Disabled(); e != nil {
		b.Fatal(e)
	}
	if got := len(rec.Edits()) - before; got != wantEdits*b.N {
		b.Fatalf("%d edits recorded, want %d", got, wantEdits*b.N)
	}
	b.ReportMetric(float64(median(ds))/float64(time.Microsecond), "p50-µs")
}

// BenchmarkHook: one event to one extension, no callback.
func BenchmarkHook(b *testing.B) {
	benchHook(b, &pb.EventRequest{Event: "before_turn", Payload: &pb.EventRequest_BeforeTurn{BeforeTurn: &pb.BeforeTurn{UserText: "hi"}}}, 0)
}

// BenchmarkHookCallback: the extension's SessionStart makes one
// AddSystemMessage callback.
func BenchmarkHookCallback(b *testing.B) {
	benchHook(b, &pb.EventRequest{Event: "session_start", Payload: &pb.EventRequest_SessionStart{SessionStart: &pb.SessionStart{}}}, 1)
}

// cpuFlagSet reports whether go test was given -cpu, which sets GOMAXPROCS
// for each run itself.
func cpuFlagSet() bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.cpu" })
	return set
}
