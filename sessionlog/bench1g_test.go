package sessionlog

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testgen"
	"github.com/panto-dev/panto/internal/testio"
)

// The 1 GB benchmarks share generated logs: written once per test binary
// (about 2 s a GB) into a temporary directory that TestMain removes, and
// only when a benchmark asks for them, so they never run in make test.
// They run only when the -bench pattern names them ("1GB", "SessionList"): a
// plain make bench (-bench=.) skips them, make bench BENCH=1GB runs them.
// SESSIONLOG_BENCH_SIZE sets the size of the 1 GB logs in MB.

// heavy skips a benchmark that generates gigabytes unless -bench names
// it.
func heavy(b *testing.B, name string) {
	if f := flag.Lookup("test.bench"); f == nil || !strings.Contains(f.Value.String(), name) {
		b.Skipf("generates gigabytes of logs: run with -bench %s", name)
	}
}

var bigLogs struct {
	sync.Mutex
	dir   string
	infos map[string]testgen.LogInfo
}

// generatedLog returns the path of the generated log named name.
func generatedLog(b *testing.B, name string, o testgen.LogOptions) (string, testgen.LogInfo) {
	bigLogs.Lock()
	defer bigLogs.Unlock()
	if bigLogs.dir == "" {
		dir, err := os.MkdirTemp("", "sessionlog-bench-")
		require.NoError(b, err)
		bigLogs.dir, bigLogs.infos = dir, map[string]testgen.LogInfo{}
	}
	path := filepath.Join(bigLogs.dir, name+".jsonl")
	if info, ok := bigLogs.infos[name]; ok {
		return path, info
	}
	o.Size = 1 << 30
	if mb, err := strconv.Atoi(os.Getenv("SESSIONLOG_BENCH_SIZE")); err == nil {
		o.Size = int64(mb) << 20
	}
	start := time.Now()
	info := writeBigLog(b, path, o)
	b.Logf("generated %s: %.0f MB, %d entries, %d messages on the branch (%d system), in %v",
		name, float64(info.Bytes)/1e6, info.Entries, info.Messages, info.System, time.Since(start).Round(time.Millisecond))
	bigLogs.infos[name] = info
	return path, info
}

func removeBigLogs() {
	bigLogs.Lock()
	defer bigLogs.Unlock()
	if bigLogs.dir != "" {
		os.RemoveAll(bigLogs.dir)
	}
}

var (
	compacted   = testgen.LogOptions{Kept: 20000, Branches: 2}
	uncompacted = testgen.LogOptions{Branches: 2}
)

