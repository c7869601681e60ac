package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/testio"
	"github.com/panto-dev/panto/sdk"
)

// callWithin is call that fails the test, instead of hanging it, when
// the tool does not return within d.
func callWithin(t *testing.T, d time.Duration, dir, name, input string) sdk.ToolResult {
	t.Helper()
	done := make(chan sdk.ToolResult, 1)
	go func() { done <- call(t, dir, name, input) }()
	select {
	case res := <-done:
		return res
	case <-time.After(d):
		t.Fatalf("%s %s did not return within %s", name, input, d)
		return sdk.ToolResult{}
	}
}

// A FIFO, a device or a socket is refused at once, with an error that
// says what it is; nothing blocks on opening it.
func TestSpecialFilesAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testio.Mkfifo(t, filepath.Join(dir, "fifo"), 0o644)
	require.NoError(t, os.Symlink("fifo", filepath.Join(dir, "fifolink")))
	for _, tc := range []struct {
		tool, input, want string
	}{
		{"read", `{"path":"fifo"}`, "fifo: is a named pipe (FIFO); read only reads regular files"},
		{"read", `{"path":"fifolink"}`, "fifolink: is a named pipe (FIFO); read only reads regular files"},
		{"read", `{"path":"/dev/null"}`, "read /dev/null: is a character device; read only reads regular files"},
		{"edit", `{"path":"fifo","edits":[{"old_text":"a","new_text":"b"}]}`, "fifo: is a named pipe (FIFO); edit only changes regular files"},
		{"edit", `{"path":"/dev/null","edits":[{"old_text":"a","new_text":"b"}]}`, "edit /dev/null: is a character device; edit only changes regular files"},
		{"write", `{"path":"fifo","content":"x"}`, "fifo: is a named pipe (FIFO); write only writes regular files"},
		{"write", `{"path":"fifolink","content":"x"}`, "fifolink: is a named pipe (FIFO); write only writes regular files"},
		{"write", `{"path":"/dev/null","content":"x"}`, "write /dev/null: is a character device; write only writes regular files"},
		{"grep", `{"pattern":"a","path":"fifo"}`, "fifo: is a named pipe (FIFO); grep only searches regular files"},
		{"grep", `{"pattern":"a","path":"/dev/null"}`, "grep /dev/null: is a character device; grep only searches regular files"},
	} {
		res := callWithin(t, 5*time.Second, dir, tc.tool, tc.input)
		require.True(t, res.IsError, "%s %s: %s", tc.tool, tc.input, res.Content)
		require.Contains(t, res.Content, tc.want)
	}
	fi, err := os.Lstat(filepath.Join(dir, "fifo"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeNamedPipe, "the FIFO was replaced")

	// In a directory, grep skips them.
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	res := callWithin(t, 5*time.Second, dir, "grep", `{"pattern":"a"}`)
	require.Equal(t, "a.txt:1: a\n", res.Content)
}

// A search through a symlink to a directory searches the directory.
func TestSearchUnderASymlinkedDirectory(t *testing.T) {
	t.Parallel()
	dir := tree(t)
	res := call(t, dir, "grep", `{"pattern":"Hello","path":"cmdlink"}`)
	require.Equal(t, "cmdlink/tool/tool.go:3: // Hello greets.\ncmdlink/tool/tool.go:4: func Hello() {}\n", res.Content)
	res = call(t, dir, "find", `{"pattern":"*.go","path":"cmdlink"}`)
	require.Equal(t, "cmdlink/tool/tool.go\ncmdlink/tool/tool_test.go\n", res.Content)
	res = call(t, dir, "grep", `{"pattern":"package","path":"maingo"}`)
	require.True(t, res.IsError)
	require.NoError(t, os.Symlink("main.go", filepath.Join(dir, "maingo")))
	res = call(t, dir, "grep", `{"pattern":"package","path":"maingo"}`)
	require.Equal(t, "maingo:1: package main\n", res.Content)
}

