package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testio"
	"github.com/panto-dev/panto/sessionlog"
)

// runWithin runs panto like h.run, but kills it after d: a panto that
// blocks on a file must fail the test, not hang it.
func runWithin(t *testing.T, h *harness, d time.Duration, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, pantoBin, args...)
	cmd.Dir = h.project
	cmd.Env = h.environ()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "panto %v did not finish within %s\nstderr: %s", args, d, errb.String())
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{out.String(), errb.String(), code}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	testio.Mkfifo(t, path, 0o644)
}

// A prompt or config file that is a FIFO, a device or too large is an
// error naming the file, at once: a FIFO used to hang panto for good and
// /dev/zero as SYSTEM.md grew it to gigabytes.
func TestSpecialAndHugePromptFiles(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 1<<20+1)
	for _, tc := range []struct {
		name, file string
		make       func(t *testing.T, path string)
		want       string
	}{
		{"fifo SYSTEM.md", "SYSTEM.md", mkfifo, "a named pipe (FIFO), want a regular file"},
		{"fifo APPEND_SYSTEM.md", "APPEND_SYSTEM.md", mkfifo, "a named pipe (FIFO), want a regular file"},
		{"fifo USER_PROMPT.md", "USER_PROMPT.md", mkfifo, "a named pipe (FIFO), want a regular file"},
		{"fifo config.toml", "config.toml", mkfifo, "a named pipe (FIFO), want a regular file"},
		{"device SYSTEM.md", "SYSTEM.md", func(t *testing.T, p string) { require.NoError(t, os.Symlink("/dev/zero", p)) }, "a device, want a regular file"},
		{"device config.toml", "config.toml", func(t *testing.T, p string) { require.NoError(t, os.Symlink("/dev/zero", p)) }, "a device, want a regular file"},
		{"huge APPEND_SYSTEM.md", "APPEND_SYSTEM.md", func(t *testing.T, p string) { require.NoError(t, os.WriteFile(p, []byte(huge), 0o644)) }, "larger than 1 MiB, the limit for this file"},
		{"huge USER_PROMPT.md", "USER_PROMPT.md", func(t *testing.T, p string) { require.NoError(t, os.WriteFile(p, []byte(huge), 0o644)) }, "larger than 1 MiB, the limit for this file"},
		{"huge config.toml", "config.toml", func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte("# "+huge+"\n"), 0o644))
		}, "larger than 1 MiB, the limit for this file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			dir := h.projectDir()
			if tc.file == "config.toml" || strings.HasPrefix(tc.name, "device") {
				// A project's config.toml is only read once trusted
				// (trust_e2e_test.go); a project's link to a device is
				// refused for leaving the project (sysprompt's tests).
				dir = h.userDir()
			}
			path := filepath.Join(dir, tc.file)
			require.NoError(t, os.MkdirAll(dir, 0o755))
			tc.make(t, path)
			r := runWithin(t, h, 20*time.Second, "", "-p", "hi", "--provider", "echo")
			require.Equal(t, 1, r.code, r.stderr)
			require.Contains(t, r.stderr, path+": "+tc.want)
			require.Empty(t, r.stdout)
		})
	}
}

// --system-prompt and --append-system-prompt read a pipe named on the
// command line (<(cmd), /dev/stdin) once, bounded; a device is refused.
func TestPromptFlagPipesAndDevices(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := runWithin(t, h, 20*time.Second, "seed from a pipe\n", "prompt", "--system-prompt", "/dev/stdin")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "--- block 1 · --system-prompt (file /dev/stdin) ---\nseed from a pipe\n")

	// A named FIFO: its open waits for the writer, as cat's would.
	fifo := filepath.Join(h.root, "prompt.fifo")
	mkfifo(t, fifo)
	wrote := make(chan error, 1)
	go func() { wrote <- os.WriteFile(fifo, []byte("appended from a pipe\n"), 0) }()
	t.Cleanup(func() { // release the writer if panto never read
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	r = runWithin(t, h, 20*time.Second, "", "-p", "hi", "--provider", "echo", "--no-session", "--append-system-prompt", fifo)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "appended from a pipe")
	require.NoError(t, <-wrote)

	r = runWithin(t, h, 20*time.Second, strings.Repeat("y", 1<<20+1), "prompt", "--system-prompt", "/dev/stdin")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "--system-prompt /dev/stdin: more than 1 MiB from the pipe, the limit for this file")

	r = runWithin(t, h, 20*time.Second, "", "-p", "hi", "--provider", "echo", "--append-system-prompt", "/dev/zero")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "panto: --append-system-prompt /dev/zero: a device, want a file or a pipe")
	require.Empty(t, h.sessionFiles(), "a mistaken flag leaves no session log")
}

