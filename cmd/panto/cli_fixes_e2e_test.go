package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// in runs panto in dir instead of the harness's project directory.
func (h *harness) in(dir string, stdin string, args ...string) result {
	h.t.Helper()
	require.NoError(h.t, os.MkdirAll(dir, 0o755))
	saved := h.project
	h.project = dir
	defer func() { h.project = saved }()
	return h.run(stdin, args...)
}

// okIn is in that requires exit status 0.
func (h *harness) okIn(dir string, args ...string) result {
	h.t.Helper()
	r := h.in(dir, "", args...)
	require.Equal(h.t, 0, r.code, "panto %v in %s\nstdout: %s\nstderr: %s", args, dir, r.stdout, r.stderr)
	return r
}

// /w/a/b and /w/a-b encode to the same sessions folder; each directory
// still sees only its own sessions.
func TestSessionsOfDirectoriesSharingAFolder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ab := filepath.Join(h.root, "w", "a", "b")
	aDashB := filepath.Join(h.root, "w", "a-b")

	h.okIn(ab, "-p", "from a/b", "--provider", "echo")
	require.Len(t, h.sessionFiles(), 1)
	abLog := h.sessionFiles()[0]

	require.Contains(t, h.okIn(aDashB, "session", "list").stdout, "no sessions in "+aDashB)
	require.Equal(t, 1, h.in(aDashB, "", "prompt", "-c").code)
	// -c with none to continue starts one (as pi does), saying so: a
	// session of a-b, newer than a/b's, in the same folder.
	r := h.in(aDashB, "", "-p", "from a-b", "--provider", "echo", "-c")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "no session to continue in "+aDashB+": starting a new one")
	require.NotContains(t, r.stdout, "from a/b", "a/b's session is not continued")
	files := h.sessionFiles()
	require.Len(t, files, 2)
	require.Equal(t, filepath.Dir(files[0]), filepath.Dir(files[1]), "the two directories share a folder")
	dashLog := files[0]
	if dashLog == abLog {
		dashLog = files[1]
	}

	list := h.okIn(aDashB, "session", "list").stdout
	require.Contains(t, list, "from a-b")
	require.NotContains(t, list, "from a/b")
	list = h.okIn(ab, "session", "list").stdout
	require.Contains(t, list, "from a/b")
	require.NotContains(t, list, "from a-b")

	// -c in a/b continues a/b's session, though a-b's is newer.
	h.okIn(ab, "-p", "second in a/b", "--provider", "echo", "-c")
	data, err := os.ReadFile(abLog)
	require.NoError(t, err)
	require.Contains(t, string(data), "second in a/b")
	data, err = os.ReadFile(dashLog)
	require.NoError(t, err)
	require.NotContains(t, string(data), "second in a/b")

	// --resume ID prefers this directory's sessions: a prefix that both
	// ids share is not ambiguous in a-b.
	dir := filepath.Dir(abLog)
	h.write(filepath.Join(dir, "20200101T000000Z_feed0001-0000-4000-8000-000000000000.jsonl"), header("feed0001-0000-4000-8000-000000000000", ab))
	h.write(filepath.Join(dir, "20200101T000000Z_feed0002-0000-4000-8000-000000000000.jsonl"), header("feed0002-0000-4000-8000-000000000000", aDashB))
	r = h.okIn(aDashB, "prompt", "--resume", "feed000", "--json")
	require.Contains(t, r.stdout, `"blocks"`)
	r = h.in(h.project, "", "prompt", "--resume", "feed000")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "2 sessions match")
}

// header is the first line of a session log of cwd.
func header(id, cwd string) string {
	q, _ := json.Marshal(cwd)
	return `{"type":"session","version":1,"id":"` + id + `","created":"2020-01-01T00:00:00Z","cwd":` + string(q) + "}\n"
}

