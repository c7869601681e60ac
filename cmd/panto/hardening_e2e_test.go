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
)

// toolResults returns the tool_result blocks recorded in a session log, in
// order: {"tool_use_id", "text", "is_error"}.
func toolResults(t *testing.T, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range entriesOfType(t, path, "message") {
		msg := e["message"].(map[string]any)
		if msg["role"] != "tool" {
			continue
		}
		for _, c := range msg["content"].([]any) {
			b := c.(map[string]any)
			var text strings.Builder
			for _, x := range b["content"].([]any) {
				text.WriteString(x.(map[string]any)["text"].(string))
			}
			isErr, _ := b["is_error"].(bool)
			out = append(out, map[string]any{"tool_use_id": b["tool_use_id"], "text": text.String(), "is_error": isErr})
		}
	}
	return out
}

func echoTools(h *harness, extra ...string) []string {
	return append([]string{"--provider", "echo", "--extension", filepath.Join(pluginDir, "tools")}, extra...)
}

// Text that is not UTF-8 (a Latin-1 file, bytes printed by bash) never
// disables the extension that returned it: the model reads U+FFFD.
func TestInvalidUTF8ToolOutputKeepsTheExtension(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.project, "f.txt"), "caf\xe9\n")
	r := h.run("", echoTools(h, "-p", "tool:read {\"path\":\"f.txt\"}\ntool:bash {\"command\":\"printf 'caf\\\\xe9'\"}")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "disabled")
	require.NotContains(t, r.stderr, "invalid UTF-8")
	res := toolResults(t, h.sessionFiles()[0])
	require.Len(t, res, 2)
	for _, x := range res {
		require.False(t, x["is_error"].(bool), "%v", x)
		require.Contains(t, x["text"], "caf\uFFFD")
	}
}

// stdin in Latin-1 reaches a before_turn watcher as text, and the watcher
// stays enabled.
func TestInvalidUTF8StdinReachesWatchers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("caf\xe9 au lait", "--provider", "echo", "--extension", filepath.Join(pluginDir, "watcher"))
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "disabled")
	var seen []string
	for _, e := range entriesOfType(t, h.sessionFiles()[0], "extension_data") {
		d := e["data"].(map[string]any)
		if d["event"] == "before_turn" {
			seen = append(seen, d["text"].(string))
		}
	}
	require.Equal(t, []string{"caf\uFFFD au lait"}, seen)
	require.Contains(t, r.stdout, "you said \"caf\uFFFD au lait\"")
}

// A 5 MB write, over gRPC's default 4 MB message limit, neither disables
// the tools extension nor the blocker watching the call.
func TestLargeToolInputKeepsTheExtensions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	content := strings.Repeat("0123456789abcdef", 5<<20/16)
	in, err := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	require.NoError(t, err)
	r := h.run("tool:write "+string(in)+"\ntool:ls {}", echoTools(h, "--extension", filepath.Join(pluginDir, "blocker"))...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "disabled")
	got, err := os.ReadFile(filepath.Join(h.project, "big.txt"))
	require.NoError(t, err)
	require.Equal(t, len(content), len(got))
	res := toolResults(t, h.sessionFiles()[0])
	require.Len(t, res, 2)
	require.False(t, res[0]["is_error"].(bool), "%v", res[0])
	require.False(t, res[1]["is_error"].(bool), "%v", res[1])
}

// A tool_call watcher that cannot be asked — it crashes, or hangs past
// the hook deadline — blocks the call instead of letting it run, and keeps
// blocking after it is disabled.
func TestToolCallWatcherFailsClosed(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"crash", "hang"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.write(filepath.Join(h.userDir(), "config.toml"), "hook_timeout = \"500ms\"\n")
			prompt := "tool:bash {\"command\":\"touch victim1 # blocker:" + how + "\"}"
			r := h.run("", echoTools(h, "--extension", filepath.Join(pluginDir, "blocker"), "-p", prompt)...)
			require.Equal(t, 0, r.code, r.stderr)
			require.NoFileExists(t, filepath.Join(h.project, "victim1"))
			res := toolResults(t, h.sessionFiles()[0])
			require.Len(t, res, 1)
			require.True(t, res[0]["is_error"].(bool))
			if how == "crash" {
				// Restarted once, it crashes again on the same call: stopped.
				require.Contains(t, r.stderr, "the blocker extension stopped (exit status 3); restarted it")
				require.Contains(t, r.stderr, "the blocker extension stopped again")
				require.Contains(t, res[0]["text"], "blocked: the blocker extension checks tool calls and is stopped for this session")
				return
			}
			require.Contains(t, r.stderr, "extension blocker disabled for this session")
			require.Contains(t, res[0]["text"], "blocked: the blocker extension checks tool calls and could not check this one")
		})
	}
}