// A FIFO (or anything but a regular file) named *.jsonl in the sessions
// folder is skipped with a warning by session list, -c and --resume; it
// used to hang them.
func TestFIFOInSessionsFolderIsSkipped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "the real one", "--provider", "echo")
	real := h.sessionFiles()[0]
	fifo := filepath.Join(filepath.Dir(real), "29990101T000000Z_f1f0f1f0-0000-4000-8000-000000000000.jsonl")
	mkfifo(t, fifo)
	later := time.Now().Add(time.Hour)
	_ = os.Chtimes(fifo, later, later) // (opens nothing on a FIFO)
	warning := "panto: warning: skipping " + fifo + ": a named pipe (FIFO), not a session log\n"

	r := runWithin(t, h, 20*time.Second, "", "session", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "the real one")
	require.NotContains(t, r.stdout, "f1f0f1f0")
	require.Equal(t, warning, r.stderr)

	r = runWithin(t, h, 20*time.Second, "", "-p", "continued", "--provider", "echo", "-c")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, warning)
	data, err := os.ReadFile(real)
	require.NoError(t, err)
	require.Contains(t, string(data), "continued")

	r = runWithin(t, h, 20*time.Second, "", "-p", "x", "--provider", "echo", "--resume", "f1f0f1f0")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, warning)
	require.Contains(t, r.stderr, "--resume f1f0f1f0: no session with that id")

	r = runWithin(t, h, 20*time.Second, "", "-p", "x", "--provider", "echo", "--session", fifo)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "--session "+fifo+": a named pipe (FIFO), want a session log file")
}

// A prompt file that is not UTF-8 is refused: its text could never match
// the log's (JSON keeps U+FFFD), so every resume re-seeded and dropped the
// extensions' edits.
func TestInvalidUTF8PromptFileIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	appendFile := filepath.Join(h.projectDir(), "APPEND_SYSTEM.md")
	h.write(appendFile, "Be brief.\n")
	h.ok("-p", "first", "--provider", "echo")
	log := h.sessionFiles()[0]
	appendSystem(t, log, "an extension's note", "append")
	before, err := os.ReadFile(log)
	require.NoError(t, err)

	h.write(appendFile, "Be brief.\nR\xe9pondez en fran\xe7ais.\n") // Latin-1
	r := h.run("", "-p", "second", "--provider", "echo", "-c")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "panto: "+appendFile+": not valid UTF-8 at byte 12 (line 2): save it as UTF-8\n")
	after, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "nothing recorded, no re-seed")

	for _, file := range []string{"SYSTEM.md", "USER_PROMPT.md"} {
		h := newHarness(t)
		p := filepath.Join(h.projectDir(), file)
		h.write(p, "ab\xffc")
		r := h.run("", "-p", "hi", "--provider", "echo", "--no-session")
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, p+": not valid UTF-8 at byte 3 (line 1): save it as UTF-8")
	}

	flagFile := filepath.Join(h.root, "extra.md")
	h.write(flagFile, "\xff")
	r = h.run("", "prompt", "--append-system-prompt", flagFile)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "--append-system-prompt "+flagFile+": not valid UTF-8 at byte 1 (line 1): save it as UTF-8")
}

