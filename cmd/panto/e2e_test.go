package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sessionlog"
)

// threeLayers lays out the example of system-prompt-design.md §2.3: base
// has SYSTEM.md + APPEND_SYSTEM.md, user has APPEND_SYSTEM.md, project has
// SYSTEM.md + APPEND_SYSTEM.md.
func threeLayers(h *harness) {
	h.write(filepath.Join(h.baseDir(), "SYSTEM.md"), "base seed\n")
	h.write(filepath.Join(h.baseDir(), "APPEND_SYSTEM.md"), "base append\n")
	h.write(filepath.Join(h.userDir(), "APPEND_SYSTEM.md"), "user append\n")
	h.write(filepath.Join(h.projectDir(), "SYSTEM.md"), "project seed\n")
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "project append\n")
}

func TestSpecExampleAnthropicRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	fake := newFake(t, anthropicText("Hi there."))
	h.env["ANTHROPIC_API_KEY"] = "sk-ant-secret-key"
	r := h.ok("-p", "hello", "--provider", "anthropic", "--model", "claude-test", "--base-url", fake.srv.URL)
	require.Equal(t, "Hi there.\n", r.stdout)

	req := fake.request(t, 0)
	require.Equal(t, "/v1/messages", req.path)
	require.Equal(t, "2023-06-01", req.header.Get("anthropic-version"))
	require.Equal(t, "sk-ant-secret-key", req.header.Get("x-api-key"))
	require.JSONEq(t, `{
		"model": "claude-test",
		"max_tokens": 8192,
		"system": [{"type": "text", "text": "project seed\n\n---\n\nproject append\n\n---\n\nuser append\n\n---\n\nbase append",
			"cache_control": {"type": "ephemeral"}}],
		"messages": [{"role": "user", "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]}],
		"stream": true
	}`, string(req.body))

	// The key appears in no file panto wrote.
	for _, dir := range []string{filepath.Join(h.home, "data"), filepath.Join(h.home, "state")} {
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				data, _ := os.ReadFile(p)
				require.NotContains(t, string(data), "sk-ant-secret-key", p)
			}
			return nil
		})
	}
}

func TestSpecExampleOpenAIRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	fake := newFake(t, openaiText("Hello from GPT."))
	h.env["OPENAI_API_KEY"] = "sk-openai-secret"
	h.env["OPENAI_BASE_URL"] = fake.srv.URL + "/v1"
	r := h.ok("-p", "hello", "--provider", "openai", "--model", "gpt-test")
	require.Equal(t, "Hello from GPT.\n", r.stdout)

	req := fake.request(t, 0)
	require.Equal(t, "/v1/chat/completions", req.path)
	require.Equal(t, "Bearer sk-openai-secret", req.header.Get("authorization"))
	require.JSONEq(t, `{
		"model": "gpt-test",
		"max_tokens": 8192,
		"messages": [
			{"role": "system", "content": "project seed\n"},
			{"role": "system", "content": "project append\n"},
			{"role": "system", "content": "user append\n"},
			{"role": "system", "content": "base append\n"},
			{"role": "user", "content": "hello"}
		],
		"stream": true,
		"stream_options": {"include_usage": true}
	}`, string(req.body))
}

func TestFreshSessionRecordsSeedThenLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	h.ok("-p", "hi", "--provider", "echo")
	files := h.sessionFiles()
	require.Len(t, files, 1)
	info, err := os.Stat(files[0])
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	lines := logLines(t, files[0])
	require.Equal(t, "session", lines[0]["type"])
	require.Equal(t, []string{"append:project seed\n", "append:project append\n", "append:user append\n", "append:base append\n"},
		systemEntries(t, files[0]))
	require.Equal(t, "lifecycle", lines[5]["type"], "the lifecycle entry follows the seed blocks")
	require.Equal(t, "model_change", lines[6]["type"], "then the model in use")
	require.Equal(t, "echo", lines[6]["provider"])
	require.Equal(t, "permissions", lines[7]["type"], "then the permission policy")
	require.Equal(t, "user", lines[8]["message"].(map[string]any)["role"])
	require.Equal(t, "request_settings", lines[9]["type"], "what the request is sent with, before its reply")
	require.Equal(t, "assistant", lines[10]["message"].(map[string]any)["role"])
	for _, l := range lines[1:] {
		if m, ok := l["message"].(map[string]any); ok && m["role"] != "system" {
			require.NotContains(t, m, "mode", "mode only on system messages")
		}
	}
}

