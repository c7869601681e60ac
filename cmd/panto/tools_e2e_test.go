package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wireResult is a tool_result block as an Anthropic request carries it.
type wireResult struct {
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (r wireResult) text() string {
	var s string
	if json.Unmarshal(r.Content, &s) == nil {
		return s
	}
	var blocks []struct{ Text string }
	json.Unmarshal(r.Content, &blocks)
	var out []string
	for _, b := range blocks {
		out = append(out, b.Text)
	}
	return strings.Join(out, "")
}

// lastResults returns the tool results of a request's last message.
func lastResults(t *testing.T, body []byte) []wireResult {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string
			Content []json.RawMessage
		}
		Tools []struct{ Name string }
	}
	require.NoError(t, json.Unmarshal(body, &req))
	last := req.Messages[len(req.Messages)-1]
	var out []wireResult
	for _, c := range last.Content {
		var r wireResult
		require.NoError(t, json.Unmarshal(c, &r))
		if r.ToolUseID != "" {
			out = append(out, r)
		}
	}
	return out
}

func toolHarness(t *testing.T, script ...reply) (*harness, *fakeProvider, []string) {
	h := newHarness(t)
	fake := newFake(t, script...)
	h.env["ANTHROPIC_API_KEY"] = "k"
	args := []string{"--provider", "anthropic", "--base-url", fake.srv.URL, "--extension", filepath.Join(pluginDir, "tools")}
	return h, fake, args
}

func TestToolLoopReadEditBash(t *testing.T) {
	t.Parallel()
	h, fake, args := toolHarness(t,
		anthropicTools(toolCall{"t1", "read", `{"path":"main.go"}`}),
		anthropicTools(toolCall{"t2", "edit", `{"path":"main.go","edits":[{"old_text":"hello","new_text":"bye"}]}`}),
		anthropicTools(toolCall{"t3", "bash", `{"command":"cat main.go && echo exit-ok"}`}),
		anthropicText("done"),
	)
	h.write(filepath.Join(h.project, "main.go"), "package main\n\n// hello\n")
	r := h.ok(append([]string{"-p", "change hello to bye"}, args...)...)
	require.Equal(t, "done\n", r.stdout, "stdout carries only the reply")
	require.Contains(t, r.stderr, "→ read")
	require.Contains(t, r.stderr, "← edit")
	data, err := os.ReadFile(filepath.Join(h.project, "main.go"))
	require.NoError(t, err)
	require.Equal(t, "package main\n\n// bye\n", string(data))

	require.Equal(t, 4, fake.count())
	var first struct{ Tools []struct{ Name string } }
	require.NoError(t, json.Unmarshal(fake.request(t, 0).body, &first))
	var names []string
	for _, tool := range first.Tools {
		names = append(names, tool.Name)
	}
	require.Subset(t, names, []string{"read", "write", "edit", "bash", "ls", "find", "grep"})
	read := lastResults(t, fake.request(t, 1).body)
	require.Equal(t, "t1", read[0].ToolUseID)
	require.Contains(t, read[0].text(), "// hello")
	bash := lastResults(t, fake.request(t, 3).body)
	require.Contains(t, bash[0].text(), "// bye")
	require.Contains(t, bash[0].text(), "exit-ok")
	require.False(t, bash[0].IsError)

	// The log is valid and resumes.
	r = h.ok("-p", "again", "--provider", "echo", "-c", "--no-extensions")
	require.Contains(t, r.stdout, `you said "again"`)
}

func TestToolLoopParallelBlockedUnknown(t *testing.T) {
	t.Parallel()
	h, fake, args := toolHarness(t,
		anthropicTools(
			toolCall{"t1", "read", `{"path":"a.txt"}`},
			toolCall{"t2", "bash", `{"command":"rm a.txt"}`},
			toolCall{"t3", "nosuch", `{}`},
			toolCall{"t4", "ls", `{"path":"."}`},
		),
		anthropicText("ok"),
	)
	h.write(filepath.Join(h.project, "a.txt"), "alpha\n")
	args = append(args, "--extension", filepath.Join(pluginDir, "blocker"))
	h.ok(append([]string{"-p", "go"}, args...)...)

	for i := range 2 {
		var req struct{ Tools []struct{ Name string } }
		require.NoError(t, json.Unmarshal(fake.request(t, i).body, &req))
		var names []string
		for _, tool := range req.Tools {
			names = append(names, tool.Name)
		}
		require.Contains(t, names, "read")
		require.NotContains(t, names, "write", "a before_request hook narrowed the tools of request %d", i+1)
	}
	res := lastResults(t, fake.request(t, 1).body)
	require.Len(t, res, 4)
	for i, id := range []string{"t1", "t2", "t3", "t4"} {
		require.Equal(t, id, res[i].ToolUseID, "results in call order")
	}
	require.True(t, strings.HasPrefix(res[0].text(), "[checked by blocker]\n"), "a tool_result watcher amended it")
	require.True(t, res[1].IsError)
	require.Contains(t, res[1].text(), "blocked by the blocker extension: removing files is not allowed here")
	require.True(t, res[2].IsError)
	require.Contains(t, res[2].text(), `unknown tool "nosuch"`)
	require.Contains(t, res[3].text(), "a.txt")
	_, err := os.Stat(filepath.Join(h.project, "a.txt"))
	require.NoError(t, err, "the blocked command did not run")
	h.ok("-p", "resume", "--provider", "echo", "-c", "--no-extensions")
}