// writeBigLog writes a valid session log of about size bytes in cwd's
// sessions folder of h: a header, a first user message, then assistant
// messages of 10 KB each.
func writeBigLog(t testing.TB, h *harness, size int) string {
	t.Helper()
	dir := filepath.Join(h.home, "data", "panto", "sessions", layers.EncodePath(h.project))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "20200101T000000Z_b1b1b1b1-0000-4000-8000-000000000000.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{ID: "b1b1b1b1-0000-4000-8000-000000000000", Cwd: h.project})
	require.NoError(t, err)
	es, err := w.Append(sessionlog.MessageEntry(conversation.SystemMessage("seed", conversation.ModeReplace)),
		sessionlog.MessageEntry(conversation.UserText("the big question")))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	text := strings.Repeat("lorem ipsum ", 10<<10/12)
	parent := es[len(es)-1].ID
	var buf bytes.Buffer
	for i := 0; ; i++ {
		id := "e" + itoa(i)
		buf.WriteString(`{"type":"message","id":"` + id + `","parent_id":"` + parent + `","time":"2020-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"text","text":"` + text + `"}]}}` + "\n")
		parent = id
		if buf.Len() > 4<<20 || i%1000 == 999 {
			_, err := f.Write(buf.Bytes())
			require.NoError(t, err)
			buf.Reset()
			st, err := f.Stat()
			require.NoError(t, err)
			if st.Size() >= int64(size) {
				break
			}
		}
	}
	require.NoError(t, f.Close())
	return path
}

// session list's rows come from each log's summary, cached beside it
// (<log>.summary): a log that has not changed is not read again, whatever
// its size, and the count is exact.
func TestSessionListComesFromTheSummaryCache(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "a small one", "--provider", "echo")
	small := h.sessionFiles()[0]
	big := writeBigLog(t, h, 8<<20)

	r := h.ok("session", "list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3, r.stdout)
	require.Equal(t, []string{"ID", "NAME", "UPDATED", "MESSAGES", "BRANCHES", "LABELS", "FIRST", "MESSAGE"}, strings.Fields(lines[0]))
	rows := map[string][]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		rows[f[0]] = f
	}
	bigRow := rows["b1b1b1b1-0000-4000-8000-000000000000"]
	require.NotNil(t, bigRow, lines)
	require.Equal(t, "-", bigRow[1], "no name")
	require.Equal(t, "1", bigRow[5], "one branch")
	require.Equal(t, []string{"the", "big", "question"}, bigRow[6:], lines)
	require.Equal(t, itoa(len(logMessages(t, big))), bigRow[4], "the count is exact, even for a large log")
	var smallRow []string
	for id, f := range rows {
		if id != bigRow[0] {
			smallRow = f
		}
	}
	require.Equal(t, itoa(len(logMessages(t, small))), smallRow[4])
	require.Equal(t, []string{"1", "a", "small", "one"}, smallRow[5:])

	// The second listing reads the sidecar, not the log: doctor the
	// sidecar (the log unchanged) and the row follows it.
	side := big + ".summary"
	data, err := os.ReadFile(side)
	require.NoError(t, err, "listing left the summary beside the log")
	require.NoError(t, os.WriteFile(side, bytes.Replace(data, []byte("the big question"), []byte("from the cache"), 1), 0o600))
	require.Contains(t, h.ok("session", "list").stdout, "from the cache")

	// A log that changed is summarised again.
	f, err := os.OpenFile(big, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"label","id":"ffffffffffffff01","parent_id":"` + lastID(t, big) + `","time":"2026-03-14T10:05:01Z","target":"` + lastID(t, big) + `","label":"big one"}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	out := h.ok("session", "list").stdout
	require.NotContains(t, out, "from the cache")
	require.Contains(t, out, "big one")
}

// lastID is the id of the last entry of the log at path.
func lastID(t *testing.T, path string) string {
	t.Helper()
	lines := logLines(t, path)
	return lines[len(lines)-1]["id"].(string)
}