// A crash while a session was created leaves a log with a torn header; -c
// skips it with a warning and continues the newest readable session, and
// session list marks it without hiding the others. The file is left as is.
func TestContinueSkipsATornHeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "first", "--provider", "echo")
	require.Len(t, h.sessionFiles(), 1)
	good := h.sessionFiles()[0]

	const torn = `{"type":"session","vers`
	bad := filepath.Join(filepath.Dir(good), "29990101T000000Z_0badc0de-0000-4000-8000-000000000000.jsonl")
	h.write(bad, torn)
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(bad, later, later))

	r := h.ok("-p", "second", "--provider", "echo", "-c")
	require.Contains(t, r.stderr, "warning: --continue skips an unreadable log: session log "+bad)
	require.Equal(t, 1, strings.Count(r.stderr, bad), r.stderr)
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	require.Contains(t, string(data), "second")
	data, err = os.ReadFile(bad)
	require.NoError(t, err)
	require.Equal(t, torn, string(data))

	r = h.ok("prompt", "-c")
	require.Contains(t, r.stderr, "skips an unreadable log")

	list := strings.Split(strings.TrimSpace(h.ok("session", "list").stdout), "\n")
	require.Len(t, list, 3, list)
	require.Contains(t, list[1], "0badc0de-0000-4000-8000-000000000000")
	require.Contains(t, list[1], "(unreadable: missing or garbled header (line 1)")
	require.Contains(t, list[2], "first")

	// Only the torn log: nothing to continue, and still nothing touched.
	h2 := newHarness(t)
	bad2 := filepath.Join(h2.home, "data", "panto", "sessions", layers.EncodePath(h2.project), "20260101T000000Z_0badc0de-0000-4000-8000-000000000000.jsonl")
	h2.write(bad2, torn)
	r = h2.run("", "-p", "hi", "--provider", "echo", "-c")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "skips an unreadable log")
	require.Contains(t, r.stderr, "no readable session to continue")
	data, err = os.ReadFile(bad2)
	require.NoError(t, err)
	require.Equal(t, torn, string(data))
}

// --provider naming another provider than the config's drops the config's
// base_url and model, which were set for that other provider.
func TestProviderFlagDropsTheConfiguredProvidersURLAndModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env["ANTHROPIC_API_KEY"] = "sk-ant-test"
	h.env["OPENAI_API_KEY"] = "sk-openai-test"
	h.write(config.Path(h.userDir()), `provider = "openai"
base_url = "http://127.0.0.1:1/v1"
model = "qwen3-coder"
compaction_model = "qwen3-small"
retries = 0
`)

	// The environment's base URL, the provider's default model.
	fake := newFake(t, anthropicText("one"), anthropicText("two"))
	h.env["ANTHROPIC_BASE_URL"] = fake.srv.URL
	require.Equal(t, "one\n", h.ok("-p", "hi", "--provider", "anthropic", "--no-session").stdout)
	req := fake.request(t, 0)
	require.Equal(t, "/v1/messages", req.path)
	var body struct{ Model string }
	require.NoError(t, json.Unmarshal(req.body, &body))
	require.Equal(t, config.DefaultModel("anthropic"), body.Model)

	// The flags win over the defaults.
	delete(h.env, "ANTHROPIC_BASE_URL")
	require.Equal(t, "two\n", h.ok("-p", "hi", "--provider", "anthropic", "--no-session", "--base-url", fake.srv.URL, "--model", "claude-test").stdout)
	req = fake.request(t, 1)
	require.Equal(t, "/v1/messages", req.path)
	require.NoError(t, json.Unmarshal(req.body, &body))
	require.Equal(t, "claude-test", body.Model)

	// Neither: the provider's public API. A proxy sees where the request
	// goes (requests to 127.0.0.1 never use a proxy).
	var mu sync.Mutex
	var hosts []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Method+" "+r.Host)
		mu.Unlock()
		http.Error(w, "no", http.StatusForbidden)
	}))
	t.Cleanup(proxy.Close)
	h.env["HTTPS_PROXY"] = proxy.URL
	r := h.run("", "-p", "hi", "--provider", "anthropic", "--no-session")
	require.Equal(t, 1, r.code, r.stderr)
	delete(h.env, "HTTPS_PROXY")
	mu.Lock()
	require.Equal(t, []string{"CONNECT api.anthropic.com:443"}, hosts)
	mu.Unlock()

	// --provider naming the configured provider keeps the config's values.
	ofake := newFake(t, openaiText("three"))
	h.write(config.Path(h.userDir()), `provider = "openai"
base_url = "`+ofake.srv.URL+`/v1"
model = "qwen3-coder"
`)
	require.Equal(t, "three\n", h.ok("-p", "hi", "--provider", "openai", "--no-session").stdout)
	req = ofake.request(t, 0)
	require.Equal(t, "/v1/chat/completions", req.path)
	require.NoError(t, json.Unmarshal(req.body, &body))
	require.Equal(t, "qwen3-coder", body.Model)

	// compaction_model names a model of the configured provider too.
	h = newHarness(t)
	h.env["ANTHROPIC_API_KEY"] = "sk-ant-test"
	h.write(config.Path(h.userDir()), `provider = "openai"
compaction_model = "qwen3-small"
compaction_keep_tokens = 10
`)
	h.ok("-p", "first question", "--provider", "echo")
	h.ok("-p", "second question", "--provider", "echo", "-c")
	fake = newFake(t, anthropicText("The user asked two questions."))
	r = h.ok("-p", "/compact", "-c", "--provider", "anthropic", "--base-url", fake.srv.URL)
	require.Contains(t, r.stdout, "compacted")
	require.NoError(t, json.Unmarshal(fake.request(t, 0).body, &body))
	require.Equal(t, config.DefaultModel("anthropic"), body.Model)
}