func TestResumeReconciliation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	h.ok("-p", "one", "--provider", "echo")
	log := h.sessionFiles()[0]
	want := systemEntries(t, log)

	// 1. Unchanged files: two resumes append no system entry.
	h.ok("-p", "two", "--provider", "echo", "-c")
	h.ok("-p", "three", "--provider", "echo", "--session", log)
	require.Equal(t, want, systemEntries(t, log))

	// 2. A change re-seeds with exactly replace + N×append, and the next
	// request carries exactly the new prompt.
	h.write(filepath.Join(h.userDir(), "APPEND_SYSTEM.md"), "user append v2\n")
	r := h.ok("-p", "four", "--provider", "echo", "-c")
	require.Contains(t, r.stdout, "system prompt: 4 block(s)")
	require.Contains(t, r.stdout, "3. user append v2")
	got := systemEntries(t, log)
	require.Equal(t, append(want, "replace:project seed\n", "append:project append\n", "append:user append v2\n", "append:base append\n"), got)

	// ... and a second resume after the reconciliation is a no-op.
	h.ok("-p", "five", "--provider", "echo", "-c")
	h.ok("-p", "six", "--provider", "echo", "-c")
	require.Equal(t, got, systemEntries(t, log))

	// A removed file also re-seeds.
	require.NoError(t, os.Remove(filepath.Join(h.baseDir(), "APPEND_SYSTEM.md")))
	h.ok("-p", "seven", "--provider", "echo", "-c")
	got2 := systemEntries(t, log)
	require.Equal(t, append(got, "replace:project seed\n", "append:project append\n", "append:user append v2\n"), got2)

	// Reordering (the same texts in other layers) re-seeds too.
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "user append v2\n")
	h.write(filepath.Join(h.userDir(), "APPEND_SYSTEM.md"), "project append\n")
	h.ok("-p", "eight", "--provider", "echo", "-c")
	require.Equal(t, append(got2, "replace:project seed\n", "append:user append v2\n", "append:project append\n"), systemEntries(t, log))
}

func TestExtensionEditDoesNotForceReseed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	h.ok("-p", "one", "--provider", "echo")
	log := h.sessionFiles()[0]

	// An extension's system edits, after the lifecycle entry and later in
	// the conversation, as the host records them.
	appendSystem(t, log, "extension note", "append")

	before := systemEntries(t, log)
	r := h.ok("-p", "two", "--provider", "echo", "-c")
	require.Equal(t, before, systemEntries(t, log), "an unchanged-config resume records no system entry")
	require.Contains(t, r.stdout, "5. extension note", "the extension's block is still in the prompt")

	// An extension's replace does not move the anchor (spec amendment
	// 3): with the files unchanged, the next resume keeps it.
	appendSystem(t, log, "persona", "replace")
	before = systemEntries(t, log)
	r = h.ok("-p", "three", "--provider", "echo", "-c")
	require.Equal(t, before, systemEntries(t, log), "no re-seed")
	require.Contains(t, r.stdout, "system prompt: 1 block(s)\n  1. persona")
}

