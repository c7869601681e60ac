package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/testio"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// pantoBin is the real panto binary, built once by TestMain; pluginDir
// holds it and the example extensions sysprompt and hello.
var pantoBin, pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "panto-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pantoBin = filepath.Join(dir, "panto")
	pluginDir = dir
	pkgs := []string{".", "../../examples/plugins/sysprompt", "../../examples/plugins/hello", "../../examples/plugins/guard", "../../extensions/tools", "../../extensions/mcp", "../../extensions/web", "../../host/extension/testdata/plugins/sdkplug"}
	// Every test extension under testdata/ (a folder with a main.go) is
	// built too, into pluginDir by its folder's name.
	mains, _ := filepath.Glob("testdata/*/main.go")
	for _, m := range mains {
		pkgs = append(pkgs, "./"+filepath.Dir(m))
	}
	build := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build panto:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// harness is one user's machine: a HOME with the XDG folders inside it, a
// PANTO_HOME, and a project directory to run panto in.
type harness struct {
	t       testing.TB
	root    string
	home    string
	project string
	env     map[string]string
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessAt(t, t.TempDir())
}

// newHarnessAt is newHarness in the folder root.
func newHarnessAt(t testing.TB, root string) *harness {
	t.Helper()
	h := &harness{t: t, root: root, home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	require.NoError(t, os.MkdirAll(h.project, 0o755))
	require.NoError(t, os.MkdirAll(h.home, 0o755))
	h.env = map[string]string{
		"HOME":            h.home,
		"XDG_DATA_HOME":   filepath.Join(h.home, "data"),
		"XDG_CONFIG_HOME": filepath.Join(h.home, "config"),
		"XDG_STATE_HOME":  filepath.Join(h.home, "state"),
		"PATH":            os.Getenv("PATH"),
		"PANTO_LOG_LEVEL": "debug",
		// The tests of other features run the tools without being asked
		// (print mode would deny them); the permission tests set their
		// own mode.
		"PANTO_PERMISSION_MODE": "bypass",
	}
	return h
}

// Layer directories, as the docs name them.
func (h *harness) baseDir() string    { return filepath.Join(h.home, "data", "panto", "agent") }
func (h *harness) userDir() string    { return filepath.Join(h.home, "config", "panto") }
func (h *harness) projectDir() string { return filepath.Join(h.project, ".panto") }

func (h *harness) write(path, text string) {
	h.t.Helper()
	require.NoError(h.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(h.t, os.WriteFile(path, []byte(text), 0o644))
}

func (h *harness) environ() []string {
	var out []string
	for k, v := range h.env {
		out = append(out, k+"="+v)
	}
	return out
}

type result struct {
	stdout, stderr string
	code           int
}

func (h *harness) command(stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(pantoBin, args...)
	cmd.Dir = h.project
	cmd.Env = h.environ()
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

// run runs panto to completion with stdin (not a terminal).
func (h *harness) run(stdin string, args ...string) result {
	h.t.Helper()
	cmd := h.command(stdin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(h.t, err)
	}
	return result{out.String(), errb.String(), code}
}

// ok runs panto and requires exit status 0.
func (h *harness) ok(args ...string) result {
	h.t.Helper()
	r := h.run("", args...)
	require.Equal(h.t, 0, r.code, "panto %v\nstdout: %s\nstderr: %s", args, r.stdout, r.stderr)
	return r
}

// sessionFiles returns the session logs of the project directory.
func (h *harness) sessionFiles() []string {
	h.t.Helper()
	files, err := filepath.Glob(filepath.Join(h.home, "data", "panto", "sessions", "*", "*.jsonl"))
	require.NoError(h.t, err)
	return files
}

// logLines returns the decoded lines of a session log.
func logLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "line %q", line)
		out = append(out, m)
	}
	return out
}