// A --system-prompt / --append-system-prompt value that looks like a path
// but names no file is a usage error, not the prompt's text.
func TestPromptFlagNamingNoFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prompt", "--system-prompt", "./prompts/reviewer.md"}, "panto: --system-prompt ./prompts/reviewer.md: no such file\n"},
		{[]string{"prompt", "--append-system-prompt", "/etc"}, "panto: --append-system-prompt /etc: a directory, want a file\n"},
		{[]string{"prompt", "-c", "--append-system-prompt", "notes.txt"}, "panto: --append-system-prompt notes.txt: no such file (nor notes.txt.md)\n"},
		{[]string{"-p", "hi", "--provider", "echo", "--system-prompt", "prompts/reviewer"}, "panto: --system-prompt prompts/reviewer: no such file (nor prompts/reviewer.md)\n"},
	} {
		r := h.run("", tc.args...)
		require.Equal(t, 2, r.code, "%v: %s", tc.args, r.stderr)
		require.True(t, strings.HasPrefix(r.stderr, tc.want), "%v: %s", tc.args, r.stderr)
		require.Empty(t, r.stdout)
	}
	require.Empty(t, h.sessionFiles(), "no session is started for a mistaken flag")

	// The .md retry stays; text that does not look like a path stays text.
	h.write(filepath.Join(h.project, "prompts", "reviewer.md"), "You review code.\n")
	r := h.ok("prompt", "--system-prompt", "./prompts/reviewer", "--append-system-prompt", "Be brief.", "--append-system-prompt", "terse")
	require.Contains(t, r.stdout, "--- block 1 · --system-prompt (file ./prompts/reviewer.md) ---\nYou review code.\n")
	require.Contains(t, r.stdout, "--- block 2 · --append-system-prompt ---\nBe brief.\n")
	require.Contains(t, r.stdout, "--- block 3 · --append-system-prompt ---\nterse\n")
}

// session list, /session and prompt --at N count messages the same way,
// system messages included; a negative --at is a usage error.
func TestMessageCountsAgreeAndNegativeAt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "one", "--provider", "echo", "--append-system-prompt", "Be brief.")
	h.ok("-p", "two", "--provider", "echo", "-c")

	fields := strings.Fields(strings.Split(h.ok("session", "list").stdout, "\n")[1])
	listed := fields[4] // id, name, date, time, count
	r := h.ok("-p", "/session", "--provider", "echo", "-c")
	require.Contains(t, r.stdout, "messages "+listed+"\n")
	n := len(logMessages(t, h.sessionFiles()[0]))
	require.Equal(t, itoa(n), listed)
	h.ok("prompt", "-c", "--at", listed)
	r = h.run("", "prompt", "-c", "--at", itoa(n+1))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "the current branch has "+listed+" messages")

	r = h.run("", "prompt", "-c", "--at", "-5")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "panto: --at -5: want the number of messages, 0 or more")
	require.Empty(t, r.stdout)
}

// logMessages returns the message entries of a log.
func logMessages(t *testing.T, path string) []map[string]any {
	t.Helper()
	return entriesOfType(t, path, "message")
}

// A config value of the wrong type is reported in the user's terms.
func TestConfigWrongTypeMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	path := config.Path(h.userDir())
	h.write(path, "model = \"echo\"\nretries = \"2\"\n")
	r := h.run("", "-p", "hi", "--provider", "echo")
	require.Equal(t, 1, r.code)
	require.Equal(t, "panto: config "+path+" line 2 column 11: retries wants an integer, not a string (see docs/config.md)\n", r.stderr)
}