func TestModelessOldLogResumes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "SYSTEM.md"), "old seed")
	log := filepath.Join(h.root, "old.jsonl")
	h.write(log, `{"type":"session","version":1,"id":"0b5c6a1e-2f6e-4d7a-9c1b-1234567890ab","created":"2026-01-02T03:04:05Z","cwd":"/x"}
{"type":"message","id":"a000000000000001","time":"2026-01-02T03:04:05Z","message":{"role":"system","content":[{"type":"text","text":"old seed"}]}}
{"type":"lifecycle","id":"a000000000000002","parent_id":"a000000000000001","time":"2026-01-02T03:04:05Z","event":"started"}
{"type":"message","id":"a000000000000003","parent_id":"a000000000000002","time":"2026-01-02T03:04:06Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}
`)
	r := h.ok("-p", "again", "--provider", "echo", "--session", log)
	require.Contains(t, r.stdout, "1. old seed")
	require.Equal(t, []string{"append:old seed"}, systemEntries(t, log), "a mode-less block reads as append: no re-seed")
}

func TestTornLastLineIsRepaired(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "one", "--provider", "echo")
	log := h.sessionFiles()[0]
	before, err := os.ReadFile(log)
	require.NoError(t, err)
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"message","id":"dead`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	r := h.ok("-p", "two", "--provider", "echo", "-c")
	require.Contains(t, r.stderr, "torn")
	after, err := os.ReadFile(log)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(after), string(before)), "nothing before the torn line is lost")
	require.NotContains(t, string(after), `"dead`)
	require.Contains(t, string(after), `"two"`)
}

func TestSecondWriterIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "one", "--provider", "echo")
	log := h.sessionFiles()[0]
	w, _, err := sessionlog.Open(log)
	require.NoError(t, err)
	defer w.Close()
	before, _ := os.ReadFile(log)

	r := h.run("", "-p", "two", "--provider", "echo", "--session", log)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "pid "+itoa(os.Getpid()))
	after, _ := os.ReadFile(log)
	require.Equal(t, before, after, "the refused writer wrote nothing")
}

func TestRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	for _, status := range []int{429, 529} {
		h := newHarness(t)
		fake := newFake(t,
			reply{status: status, headers: map[string]string{"retry-after-ms": "10"}, body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
			reply{status: status, headers: map[string]string{"retry-after": "0"}, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			anthropicText("finally"),
		)
		h.env["ANTHROPIC_API_KEY"] = "k"
		r := h.ok("-p", "hi", "--provider", "anthropic", "--base-url", fake.srv.URL)
		require.Equal(t, "finally\n", r.stdout)
		require.Equal(t, 3, fake.count())
		logData, err := os.ReadFile(filepath.Join(h.home, "state", "panto", "panto.log"))
		require.NoError(t, err)
		require.Contains(t, string(logData), "retrying model request")
	}
}

func TestProviderErrorIsClear(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fake := newFake(t,
		reply{status: 400, headers: map[string]string{"request-id": "req_42"}, body: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}`},
	)
	h.env["ANTHROPIC_API_KEY"] = "sk-ant-never-shown"
	r := h.run("", "-p", "hi", "--provider", "anthropic", "--base-url", fake.srv.URL)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "400")
	require.Contains(t, r.stderr, "max_tokens: too big")
	require.Contains(t, r.stderr, "req_42")
	require.NotContains(t, r.stderr, "sk-ant-never-shown")
	require.Equal(t, 1, fake.count(), "a 400 is not retried")
}

func TestErrorEventAfter200(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fake := newFake(t, reply{headers: map[string]string{"content-type": "text/event-stream"}, body: sse(
		"message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial "}}`,
		"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	)})
	h.env["ANTHROPIC_API_KEY"] = "k"
	r := h.run("", "-p", "hi", "--provider", "anthropic", "--base-url", fake.srv.URL)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "overloaded_error")
	require.Contains(t, r.stderr, "Overloaded")
	log := h.sessionFiles()[0]
	for _, l := range logLines(t, log) {
		if m, ok := l["message"].(map[string]any); ok {
			require.NotEqual(t, "assistant", m["role"], "a failed stream records no reply")
		}
	}
}

func TestCtrlCMidStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fake := newFake(t, reply{hang: true, headers: map[string]string{"content-type": "text/event-stream"}, body: sse(
		"message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"half a rep"}}`,
	)})
	h.env["ANTHROPIC_API_KEY"] = "k"
	cmd := h.command("", "-p", "hi", "--provider", "anthropic", "--base-url", fake.srv.URL)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "half a rep") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Contains(t, out.String(), "half a rep", "the partial reply streams before Ctrl-C")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	require.Error(t, err)
	require.Equal(t, 130, cmd.ProcessState.ExitCode())
	require.Contains(t, errb.String(), "interrupted")

	log := h.sessionFiles()[0]
	roles := []string{}
	for _, l := range logLines(t, log) {
		if m, ok := l["message"].(map[string]any); ok {
			roles = append(roles, m["role"].(string))
		}
	}
	require.Equal(t, "user", roles[len(roles)-1], "the question is kept, the half reply is not")
	// The log is valid and resumes.
	r := h.ok("-p", "again", "--provider", "echo", "-c")
	require.Contains(t, r.stdout, `"again"`)
}

func TestPromptCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	r := h.ok("prompt", "--json")
	var got struct {
		Blocks []struct{ Text, Source string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Len(t, got.Blocks, 4)
	require.Equal(t, "project seed\n", got.Blocks[0].Text)
	require.Equal(t, "project "+filepath.Join(h.projectDir(), "SYSTEM.md"), got.Blocks[0].Source)
	require.Equal(t, "base append\n", got.Blocks[3].Text)

	r = h.ok("prompt")
	require.Contains(t, r.stdout, "--- block 2 · project "+filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"))

	// Of a log, as of its first N messages.
	h.ok("-p", "one", "--provider", "echo")
	log := h.sessionFiles()[0]
	appendSystem(t, log, "late replace", "replace")
	texts := func(args ...string) []string {
		r := h.ok(append([]string{"prompt", "--json", "--session", log}, args...)...)
		var got struct{ Blocks []struct{ Text string } }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		out := []string{}
		for _, b := range got.Blocks {
			out = append(out, b.Text)
		}
		return out
	}
	require.Equal(t, []string{}, texts("--at", "0"))
	require.Equal(t, []string{"project seed\n", "project append\n"}, texts("--at", "2"))
	require.Equal(t, []string{"project seed\n", "project append\n", "user append\n", "base append\n"}, texts("--at", "6"))
	require.Equal(t, []string{"late replace"}, texts())
	r = h.run("", "prompt", "--session", log, "--at", "99")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "the current branch has 7 messages")
}

func TestSessionListContinueResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "first question", "--provider", "echo")
	time.Sleep(20 * time.Millisecond)
	h.ok("-p", "second question", "--provider", "echo")
	files := h.sessionFiles()
	require.Len(t, files, 2)

	r := h.ok("session", "list")
	require.Contains(t, r.stdout, "first question")
	require.Contains(t, r.stdout, "second question")
	require.Less(t, strings.Index(r.stdout, "second question"), strings.Index(r.stdout, "first question"), "newest first")

	// --resume by a unique prefix of the first session's id.
	var first string
	for _, f := range files {
		l, err := sessionlog.Read(f)
		require.NoError(t, err)
		if strings.Contains(l.Messages()[len(l.Messages())-2].Text(), "first") {
			first = l.Header.ID
		}
	}
	require.NotEmpty(t, first)
	r = h.ok("-p", "third", "--provider", "echo", "--resume", first[:8])
	require.Contains(t, r.stdout, `"third"`)
	require.Len(t, h.sessionFiles(), 2, "resuming creates no new log")

	r = h.run("", "-p", "x", "--provider", "echo", "--resume", "zzzz")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "no session with that id")

	// --no-session writes nothing.
	h.ok("-p", "ephemeral", "--provider", "echo", "--no-session")
	require.Len(t, h.sessionFiles(), 2)
}