// Config values out of range, NaN or infinite are errors at load naming
// the file, the key and the allowed range: not failures of each request.
func TestConfigRangesCheckedAtLoad(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"compaction_threshold = nan\n", "line 1 column 24: compaction_threshold nan: want a share of the window above 0 and at most 1"},
		{"temperature = inf\n", "line 1 column 15: temperature inf: want a number from 0 to 2"},
		{"temperature = nan\n", "line 1 column 15: temperature nan: want a number from 0 to 2"},
		{"model = \"m\"\ntemperature = 2.5\n", "line 2 column 15: temperature 2.5: want a number from 0 to 2"},
		{"compaction_keep_tokens = -1\n", "line 1 column 26: compaction_keep_tokens -1: want 0 or more"},
		{"max_tokens = -5\n", "line 1 column 14: max_tokens -5: want a positive number"},
	} {
		h := newHarness(t)
		path := config.Path(h.userDir())
		h.write(path, tc.in)
		r := h.run("", "-p", "hi", "--provider", "echo")
		require.Equal(t, 1, r.code, tc.in)
		require.Equal(t, "panto: config "+path+" "+tc.want+" (see docs/config.md)\n", r.stderr, tc.in)
		require.Empty(t, h.sessionFiles())
	}
}

// The thinking budget is checked against the provider of the run, which a
// flag may set: Anthropic's minimum is 1024 and it must stay below
// max_tokens.
func TestConfigThinkingBudgetForTheProvider(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env["ANTHROPIC_API_KEY"] = "k"
	path := config.Path(h.userDir())
	h.write(path, "provider = \"openai\"\nthinking_budget = 500\n")
	r := h.run("", "-p", "hi", "--provider", "anthropic", "--no-session")
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, "panto: config "+path+" line 2 column 19: thinking_budget 500: anthropic wants 0 (off) or at least 1024 (see docs/config.md)\n", r.stderr)
}

// --session names a file in an existing directory: a typo in the
// directory is an error, not a silent mkdir -p. panto still creates the
// sessions folder when it picks the path itself.
func TestSessionFlagNeedsAnExistingDirectory(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	missing := filepath.Join(h.root, "no", "such")
	r := h.run("", "-p", "hi", "--provider", "echo", "--session", filepath.Join(missing, "s.jsonl"))
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, "panto: --session "+filepath.Join(missing, "s.jsonl")+": directory "+missing+" does not exist\n", r.stderr)
	_, err := os.Stat(filepath.Join(h.root, "no"))
	require.ErrorIs(t, err, os.ErrNotExist)

	h.ok("-p", "hi", "--provider", "echo", "--session", filepath.Join(h.root, "s.jsonl"))
	h.ok("-p", "hi", "--provider", "echo") // creates $PANTO_HOME/sessions/<dir>/
	require.Len(t, h.sessionFiles(), 1)
}

// The OpenAI provider without a key fails at once, as Anthropic does,
// unless the base URL is a local server, which needs none.
func TestOpenAIWithoutAKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	start := time.Now()
	r := runWithin(t, h, 20*time.Second, "", "-p", "hi", "--provider", "openai", "--no-session")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "panto: provider openai: no API key: set OPENAI_API_KEY")
	require.Less(t, time.Since(start), 5*time.Second, "no request, no retries")

	r = runWithin(t, h, 20*time.Second, "", "-p", "hi", "--provider", "openai", "--no-session", "--base-url", "https://openrouter.ai/api/v1")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "no API key: set OPENAI_API_KEY")

	fake := newFake(t, openaiText("local answer"))
	local := strings.Replace(fake.srv.URL, "127.0.0.1", "localhost", 1) + "/v1"
	r = runWithin(t, h, 20*time.Second, "", "-p", "hi", "--provider", "openai", "--no-session", "--base-url", local)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "local answer\n", r.stdout)
	require.Empty(t, fake.request(t, 0).header.Get("authorization"))
}
