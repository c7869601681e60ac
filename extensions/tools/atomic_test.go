package main

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// interruptContent is the file a killed write or edit starts from and
// the content it writes: 4 MB, different in its first line only, so a
// file cut short or mixed shows.
func interruptContent() (old, new string) {
	filler := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 4<<20/64)
	return "HEAD old\n" + filler, "HEAD new\n" + filler
}

// A write or edit killed at any point leaves the file as it was or as it
// is meant to be, never cut short. The helper process is this test
// binary; it is SIGKILLed after a random delay within the time a whole
// write takes.
func TestInterruptedWriteOrEditKeepsTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	t.Parallel()
	oldContent, newContent := interruptContent()
	for _, what := range []string{"write", "edit"} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := filepath.Join(dir, "big.txt")
			// run starts the helper on a fresh old file and, when
			// kill >= 0, SIGKILLs it that long after it is ready. It
			// reports whether the helper finished its write, and how
			// long it ran after it was ready.
			run := func(kill time.Duration) (bool, time.Duration) {
				require.NoError(t, os.WriteFile(p, []byte(oldContent), 0o644))
				cmd := exec.Command(os.Args[0], "-test.run=^$", p)
				// (A -race binary otherwise sleeps a second at exit.)
				cmd.Env = append(os.Environ(), helperEnv+"="+what, "GORACE=atexit_sleep_ms=0")
				out, err := cmd.StdoutPipe()
				require.NoError(t, err)
				cmd.Stderr = os.Stderr // the helper's errors, if any
				require.NoError(t, cmd.Start())
				r := bufio.NewReader(out)
				line, err := r.ReadString('\n')
				require.NoError(t, err)
				require.Equal(t, "ready\n", line)
				ready := time.Now()
				if kill >= 0 {
					time.Sleep(kill)
					_ = cmd.Process.Signal(syscall.SIGKILL)
				}
				rest, _ := r.ReadString('\n')
				took := time.Since(ready)
				err = cmd.Wait()
				if kill < 0 {
					require.NoError(t, err)
				}
				return err == nil && rest == "done\n", took
			}

			// How long a whole write takes, to kill within it.
			done, took := run(-1)
			require.True(t, done)
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			require.True(t, string(got) == newContent, "an uninterrupted %s did not write the new content", what)

			var killed, finished int
			for i := range 20 {
				delay := time.Duration(rand.Int64N(int64(took) + 1))
				done, _ := run(delay)
				got, err := os.ReadFile(p)
				require.NoError(t, err)
				switch {
				case string(got) == newContent:
				case string(got) == oldContent:
					require.False(t, done, "the %s finished but the file is the old one", what)
				default:
					t.Fatalf("%s killed after %s (run %d): the file is neither old nor new: %d bytes, starting %q",
						what, delay, i, len(got), got[:min(len(got), 20)])
				}
				if done {
					finished++
				} else {
					killed++
				}
			}
			t.Logf("%s takes %s; killed %d times, finished %d times", what, took, killed, finished)
		})
	}
}