func TestToolLoopMaxSteps(t *testing.T) {
	t.Parallel()
	h, fake, args := toolHarness(t,
		anthropicTools(toolCall{"t1", "ls", `{}`}),
		anthropicTools(toolCall{"t2", "ls", `{}`}),
		anthropicText("never asked for"),
	)
	h.write(filepath.Join(h.userDir(), "config.toml"), "max_steps = 2\n")
	r := h.ok(append([]string{"-p", "loop"}, args...)...)
	require.Equal(t, 2, fake.count())
	require.Contains(t, r.stderr, "max_steps")
	lines := logLines(t, h.sessionFiles()[0])
	last := lines[len(lines)-1]["message"].(map[string]any)
	require.Equal(t, "tool", last["role"], "the last call has a result")
	require.Contains(t, last["content"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], "max_steps (2)")
	h.ok("-p", "resume", "--provider", "echo", "-c", "--no-extensions")
}

func TestToolLoopCtrlC(t *testing.T) {
	t.Parallel()
	h, _, args := toolHarness(t, anthropicTools(toolCall{"t1", "bash", `{"command":"sleep 30"}`}))
	cmd := h.command("", append([]string{"-p", "wait"}, args...)...)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(errb.String(), "→ bash") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.Contains(t, errb.String(), "→ bash")
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	_ = cmd.Wait()
	require.Less(t, time.Since(start), 10*time.Second, "Ctrl-C stops the running tool")
	require.Equal(t, 130, cmd.ProcessState.ExitCode(), errb.String())

	lines := logLines(t, h.sessionFiles()[0])
	last := lines[len(lines)-1]["message"].(map[string]any)
	require.Equal(t, "tool", last["role"], "the cut-short call has a result")
	require.Equal(t, true, last["content"].([]any)[0].(map[string]any)["is_error"])
	h.ok("-p", "resume", "--provider", "echo", "-c", "--no-extensions")
}

// panto -p typed at a terminal: tool progress still goes to stderr, so
// stdout is the reply alone.
func TestPrintModeAtATerminalKeepsStdoutForTheReply(t *testing.T) {
	t.Parallel()
	fake := newFake(t, anthropicTools(toolCall{"t1", "ls", `{}`}), anthropicText("the reply"))
	root := t.TempDir()
	vars := map[string]string{"HOME": root, "PANTO_LOG_LEVEL": "off", "ANTHROPIC_API_KEY": "k"}
	var out, errb strings.Builder
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, cwd: root, terminal: true,
		getenv: func(k string) string { return vars[k] }}
	code := run(context.Background(), e, []string{"-p", "list", "--provider", "anthropic", "--base-url", fake.srv.URL,
		"--extension", filepath.Join(pluginDir, "tools"), "--no-session"})
	require.Equal(t, 0, code, errb.String())
	require.Equal(t, "the reply\n", out.String())
	require.Contains(t, errb.String(), "→ ls")
}

// The echo provider drives the tool loop with no model: a maintainer runs
// an extension's tools through the real host, offline.
func TestEchoProviderRunsTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.project, "notes.txt"), "first line\nsecond line\n")
	prompt := "tool:read {\"path\": \"notes.txt\"}\ntool:write {\"path\": \"out.txt\", \"content\": \"written\\n\"}\ntool:nosuch {}"
	r := h.ok("-p", prompt, "--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"))
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, 5, r.stdout)
	require.Equal(t, "echo: calling read, write, nosuch", lines[0])
	require.Equal(t, "echo: 3 tool result(s)", lines[1])
	require.Equal(t, "  read (ok, 2 line(s)): 1\tfirst line", lines[2])
	require.True(t, strings.HasPrefix(lines[3], "  write (ok, 1 line(s)): Created "), lines[3])
	require.True(t, strings.HasPrefix(lines[4], `  nosuch (error, 1 line(s)): unknown tool "nosuch"`), lines[4])
	require.Contains(t, r.stderr, "→ read")
	data, err := os.ReadFile(filepath.Join(h.project, "out.txt"))
	require.NoError(t, err)
	require.Equal(t, "written\n", string(data))

	// The log holds the calls and their results, and resumes.
	r = h.ok("-p", "again", "--provider", "echo", "-c", "--no-extensions")
	require.Contains(t, r.stdout, `you said "again"`)
}