// A tool_result watcher that cannot be asked withholds the result.
func TestToolResultWatcherFailsClosed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("", echoTools(h, "--extension", filepath.Join(pluginDir, "blocker"), "-p",
		"tool:bash {\"command\":\"echo secret-output # blocker:result-crash\"}")...)
	require.Equal(t, 0, r.code, r.stderr)
	res := toolResults(t, h.sessionFiles()[0])
	require.Len(t, res, 1)
	require.True(t, res[0]["is_error"].(bool))
	require.NotContains(t, res[0]["text"], "secret-output")
	require.Contains(t, res[0]["text"], "its result is withheld: the blocker extension checks tool results and could not check this one")
}

// Provider keys reach no extension, nor bash started by one, nor the
// prompt through {{env.NAME}}, unless config names the extension.
func TestProviderKeysStayOutOfExtensions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env["ANTHROPIC_API_KEY"] = "sk-ant-very-secret"
	h.env["OPENAI_API_KEY"] = "sk-openai-very-secret"
	h.env["HARMLESS"] = "visible"
	prompt := "tool:bash {\"command\":\"env | grep -c _API_KEY; echo $HARMLESS\"}"
	r := h.run("", echoTools(h, "-p", prompt)...)
	require.Equal(t, 0, r.code, r.stderr)
	log := h.sessionFiles()[0]
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NotContains(t, string(data), "very-secret")
	res := toolResults(t, log)
	require.Len(t, res, 1)
	require.Contains(t, res[0]["text"], "0\nvisible\n", "no key in bash's environment; the rest of it is there")

	// Nor can a prompt render one.
	r = h.run("", "-p", "hi", "--provider", "echo", "--no-session", "--append-system-prompt", "key: {{env.ANTHROPIC_API_KEY}}")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "unknown variable env.ANTHROPIC_API_KEY")

	// An extension named in extension_api_keys gets them.
	h.write(filepath.Join(h.userDir(), "config.toml"), "extension_api_keys = [\"tools\"]\n")
	r = h.run("", echoTools(h, "-p", prompt, "--no-session")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "bash (ok, 3 line(s)): 2", "the two keys, the harmless variable and the exit code")

	// A project's binary of that file name, trusted to run, does not get
	// them: the name is the user's extension's, not the project's (the
	// fourth adversary pass's c47).
	proj := filepath.Join(h.projectDir(), "extensions", "tools")
	require.NoError(t, os.MkdirAll(filepath.Dir(proj), 0o755))
	keysCopy(t, filepath.Join(pluginDir, "tools"), proj)
	h.ok("ext", "trust", proj)
	r = h.run("", "-p", prompt, "--provider", "echo", "--no-session")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "bash (ok, 3 line(s)): 0\n", "the project's tools got no key: %s", r.stdout)
}

// SIGTERM while an extension starts (it never answers the handshake)
// ends panto at once, not when the start timeout runs out.
func TestSignalDuringExtensionStart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	slow := filepath.Join(h.root, "slow-start")
	h.write(slow, "#!/bin/sh\nexec sleep 30\n")
	require.NoError(t, os.Chmod(slow, 0o755))
	cmd := h.command("", "-p", "hi", "--provider", "echo", "--extension", slow)
	var errb syncBuffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 143, waitExit(t, cmd, 3*time.Second), errb.String())
	require.NotContains(t, errb.String(), "did not complete the go-plugin handshake")
}