// bigLine writes a file of one line of n bytes of 'a' (and a newline),
// in chunks, with extra written at offset at.
func bigLine(t *testing.T, p string, n int, at int, extra string) {
	t.Helper()
	f, err := os.Create(p)
	require.NoError(t, err)
	chunk := []byte(strings.Repeat("a", 1<<20))
	for written := 0; written < n; {
		k := min(len(chunk), n-written)
		_, err := f.Write(chunk[:k])
		require.NoError(t, err)
		written += k
	}
	_, err = f.WriteString("\n")
	require.NoError(t, err)
	if extra != "" {
		_, err = f.WriteAt([]byte(extra), int64(at))
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
}

// allocated is how many bytes fn allocates on the heap: an upper bound
// of how much its peak heap grows. The tests that use it do not run in
// parallel, so nothing else allocates meanwhile.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const MiB = 1 << 20

// read and grep stream a file with a bounded line buffer: a 200 MB line
// costs a few MB, not the line. (Not parallel: it measures allocation.)
func TestHugeLineBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MB file")
	}
	dir := t.TempDir()
	const size = 200 * MiB
	bigLine(t, filepath.Join(dir, "big.txt"), size, 150*MiB, "needle")

	var res sdk.ToolResult
	n := allocated(func() { res = call(t, dir, "read", `{"path":"big.txt"}`) })
	require.False(t, res.IsError, res.Content)
	require.Equal(t, fmt.Sprintf("     1\t%s… [line cut: %d bytes]\n", strings.Repeat("a", maxLineLen), size), res.Content)
	require.Less(t, n, uint64(4*MiB), "read of a %d MB line allocated %d MB", size/MiB, n/MiB)
	t.Logf("read of a %d MB line: %.1f MB allocated", size/MiB, float64(n)/MiB)

	// A literal is searched for in chunks; a+b? matches at once. (Any
	// other regexp over the whole line streams at some 25 MB/s: see
	// TestGrepStreamsALongLine.)
	for _, pattern := range []string{"zebra", "needle", "a+b?"} {
		n = allocated(func() { res = call(t, dir, "grep", js(t, map[string]string{"pattern": pattern, "path": "big.txt"})) })
		require.False(t, res.IsError, res.Content)
		if pattern == "zebra" {
			require.Equal(t, "No matches for zebra in "+filepath.Join(dir, "big.txt")+".", res.Content)
		} else {
			require.Equal(t, fmt.Sprintf("big.txt:1: %s… [line cut: %d bytes]\n", strings.Repeat("a", grepLineLen), size), res.Content)
		}
		require.Less(t, n, uint64(maxGrepLine+4*MiB), "grep %s of a %d MB line allocated %d MB", pattern, size/MiB, n/MiB)
		t.Logf("grep %s of a %d MB line: %.1f MB allocated", pattern, size/MiB, float64(n)/MiB)
	}
}

// grep matches a line longer than it holds in memory by streaming it
// through the regexp: a match far into the line is found.
func TestGrepStreamsALongLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bigLine(t, filepath.Join(dir, "long.txt"), MiB, 700*1024, "needle")
	writeFiles(t, dir, map[string]string{"short.txt": "x needle\n"})
	for _, pattern := range []string{"needle", "ne+dle", "^a+needlea+$"} { // a literal, and regexps
		re := regexp.MustCompile(pattern)
		for _, maxLine := range []int{64 * 1024, 8 * MiB} { // streamed, and held
			r := results{limit: 10}
			require.NoError(t, grepFile(t.Context(), filepath.Join(dir, "long.txt"), "long.txt", re, &r, maxLine))
			require.NoError(t, grepFile(t.Context(), filepath.Join(dir, "short.txt"), "short.txt", re, &r, maxLine))
			want := fmt.Sprintf("long.txt:1: %s… [line cut: %d bytes]\n", strings.Repeat("a", grepLineLen), MiB)
			if pattern != "^a+needlea+$" {
				want += "short.txt:1: x needle\n"
			}
			require.Equal(t, want, r.note("", ""), "%s, lines held up to %d", pattern, maxLine)
		}
	}
	re := regexp.MustCompile("zebra")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := results{limit: 10}
	require.ErrorIs(t, grepFile(ctx, filepath.Join(dir, "long.txt"), "long.txt", re, &r, 64*1024), context.Canceled)
}

// edit refuses a file over its limit before reading it, and edits one
// under it with about two copies of the file in memory, not four. (Not
// parallel: it measures allocation.)
func TestEditSizeLimitAndMemory(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "huge.txt")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxEditSize+1)) // sparse
	require.NoError(t, f.Close())
	var res sdk.ToolResult
	n := allocated(func() {
		res = call(t, dir, "edit", `{"path":"huge.txt","edits":[{"old_text":"a","new_text":"b"}]}`)
	})
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "edit "+p+": the file is 67108865 bytes; edit changes files up to 64 MiB; use bash (sed) for larger ones")
	require.Less(t, n, uint64(MiB))

	const size = 32 * MiB
	bigLine(t, filepath.Join(dir, "big.txt"), size, 0, "HEAD")
	n = allocated(func() {
		res = call(t, dir, "edit", `{"path":"big.txt","edits":[{"old_text":"HEAD","new_text":"TOP"}]}`)
	})
	require.False(t, res.IsError, res.Content)
	require.Less(t, n, uint64(2*size+4*MiB), "an edit of a %d MB file allocated %d MB", size/MiB, n/MiB)
	t.Logf("edit of a %d MB file: %.1f MB allocated", size/MiB, float64(n)/MiB)

	content := strings.Repeat("w", size)
	n = allocated(func() { _, err = writeFile(t.Context(), dir, writeInput{Path: "w.txt", Content: content}) })
	require.NoError(t, err)
	require.Less(t, n, uint64(MiB), "a write of %d MB allocated %d MB", size/MiB, n/MiB)
}

// read stops when its call is cancelled.
func TestReadCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": strings.Repeat("line\n", 10000)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := callCtx(t, ctx, dir, "read", `{"path":"f.txt"}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "context canceled")
}
