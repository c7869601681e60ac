package sessionlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
)

// The test binary doubles as a helper process (the os/exec pattern): with
// helperEnv set it runs the named helper instead of the tests.
const (
	helperEnv    = "SESSIONLOG_TEST_HELPER"
	helperLogEnv = "SESSIONLOG_TEST_LOG"
	helperArgEnv = "SESSIONLOG_TEST_ARG"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		code := m.Run()
		removeBigLogs()
		os.Exit(code)
	case "bench":
		os.Exit(helperBench(os.Getenv(helperLogEnv), os.Getenv(helperArgEnv)))
	case "append":
		os.Exit(helperAppend(os.Getenv(helperLogEnv)))
	case "hold":
		os.Exit(helperHold(os.Getenv(helperLogEnv)))
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperAppend opens the log and appends batches until killed, printing
// each entry's id once Append has returned (acknowledged it).
func helperAppend(path string) int {
	w, _, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := bufio.NewWriter(os.Stdout)
	big := strings.Repeat("a large tool result line\n", 10000) // 250 KB: a write the kill can cut
	for i := 0; ; i++ {
		n := 1 + i%7
		es := make([]Entry, n)
		for j := range es {
			text := fmt.Sprintf("message %d.%d", i, j)
			if (i+j)%5 == 0 {
				text += big
			}
			es[j] = MessageEntry(conversation.UserText(text))
		}
		got, err := w.Append(es...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, e := range got {
			fmt.Fprintln(out, e.ID)
		}
		out.Flush()
	}
}

// helperHold opens the log, says so, and holds it until stdin closes.
func helperHold(path string) int {
	w, _, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer w.Close()
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startHelper runs the test binary as the named helper on the log at path.
func startHelper(t *testing.T, name, path string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+name, helperLogEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, bufio.NewScanner(stdout)
}

var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)

// sampleMessages is a conversation with every role, every block type and
// both system modes.
func sampleMessages() []conversation.Message {
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	return []conversation.Message{
		conversation.SystemMessage("You are panto, a coding agent.\n", conversation.ModeAppend),
		conversation.SystemMessage("Project rules: run `make lint` <before> & after.", conversation.ModeAppend),
		conversation.UserText("Fix the failing test in sessionlog, please."),
		{Role: conversation.RoleUser, Content: []conversation.Block{
			conversation.Text("Here is the screenshot:"),
			conversation.Image("image/png", png),
		}},
		{Role: conversation.RoleAssistant, Content: []conversation.Block{
			conversation.Thinking("The test reads a torn line…", "sig-ABC123"),
			conversation.RedactedThinking("EncryptedBlob=="),
			conversation.Text("Let me look at the file."),
			conversation.ToolUse("toolu_01", "read", json.RawMessage(`{"path":"sessionlog/read.go","limit":200}`)),
			conversation.ToolUse("toolu_02", "bash", json.RawMessage(`{"command":"go test ./...","env":{"A":"\"quoted\""}}`)),
		}},
		{Role: conversation.RoleTool, Content: []conversation.Block{
			conversation.ToolResult("toolu_01", "package sessionlog\n\nfunc Read() {}\n", false),
			{Type: conversation.TypeToolResult, ToolUseID: "toolu_02", IsError: true, Content: []conversation.Block{
				conversation.Text("exit status 1"),
				conversation.Image("image/png", png),
			}},
		}},
		{Role: conversation.RoleUser, Content: []conversation.Block{
			conversation.ToolResult("toolu_03", "a result carried by a user message", false),
		}},
		conversation.SystemMessage("You are panto. Configuration changed: new seed.", conversation.ModeReplace),
		conversation.SystemMessage("Appended after the re-seed: 日本語, emoji 🚀, tab\tand \u2028.", conversation.ModeAppend),
		conversation.AssistantText("Fixed: the reader now skips a torn last line."),
	}
}

// sampleEntries is a log's worth of entries of every known type, with
// fixed ids and times so its file is byte-for-byte stable.
func sampleEntries() []Entry {
	msgs := sampleMessages()
	var es []Entry
	add := func(e Entry) {
		n := len(es) + 1
		e.ID = fmt.Sprintf("%016x", 0xa0+n)
		e.Time = t0.Add(time.Duration(n) * time.Second)
		es = append(es, e)
	}
	add(MessageEntry(msgs[0]))
	add(MessageEntry(msgs[1]))
	add(LifecycleEntry(LifecycleStarted, true, []string{"gitbranch", "todo"}))
	add(ModelChangeEntry("anthropic", "claude-sonnet-4-5"))
	add(ToolsEntry(Tools{Extension: "mcp", Reason: "mcp server docs: its tools changed",
		Tools: []ToolDef{
			{Name: "mcp__docs__search", Description: "Search the docs <fast> & \"exact\"", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
			{Name: "mcp__docs__fetch"},
		},
		Added: []string{"mcp__docs__fetch"}, Removed: []string{"mcp__docs__old"}, Changed: []string{"mcp__docs__search"}}))
	add(PermissionsEntry(Permissions{Mode: "default", Reason: "start",
		Rules:   []PermissionRule{{Verdict: "allow", Rule: "bash(go test *)", Source: "config /home/user/.config/panto/config.toml"}, {Verdict: "deny", Rule: "read(~/.ssh/**)"}},
		Grants:  []string{"bash(make)"},
		Sandbox: &SandboxPolicy{Mode: "workspace-write", WritableRoots: []string{"/home/user/project", "/home/user/project/.git"}}}))
	for _, m := range msgs[2:7] {
		add(MessageEntry(m))
	}
	add(ExtensionDataEntry("todo", json.RawMessage(`{"items":["fix test",{"done":false}],"n":2.5}`)))
	add(LifecycleEntry(LifecycleResumed, false, nil))
	add(MessageEntry(msgs[7]))
	add(MessageEntry(msgs[8]))
	add(LifecycleEntry(LifecycleResumed, true, []string{"gitbranch"}))
	add(MessageEntry(msgs[9]))
	return es
}

// sampleHeader is the header of the sample log.
var sampleHeader = Header{Version: Version, ID: "6f1c2a5e-3b7d-4c09-8e2f-1a2b3c4d5e6f", Created: t0, Cwd: "/home/user/project"}

// writeSample writes the sample log into dir and returns its path and the
// entries as recorded.
func writeSample(t *testing.T, dir string) (string, []Entry) {
	t.Helper()
	path := filepath.Join(dir, "sample.jsonl")
	w, err := Create(path, sampleHeader)
	require.NoError(t, err)
	got, err := w.Append(sampleEntries()...)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return path, got
}

// lines returns the lines of the file at path, without newlines.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	require.True(t, strings.HasSuffix(s, "\n"), "file ends with a newline")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// writeFile writes content to a fresh file in a temp dir and returns its
// path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}