// entriesOfType returns the decoded entries of a log whose type is typ.
func entriesOfType(t *testing.T, path, typ string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range logLines(t, path) {
		if l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

// systemEntries returns "mode:text" for each system message of a log, in
// order.
func systemEntries(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, l := range logLines(t, path) {
		msg, ok := l["message"].(map[string]any)
		if !ok || msg["role"] != "system" {
			continue
		}
		mode, _ := msg["mode"].(string)
		if mode == "" {
			mode = "append"
		}
		content := msg["content"].([]any)
		out = append(out, mode+":"+content[0].(map[string]any)["text"].(string))
	}
	return out
}

// reply is one scripted answer of a fake provider.
type reply struct {
	status  int
	headers map[string]string
	body    string
	// hang, when set, writes body, flushes, then blocks until the client
	// goes away.
	hang bool
}

// fakeProvider is an httptest server speaking a provider's wire format
// from a script of replies; it records every request.
type fakeProvider struct {
	srv      *httptest.Server
	mu       sync.Mutex
	script   []reply
	requests []recorded
}

type recorded struct {
	path   string
	header http.Header
	body   []byte
}

func newFake(t *testing.T, script ...reply) *fakeProvider {
	t.Helper()
	f := &fakeProvider{script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.URL.Path, r.Header.Clone(), body})
		if len(f.script) == 0 {
			f.mu.Unlock()
			http.Error(w, `{"error":"script exhausted"}`, http.StatusTeapot)
			return
		}
		rep := f.script[0]
		f.script = f.script[1:]
		f.mu.Unlock()
		for k, v := range rep.headers {
			w.Header().Set(k, v)
		}
		if rep.status == 0 {
			rep.status = http.StatusOK
		}
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
		if rep.hang {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) request(t *testing.T, i int) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Greater(t, len(f.requests), i, "the provider got %d requests", len(f.requests))
	return f.requests[i]
}

func (f *fakeProvider) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// sse builds an SSE body from (event, data) pairs; an empty event name
// writes a data-only event (OpenAI).
func sse(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" {
			b.WriteString("event: " + pairs[i] + "\n")
		}
		b.WriteString("data: " + pairs[i+1] + "\n\n")
	}
	return b.String()
}

// anthropicText is a complete Anthropic stream answering text.
func anthropicText(text string) reply {
	q, _ := json.Marshal(text)
	return reply{headers: map[string]string{"content-type": "text/event-stream"}, body: sse(
		"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"ping", `{"type":"ping"}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(q)+`}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`,
		"message_stop", `{"type":"message_stop"}`,
	)}
}

// openaiText is a complete OpenAI stream answering text.
func openaiText(text string) reply {
	q, _ := json.Marshal(text)
	return reply{headers: map[string]string{"content-type": "text/event-stream"}, body: sse(
		"", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		"", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"content":`+string(q)+`},"finish_reason":null}]}`,
		"", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		"", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`,
		"", `[DONE]`,
	)}
}

// appendSystem records a system edit in a log as the host records an
// extension's: one more entry after the ones already there.
func appendSystem(t *testing.T, log, text, mode string) {
	t.Helper()
	w, _, err := sessionlog.Open(log)
	require.NoError(t, err)
	_, err = w.Append(sessionlog.MessageEntry(conversation.SystemMessage(text, conversation.Mode(mode))))
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

func itoa(n int) string { return strconv.Itoa(n) }

// syncBuffer is safe to read while another goroutine writes to it.
type syncBuffer = testio.SyncBuffer

// toolCall is one tool_use block of a scripted Anthropic reply.
type toolCall struct{ id, name, input string }

// anthropicTools is a complete Anthropic stream whose reply calls tools.
func anthropicTools(calls ...toolCall) reply {
	pairs := []string{"message_start", `{"type":"message_start","message":{"id":"msg_t","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`}
	for i, c := range calls {
		idx := strconv.Itoa(i)
		in, _ := json.Marshal(c.input)
		pairs = append(pairs,
			"content_block_start", `{"type":"content_block_start","index":`+idx+`,"content_block":{"type":"tool_use","id":"`+c.id+`","name":"`+c.name+`","input":{}}}`,
			"content_block_delta", `{"type":"content_block_delta","index":`+idx+`,"delta":{"type":"input_json_delta","partial_json":`+string(in)+`}}`,
			"content_block_stop", `{"type":"content_block_stop","index":`+idx+`}`)
	}
	pairs = append(pairs,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}`,
		"message_stop", `{"type":"message_stop"}`)
	return reply{headers: map[string]string{"content-type": "text/event-stream"}, body: sse(pairs...)}
}

// mcpExt is the --extension flag that loads the mcp extension.
func mcpExt() []string { return []string{"--extension", filepath.Join(pluginDir, "mcp")} }