// entries lists dir's names, to see that no temporary file is left.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// write and edit replace a file with a new one: the mode is kept, a
// symlink stays a symlink and its target changes, other hard links keep
// the old content and the result says so.
func TestWriteAndEditReplaceTheFile(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"write", "edit"} {
		input := func(path string) string {
			if tool == "write" {
				return js(t, map[string]string{"path": path, "content": "new\n"})
			}
			return js(t, map[string]any{"path": path, "edits": []map[string]string{{"old_text": "old", "new_text": "new"}}})
		}
		t.Run(tool+" keeps the mode", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, mode := range []os.FileMode{0o600, 0o755, 0o640} {
				p := filepath.Join(dir, "f")
				require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o600))
				require.NoError(t, os.Chmod(p, mode))
				res := call(t, dir, tool, input("f"))
				require.False(t, res.IsError, res.Content)
				fi, err := os.Stat(p)
				require.NoError(t, err)
				require.Equal(t, mode, fi.Mode().Perm())
				require.Equal(t, "new\n", readString(t, p))
			}
			require.Equal(t, []string{"f"}, entries(t, dir))
		})
		t.Run(tool+" writes through symlinks", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"real/f.txt": "old\n"})
			require.NoError(t, os.Symlink("real/f.txt", filepath.Join(dir, "rel")))                // relative
			require.NoError(t, os.Symlink(filepath.Join(dir, "rel"), filepath.Join(dir, "chain"))) // to a link
			for _, link := range []string{"rel", "chain"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "real/f.txt"), []byte("old\n"), 0o644))
				res := call(t, dir, tool, input(link))
				require.False(t, res.IsError, res.Content)
				require.Contains(t, res.Content, link+" (a symlink to "+filepath.Join(dir, "real/f.txt")+")")
				fi, err := os.Lstat(filepath.Join(dir, link))
				require.NoError(t, err)
				require.NotZero(t, fi.Mode()&os.ModeSymlink, "%s is no longer a symlink", link)
				require.Equal(t, "new\n", readString(t, filepath.Join(dir, "real/f.txt")))
			}
			require.Equal(t, []string{"f.txt"}, entries(t, filepath.Join(dir, "real")))
		})
		t.Run(tool+" says hard links keep the old content", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"a": "old\n"})
			require.NoError(t, os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")))
			res := call(t, dir, tool, input("a"))
			require.False(t, res.IsError, res.Content)
			require.Contains(t, res.Content, "The file had 1 other hard link; that name keeps the old content.")
			require.Equal(t, "new\n", readString(t, filepath.Join(dir, "a")))
			require.Equal(t, "old\n", readString(t, filepath.Join(dir, "b")))
		})
	}
}

func TestWriteThroughADanglingSymlinkCreatesItsTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Symlink("sub/target.txt", filepath.Join(dir, "link")))
	res := call(t, dir, "write", `{"path":"link","content":"x"}`)
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "Created "+filepath.Join(dir, "link")+" (a symlink to "+filepath.Join(dir, "sub/target.txt")+")")
	require.Equal(t, "x", readString(t, filepath.Join(dir, "sub/target.txt")))
	fi, err := os.Stat(filepath.Join(dir, "sub/target.txt"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644)&^umask(), fi.Mode().Perm())

	require.NoError(t, os.Symlink("loop", filepath.Join(dir, "loop")))
	res = call(t, dir, "write", `{"path":"loop","content":"x"}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "too many levels of symbolic links")
}

// A write that fails part-way — its call cancelled before the commit,
// or the rename refused — leaves the file as it was and no temporary
// file behind, whether the temporary file had a name or not.
func TestWriteAtomicFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o644))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = writeAtomic(ctx, p, fi, strings.Repeat("new\n", 3<<20))
	require.ErrorIs(t, err, errInterrupted)
	require.Equal(t, "old\n", readString(t, p))
	require.Equal(t, []string{"f"}, entries(t, dir))

	// The rename fails: the target became a directory meanwhile.
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d", "x"), nil, 0o644))
	err = writeAtomic(t.Context(), filepath.Join(dir, "d"), nil, "x")
	require.Error(t, err)
	require.Equal(t, []string{"d", "f"}, entries(t, dir))

	for _, unnamed := range []bool{true, false} {
		tf, err := makeTemp(p, 0o644, unnamed)
		require.NoError(t, err)
		if unnamed && tf.name != "" {
			t.Log("no O_TMPFILE in", dir, "(the named fallback is used)")
		}
		require.False(t, !unnamed && tf.name == "")
		_, err = tf.f.WriteString("x")
		require.NoError(t, err)
		require.ErrorIs(t, tf.commit(ctx, p), errInterrupted)
		require.Equal(t, []string{"d", "f"}, entries(t, dir))
	}
}

// A directory the user cannot create files in: the file is not written
// in place (that could damage it); the error says why.
func TestWriteInAReadOnlyDirectory(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root may create files anywhere")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"ro/f": "old\n"})
	require.NoError(t, os.Chmod(filepath.Join(dir, "ro"), 0o555))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "ro"), 0o755) })
	res := call(t, dir, "write", `{"path":"ro/f","content":"new\n"}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "create a temporary file beside it")
	require.Contains(t, res.Content, "permission denied")
	require.Equal(t, "old\n", readString(t, filepath.Join(dir, "ro/f")))
}