// helperBench runs one operation of the benchmarks in a process of its
// own, so that its peak RSS is its own: it prints the milliseconds it took.
// It prints the milliseconds it took, its peak RSS in kB, and the bytes
// of heap still live afterwards (what it keeps: for a resume, the host's
// state).
func helperBench(path, op string) int {
	start := time.Now()
	var err error
	var keep any
	switch op {
	case "load":
		var ld *Loaded
		if ld, err = Load(path); err == nil && len(ld.Entries) == 0 {
			err = fmt.Errorf("nothing loaded")
		}
		keep = ld
	case "read":
		var log *Log
		if log, err = Read(path); err == nil {
			keep, err = log.Branch(log.Leaf().ID)
		}
	case "prompt":
		keep, err = promptAt(path)
	default:
		err = fmt.Errorf("unknown op %q", op)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	took := time.Since(start).Milliseconds()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(keep)
	fmt.Println(took, peakRSS(), ms.HeapAlloc)
	return 0
}

// peakRSS returns this process's peak resident set size in kB: VmHWM of
// /proc/self/status, the high-water mark of its own address space. (The
// rusage Maxrss of a child is no good here: Go starts a child with
// CLONE_VM, and at exec Linux folds the high-water mark of the address
// space it shared with its parent — the benchmark's, large after its own
// runs — into the child's Maxrss.)
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// promptAt is what panto prompt --at ID does: resolve a prefix of an
// entry's id, then derive the prompt from the system messages of its
// chain alone.
func promptAt(path string) ([]conversation.SystemText, error) {
	t, err := Scan(path)
	if err != nil {
		return nil, err
	}
	id, err := t.NthMessage(t.Len() / 2) // an entry far from the leaf
	if err != nil {
		return nil, err
	}
	if id, err = t.Resolve(id[:10]); err != nil {
		return nil, err
	}
	sys, err := t.SystemAt(id)
	if err != nil {
		return nil, err
	}
	blocks := conversation.EffectiveSystem(sys.Messages)
	if len(blocks) == 0 {
		return nil, fmt.Errorf("no prompt")
	}
	return blocks, nil
}

// childRuns runs op on path in runs child processes (the test binary
// again, so a small program) and reports the medians of their peak RSS
// (VmHWM; see peakRSS), of their wall time and CPU time (on a busy
// machine the CPU time tells the work apart from the wait for a core), of
// the heap they keep live, and of their rusage Maxrss, which is an upper
// bound (the parent's peak may be folded into it).
func childRuns(b *testing.B, path, op string, runs int) {
	b.Helper()
	var rss, ms, maxrss, live, cpu []float64
	for range runs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=bench", helperLogEnv+"="+path, helperArgEnv+"="+op)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		require.NoError(b, err)
		var took, hwm, heap float64
		_, err = fmt.Sscan(string(out), &took, &hwm, &heap)
		require.NoError(b, err)
		ms, rss, live = append(ms, took), append(rss, hwm/1024), append(live, heap/(1<<20))
		if ru, ok := testio.MaxRSS(cmd.ProcessState); ok {
			maxrss = append(maxrss, float64(ru)/1024)
		}
		cpu = append(cpu, float64((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Milliseconds()))
	}
	b.ReportMetric(median(rss), "peak-RSS-MB")
	b.ReportMetric(median(maxrss), "maxrss-MB")
	b.ReportMetric(median(live), "live-heap-MB")
	b.ReportMetric(median(ms), "child-ms")
	b.ReportMetric(median(cpu), "child-cpu-ms")
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// BenchmarkResume1GB: what resuming a 1 GB log whose latest compaction is
// 20,000 messages before the leaf costs with Load: in this process (ns/op,
// B/op) and, for the peak RSS, in a child process of its own.
func BenchmarkResume1GB(b *testing.B) {
	heavy(b, "1GB")
	path, info := generatedLog(b, "compacted", compacted)
	b.SetBytes(info.Bytes)
	b.ReportAllocs()
	for b.Loop() {
		ld, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		if ld.Cut != info.FirstKept || ld.MessageCount != info.Messages {
			b.Fatalf("cut %s, %d messages; want %s, %d", ld.Cut, ld.MessageCount, info.FirstKept, info.Messages)
		}
	}
	b.StopTimer()
	childRuns(b, path, "load", 3)
}

// BenchmarkResume1GBNoCompaction: Load of a 1 GB log without compaction,
// which loads every message of the branch.
func BenchmarkResume1GBNoCompaction(b *testing.B) {
	heavy(b, "1GB")
	path, info := generatedLog(b, "uncompacted", uncompacted)
	b.SetBytes(info.Bytes)
	b.ReportAllocs()
	for b.Loop() {
		ld, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(ld.Messages()) != info.Messages {
			b.Fatalf("%d messages, want %d", len(ld.Messages()), info.Messages)
		}
	}
	b.StopTimer()
	childRuns(b, path, "load", 3)
}

// BenchmarkRead1GB is the resume before Load: Read of the whole log, then
// its branch (what the host did), on both 1 GB logs.
func BenchmarkRead1GB(b *testing.B) {
	heavy(b, "1GB")
	for _, c := range []struct {
		name string
		o    testgen.LogOptions
	}{{"compacted", compacted}, {"uncompacted", uncompacted}} {
		b.Run(c.name, func(b *testing.B) {
			path, info := generatedLog(b, c.name, c.o)
			b.SetBytes(info.Bytes)
			b.ReportAllocs()
			for b.Loop() {
				log, err := Read(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := log.Branch(log.Leaf().ID); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			childRuns(b, path, "read", 1)
		})
	}
}

// BenchmarkPromptAt1GB: panto prompt --at ID on the 1 GB log: a scan, a
// prefix resolved, and the system messages of the entry's chain decoded.
func BenchmarkPromptAt1GB(b *testing.B) {
	heavy(b, "1GB")
	path, info := generatedLog(b, "compacted", compacted)
	b.SetBytes(info.Bytes)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := promptAt(path); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	childRuns(b, path, "prompt", 3)
}

// listDir returns a directory of 2,000 session logs of 1 to 50 MB: 50
// distinct logs (one of each size in MB, compacted or not, with zero to
// two branches) under 40 names each, as hard links, so that 51 GB of logs
// take 1.3 GB of disk. Every name has its own sidecar, and scanning a
// name reads all its bytes; but those bytes are the page cache's after the
// first of the 40, where 51 GB of distinct logs would be read from disk.
func listDir(b *testing.B) string {
	bigLogs.Lock()
	defer bigLogs.Unlock()
	if bigLogs.dir == "" {
		dir, err := os.MkdirTemp("", "sessionlog-bench-")
		require.NoError(b, err)
		bigLogs.dir, bigLogs.infos = dir, map[string]testgen.LogInfo{}
	}
	dir := filepath.Join(bigLogs.dir, "list")
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	start := time.Now()
	src := filepath.Join(bigLogs.dir, "list-src")
	require.NoError(b, os.MkdirAll(src, 0o700))
	require.NoError(b, os.MkdirAll(dir, 0o700))
	var total int64
	for k := range 50 {
		o := testgen.LogOptions{Size: int64(k+1) << 20, Branches: k % 3, Session: fmt.Sprintf("00000000-0000-4000-8000-%012d", k)}
		if k%2 == 0 {
			o.Kept = 500 + 40*k
		}
		info := writeBigLog(b, filepath.Join(src, fmt.Sprintf("%02d.jsonl", k)), o)
		total += info.Bytes
	}
	for i := range 2000 {
		require.NoError(b, os.Link(filepath.Join(src, fmt.Sprintf("%02d.jsonl", i%50)), filepath.Join(dir, fmt.Sprintf("s%04d.jsonl", i))))
	}
	b.Logf("2,000 logs: %.0f GB under 2,000 names, %.2f GB on disk, in %v", float64(total)*40/1e9, float64(total)/1e9, time.Since(start).Round(time.Millisecond))
	return dir
}

// listSessions is what panto session list needs of a directory: the
// Summary of every log in it, newest first.
func listSessions(dir string) ([]Summary, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, de := range ents {
		if !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		sum, err := CachedSummary(filepath.Join(dir, de.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, sum)
	}
	slices.SortFunc(out, func(a, b Summary) int { return b.LastTime.Compare(a.LastTime) })
	return out, nil
}

func removeSummaries(b *testing.B, dir string) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.summary"))
	require.NoError(b, err)
	for _, p := range paths {
		require.NoError(b, os.Remove(p))
	}
}

// BenchmarkSessionList2000 lists 2,000 logs of 1 to 50 MB (see listDir)
// with CachedSummary: warm, every sidecar valid (the target: 300 ms); and
// cold, no sidecar, every log scanned and its sidecar written (run it
// with -benchtime 1x: one listing scans 51 GB).
func BenchmarkSessionList2000(b *testing.B) {
	heavy(b, "SessionList")
	dir := listDir(b)
	check := func(b *testing.B, got []Summary) {
		if len(got) != 2000 || got[0].Messages == 0 || got[0].FirstUserText == "" {
			b.Fatalf("listed %d sessions: %+v", len(got), got[0])
		}
	}
	b.Run("warm", func(b *testing.B) {
		got, err := listSessions(dir)
		require.NoError(b, err)
		check(b, got)
		b.ReportAllocs()
		for b.Loop() {
			got, err := listSessions(dir)
			if err != nil {
				b.Fatal(err)
			}
			check(b, got)
		}
	})
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			removeSummaries(b, dir)
			b.StartTimer()
			got, err := listSessions(dir)
			if err != nil {
				b.Fatal(err)
			}
			check(b, got)
		}
	})
}
