//go:build unix

package layers

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	require.NoError(t, os.WriteFile(small, []byte("hello"), 0o644))
	exact := filepath.Join(dir, "exact")
	require.NoError(t, os.WriteFile(exact, []byte(strings.Repeat("x", 100)), 0o644))
	over := filepath.Join(dir, "over")
	require.NoError(t, os.WriteFile(over, []byte(strings.Repeat("x", 101)), 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(small, link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	for _, tc := range []struct {
		path, text, problem string
		pipes               Pipes
		is                  error
	}{
		{path: small, text: "hello"},
		{path: link, text: "hello"},
		{path: exact, text: strings.Repeat("x", 100)},
		{path: over, problem: "larger than 100 bytes, the limit for this file", is: ErrTooLarge},
		{path: over, pipes: PipesToo, problem: "larger than 100 bytes, the limit for this file", is: ErrTooLarge},
		{path: fifo, problem: "a named pipe (FIFO), want a regular file", is: ErrNotRegular},
		{path: dir, problem: "a directory, want a regular file", is: ErrNotRegular},
		{path: dir, pipes: PipesToo, problem: "a directory, want a file or a pipe", is: ErrNotRegular},
		{path: "/dev/zero", problem: "a device, want a regular file", is: ErrNotRegular},
		{path: "/dev/zero", pipes: PipesToo, problem: "a device, want a file or a pipe", is: ErrNotRegular},
		{path: filepath.Join(dir, "missing"), is: os.ErrNotExist},
	} {
		got, err := ReadFile(tc.path, 100, tc.pipes)
		if tc.is == nil {
			require.NoError(t, err, tc.path)
			require.Equal(t, tc.text, string(got))
			continue
		}
		require.ErrorIs(t, err, tc.is, tc.path)
		if tc.problem != "" {
			require.EqualError(t, err, tc.problem, tc.path)
		}
	}
}

// A pipe named on the command line is read, bounded.
func TestReadFilePipe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		write, problem string
	}{
		{write: "from the pipe"},
		{write: strings.Repeat("y", 1000), problem: "more than 100 bytes from the pipe, the limit for this file"},
	} {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		go func() {
			w.WriteString(tc.write)
			w.Close()
		}()
		got, err := ReadFile("/dev/fd/"+strconv.Itoa(int(r.Fd())), 100, PipesToo)
		r.Close()
		if tc.problem != "" {
			require.ErrorIs(t, err, ErrTooLarge)
			require.EqualError(t, err, tc.problem)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.write, string(got))
	}
}

// Opening a FIFO put where a regular file was never blocks.
func TestOpenRegularNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "f")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() {
		_, _, err := OpenRegular(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrNotRegular)
	case <-time.After(5 * time.Second):
		t.Fatal("OpenRegular blocked on a FIFO")
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	require.Equal(t, "1 MiB", Size(1<<20))
	require.Equal(t, "512 KiB", Size(512<<10))
	require.Equal(t, "100 bytes", Size(100))
}