func TestDirs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	h.env["PANTO_HOME"] = filepath.Join(h.root, "ph")
	r := h.ok("dirs")
	require.Contains(t, r.stdout, "PANTO_HOME  "+filepath.Join(h.root, "ph"))
	require.Contains(t, r.stdout, filepath.Join(h.root, "ph", "agent"))
	require.Contains(t, r.stdout, h.userDir())
	require.Contains(t, r.stdout, h.projectDir())
	require.Contains(t, r.stdout, "APPEND_SYSTEM.md")
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, args := range [][]string{
		{"--bogus"},
		{"-p", "x", "--provider", "gemini"},
		{"-p", "x", "--no-session", "-c"},
		{"sesion"}, // a word like a mistyped command (any other is a message)
		{"-p", "x", "stray"},
		{"prompt", "--at", "1"},
	} {
		r := h.run("", args...)
		require.Equal(t, 2, r.code, "panto %v: %s", args, r.stderr)
		require.NotEmpty(t, r.stderr)
	}
	r := h.run("", "-p", "x", "--provider", "anthropic")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "ANTHROPIC_API_KEY")
	r = h.ok("--help")
	require.Contains(t, r.stdout, "--append-system-prompt")
	require.Equal(t, 1, strings.Count(r.stdout, "Usage:"), "the usage once")
	require.Empty(t, r.stderr)
	r = h.ok("prompt", "-h")
	require.Equal(t, 1, strings.Count(r.stdout, "Usage:\n  panto prompt [flags]"), r.stdout)
	require.Empty(t, r.stderr)
}

func TestPipedStdinIsAppended(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("file contents\n", "-p", "summarise:", "--provider", "echo", "--no-session")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `you said "summarise:\n\nfile contents"`)
	r = h.run("just stdin\n", "--provider", "echo", "--no-session")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `you said "just stdin"`)
}

func TestFlagPromptsTakePart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	h.write(filepath.Join(h.root, "extra.md"), "from a file")
	r := h.ok("-p", "x", "--provider", "echo", "--system-prompt", "flag seed",
		"--append-system-prompt", filepath.Join(h.root, "extra"), "--append-system-prompt", "literal")
	require.Contains(t, r.stdout, "system prompt: 6 block(s)\n  1. flag seed\n  2. from a file\n  3. literal\n  4. project append")
	log := h.sessionFiles()[0]
	// Resuming without the flags is a config change: it re-seeds.
	h.ok("-p", "y", "--provider", "echo", "-c")
	require.Contains(t, systemEntries(t, log), "replace:project seed\n")
}

// The same requests without streaming (config stream = false), against
// plain JSON replies.
func TestSpecExampleNonStreaming(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	threeLayers(h)
	h.write(filepath.Join(h.userDir(), "config.toml"), "stream = false\n")

	fa := newFake(t, reply{headers: map[string]string{"content-type": "application/json"},
		body: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Plain reply."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":3}}`})
	h.env["ANTHROPIC_API_KEY"] = "k"
	r := h.ok("-p", "hello", "--provider", "anthropic", "--model", "claude-test", "--base-url", fa.srv.URL, "--no-session")
	require.Equal(t, "Plain reply.\n", r.stdout)
	require.JSONEq(t, `{
		"model": "claude-test",
		"max_tokens": 8192,
		"system": [{"type": "text", "text": "project seed\n\n---\n\nproject append\n\n---\n\nuser append\n\n---\n\nbase append",
			"cache_control": {"type": "ephemeral"}}],
		"messages": [{"role": "user", "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]}]
	}`, string(fa.request(t, 0).body))

	fo := newFake(t, reply{headers: map[string]string{"content-type": "application/json"},
		body: `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"Plain GPT."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`})
	r = h.ok("-p", "hello", "--provider", "openai", "--model", "gpt-test", "--base-url", fo.srv.URL+"/v1", "--no-session")
	require.Equal(t, "Plain GPT.\n", r.stdout)
	require.JSONEq(t, `{
		"model": "gpt-test",
		"max_tokens": 8192,
		"messages": [
			{"role": "system", "content": "project seed\n"},
			{"role": "system", "content": "project append\n"},
			{"role": "system", "content": "user append\n"},
			{"role": "system", "content": "base append\n"},
			{"role": "user", "content": "hello"}
		]
	}`, string(fo.request(t, 0).body))
}
