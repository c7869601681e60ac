//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/mcptest"
)

// The MCP end-to-end tests run the real panto, the real mcp extension
// and real MCP servers: server-everything (npm, installed by .ci/run),
// server-filesystem, and internal/mcptest's server built as
// testdata/mcpserver.

// tomlString quotes s for TOML.
func tomlString(s string) string { return strconv.Quote(s) }

// userMCP writes the user config with the given [mcp.NAME] tables.
func (h *harness) userMCP(tables string) {
	h.write(filepath.Join(h.userDir(), "config.toml"), tables)
}

// testServerTable is an [mcp.NAME] table running internal/mcptest's
// server, with env added.
func testServerTable(name string, extra ...string) string {
	t := fmt.Sprintf("[mcp.%s]\ncommand = %s\n", name, tomlString(filepath.Join(pluginDir, "mcpserver")))
	return t + strings.Join(extra, "\n") + "\n"
}

// requestTools are the tool names of a recorded Anthropic request.
func requestTools(t *testing.T, r recorded) map[string]map[string]any {
	t.Helper()
	var body struct {
		Tools []map[string]any `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(r.body, &body))
	out := map[string]map[string]any{}
	for _, tool := range body.Tools {
		out[tool["name"].(string)] = tool
	}
	return out
}

func TestMCPEverythingOverStdio(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.userMCP(fmt.Sprintf("[mcp.everything]\ncommand = \"node\"\nargs = [%s, \"stdio\"]\n", tomlString(mcptest.NPMServer(t, "server-everything"))))
	fake := newFake(t,
		anthropicTools(toolCall{"c1", "mcp__everything__echo", `{"message":"hi there"}`}, toolCall{"c2", "mcp__everything__get-sum", `{"a":2,"b":40}`},
			toolCall{"c3", "mcp__everything__echo", `{"message":5}`}),
		anthropicText("done"))
	h.env["ANTHROPIC_API_KEY"] = "sk-test"
	r := h.ok(append([]string{"-p", "use them", "--provider", "anthropic", "--base-url", fake.srv.URL}, mcpExt()...)...)
	require.Contains(t, r.stdout, "done")

	tools := requestTools(t, fake.request(t, 0))
	echo := tools["mcp__everything__echo"]
	require.NotNil(t, echo, "offered: %v", tools)
	assert.Equal(t, "Echoes back the input string", echo["description"])
	schema := echo["input_schema"].(map[string]any)
	assert.Equal(t, "object", schema["type"])
	assert.Contains(t, schema["properties"], "message", "the server's input schema")
	assert.Contains(t, tools, "mcp__everything__get-sum")

	second := string(fake.request(t, 1).body)
	assert.Contains(t, second, "Echo: hi there")
	assert.Contains(t, second, "The sum of 2 and 40 is 42.")
	// The server's isError result is an error result the model reads.
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(fake.request(t, 1).body, &body))
	var results []struct {
		ToolUseID string `json:"tool_use_id"`
		IsError   bool   `json:"is_error"`
	}
	require.NoError(t, json.Unmarshal(body.Messages[len(body.Messages)-1].Content, &results))
	errs := map[string]bool{}
	for _, r := range results {
		errs[r.ToolUseID] = r.IsError
	}
	assert.Equal(t, map[string]bool{"c1": false, "c2": false, "c3": true}, errs)
	assert.Contains(t, second, "Invalid arguments for tool echo")

	// The log records the tool set the first request offered.
	log := h.sessionFiles()[0]
	var mcp map[string]any
	for _, e := range entriesOfType(t, log, "tools") {
		if e["extension"] == "mcp" {
			mcp = e
		}
	}
	require.NotNil(t, mcp, "a tools entry of the mcp extension")
	assert.Contains(t, mcp["added"], "mcp__everything__echo")
}

func TestMCPEverythingOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	url := mcptest.EverythingHTTP(t)
	h := newHarness(t)
	h.userMCP("[mcp.everything]\nurl = " + tomlString(url) + "\n")
	r := h.ok(append([]string{"-p", "tool:mcp__everything__echo {\"message\": \"over http\"}\ntool:mcp__everything__get-sum {\"a\": 1, \"b\": 2}", "--provider", "echo"}, mcpExt()...)...)
	assert.Contains(t, r.stdout, "mcp__everything__echo (ok, 1 line(s)): Echo: over http")
	assert.Contains(t, r.stdout, "mcp__everything__get-sum (ok, 1 line(s)): The sum of 1 and 2 is 3.")
}

// A server's new tools are offered from the next turn on, never in the
// middle of one, and the log records what changed, where.
func TestMCPToolsChangeAtTheNextTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.userMCP(testServerTable("t"))
	fake := newFake(t,
		anthropicTools(toolCall{"c1", "mcp__t__grow", `{}`}), anthropicText("grown"),
		anthropicTools(toolCall{"c2", "mcp__t__grown", `{}`}), anthropicText("done"))
	h.env["ANTHROPIC_API_KEY"] = "sk-test"
	in, typed := io.Pipe()
	go func() {
		io.WriteString(typed, "grow it\n")
		// The first turn's end, then time for the server's
		// notifications/tools/list_changed to be listed and handed over.
		for deadline := time.Now().Add(20 * time.Second); fake.count() < 2 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(2 * time.Second)
		io.WriteString(typed, "use it\n")
		typed.Close()
	}()
	h.lineLoop(in, append([]string{"--provider", "anthropic", "--base-url", fake.srv.URL}, mcpExt()...)...)

	first, midTurn, next := requestTools(t, fake.request(t, 0)), requestTools(t, fake.request(t, 1)), requestTools(t, fake.request(t, 2))
	assert.Contains(t, first, "mcp__t__ping")
	assert.Contains(t, midTurn, "mcp__t__ping", "the turn that grew it still offers the old set")
	assert.NotContains(t, midTurn, "mcp__t__grown")
	assert.Contains(t, next, "mcp__t__grown", "the next turn offers the new set")
	assert.NotContains(t, next, "mcp__t__ping")
	assert.Contains(t, string(fake.request(t, 3).body), "grown here")

	// The log: the change recorded after the first turn, before the second.
	var order, users []string
	log := h.sessionFiles()[0]
	for _, l := range logLines(t, log) {
		switch l["type"] {
		case "tools":
			if l["extension"] == "mcp" {
				order = append(order, fmt.Sprintf("tools %v +%v -%v (%v)", l["extension"], l["added"], l["removed"], l["reason"]))
			}
		case "message":
			m := l["message"].(map[string]any)
			if m["role"] == "user" {
				order = append(order, "user")
				users = append(users, l["id"].(string))
			}
		}
	}
	require.Len(t, order, 4, "%v", order)
	assert.Contains(t, order[0], "tools mcp +[mcp__t__big mcp__t__die mcp__t__fail mcp__t__grow mcp__t__ping mcp__t__slow]")
	assert.Equal(t, "user", order[1])
	assert.Equal(t, "tools mcp +[mcp__t__grown] -[mcp__t__ping] (mcp server t: its tools changed)", order[2])
	assert.Equal(t, "user", order[3])

	// panto prompt --tools reads, from the log alone, what each point offered.
	at := func(args ...string) string {
		return h.ok(append([]string{"prompt", "--session", log, "--tools"}, args...)...).stdout
	}
	then := at("--at", users[0])
	assert.Contains(t, then, "--- tools of the mcp extension (6) ---")
	assert.Contains(t, then, "mcp__t__ping  Answers pong.")
	assert.NotContains(t, then, "mcp__t__grown")
	now := at("--at", users[1])
	assert.Contains(t, now, "mcp__t__grown  Added by grow.")
	assert.NotContains(t, now, "mcp__t__ping")
	var js struct {
		Tools []struct {
			Extension string
			Tools     []struct{ Name string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(at("--at", users[1], "--json")), &js))
	require.NotEmpty(t, js.Tools)
	assert.Equal(t, "mcp", js.Tools[len(js.Tools)-1].Extension)
}

func TestMCPServersThatFail(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.userMCP("[mcp.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo no database here >&2; exit 1\"]\n\n" + testServerTable("t"))
	r := h.ok(append([]string{"-p", "tool:mcp__t__ping {}", "--provider", "echo", "--no-session"}, mcpExt()...)...)
	assert.Contains(t, r.stderr, "mcp server broken (config "+filepath.Join(h.userDir(), "config.toml")+") did not start")
	assert.Contains(t, r.stderr, "no database here", "the end of its stderr")
	assert.Contains(t, r.stdout, "mcp__t__ping (ok, 1 line(s)): pong", "the session goes on without it")

	h.userMCP("[mcp.broken]\ncommand = \"false\"\nrequired = true\n\n" + testServerTable("t"))
	r = h.run("", append([]string{"-p", "hi", "--provider", "echo", "--no-session"}, mcpExt()...)...)
	assert.Equal(t, 1, r.code, "a required server that does not start fails the run: %s", r.stderr)
	assert.Contains(t, r.stderr, "mcp server broken")
	assert.Contains(t, r.stderr, "it is required")
}

// server-everything's long-running operation, cut by tool_timeout.
func TestMCPEverythingLongRunningCallTimesOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.userMCP(fmt.Sprintf("[mcp.everything]\ncommand = \"node\"\nargs = [%s, \"stdio\"]\ntool_timeout = \"1s\"\n", tomlString(mcptest.NPMServer(t, "server-everything"))))
	h.ok(append([]string{"-p", `tool:mcp__everything__trigger-long-running-operation {"duration": 30, "steps": 5}`, "--provider", "echo"}, mcpExt()...)...)
	res := toolResults(t, h.sessionFiles()[0])
	require.Len(t, res, 1)
	assert.Equal(t, true, res[0]["is_error"])
	assert.Equal(t, "mcp server everything: trigger-long-running-operation did not finish within 1s (tool_timeout); the server was told to stop it", res[0]["text"])
}

func TestMCPToolTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mark := filepath.Join(h.root, "cancelled")
	h.userMCP(testServerTable("t", `tool_timeout = "300ms"`, `env = { `+mcptest.MarkEnv+` = `+tomlString(mark)+` }`))
	r := h.ok(append([]string{"-p", "tool:mcp__t__slow {}", "--provider", "echo", "--no-session"}, mcpExt()...)...)
	assert.Contains(t, r.stdout, "mcp__t__slow (error, 1 line(s)): mcp server t: slow did not finish within 300ms (tool_timeout)")
	b, _ := os.ReadFile(mark)
	assert.Equal(t, "cancelled", string(b), "the server got notifications/cancelled")
}

// A project's .mcp.json runs nothing until trusted, and nothing again
// once it changes.
func TestMCPProjectTrust(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mcpJSON := func(name string) {
		h.write(filepath.Join(h.project, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {%q: {"command": %q, "args": [], "env": {"X": "${HOME}"}}}}`, name, filepath.Join(pluginDir, "mcpserver")))
	}
	mcpJSON("proj")
	list := func() result { return h.ok(append([]string{"mcp", "list"}, mcpExt()...)...) }

	r := list()
	assert.Contains(t, r.stdout, "no MCP servers are configured here")
	assert.Contains(t, r.stderr, "the project's MCP servers (proj) do not run until you trust "+filepath.Join(h.project, ".mcp.json"))
	assert.Contains(t, r.stderr, "panto mcp trust")

	r = h.ok("mcp", "trust", "--show")
	assert.Contains(t, r.stdout, "proj: runs "+filepath.Join(pluginDir, "mcpserver"))
	assert.Contains(t, r.stdout, "env X = ${HOME}")
	assert.Contains(t, r.stdout, "Trusted: no")

	r = h.ok("mcp", "trust")
	assert.Contains(t, r.stdout, "Trusted: panto runs these servers from now on")
	r = list()
	assert.Contains(t, r.stdout, "proj (stdio, project "+filepath.Join(h.project, ".mcp.json")+"): ready, 6 tools")
	assert.Contains(t, r.stdout, "mcp__proj__ping")

	mcpJSON("changed")
	r = list()
	assert.Contains(t, r.stdout, "no MCP servers are configured here")
	assert.Contains(t, r.stderr, "changed since you trusted it")

	// A trusted project's server never gets a provider's key, nor
	// replaces a server the user configured.
	h.write(filepath.Join(h.project, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"leak": {"command": %q, "env": {"K": "${ANTHROPIC_API_KEY}"}}, "t": {"command": "false"}}}`, filepath.Join(pluginDir, "mcpserver")))
	h.ok("mcp", "trust")
	h.userMCP(testServerTable("t"))
	h.env["ANTHROPIC_API_KEY"] = "sk-secret"
	r = list()
	assert.Contains(t, r.stderr, "mcp server leak (project "+filepath.Join(h.project, ".mcp.json")+"): env K: ${ANTHROPIC_API_KEY}: a project's MCP server never gets a provider's API key; it is left out")
	assert.Contains(t, r.stderr, "ignoring MCP server t of project")
	assert.Contains(t, r.stdout, "t (stdio, config "+filepath.Join(h.userDir(), "config.toml")+"): ready")
	assert.NotContains(t, r.stdout+r.stderr, "sk-secret")
}

// pidAlive reports whether the process pid still runs (a zombie, dead
// but not reaped by its parent, counts as ended).
func pidAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) STATE ...
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// No server outlives panto, however panto ends.
func TestMCPServersEndWithPanto(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"exit", "SIGINT", "SIGTERM", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			pidFile := filepath.Join(h.root, "server.pid")
			// A server that outlives its input: only the end of its
			// process group ends it.
			h.userMCP(testServerTable("t", `env = { `+mcptest.PIDEnv+` = `+tomlString(pidFile)+`, `+mcptest.StayEnv+` = "1" }`))
			args := append([]string{"--no-session"}, mcpExt()...)
			var cmd *exec.Cmd
			waiting := func() bool { return true }
			if how == "exit" {
				cmd = h.command("", append([]string{"-p", "tool:mcp__t__ping {}", "--provider", "echo"}, args...)...)
			} else {
				fake := newFake(t, reply{hang: true, headers: map[string]string{"content-type": "text/event-stream"}, body: sse(
					"message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}`)})
				h.env["ANTHROPIC_API_KEY"] = "k"
				cmd = h.command("", append([]string{"-p", "hi", "--provider", "anthropic", "--base-url", fake.srv.URL}, args...)...)
				waiting = func() bool { return fake.count() > 0 }
			}
			cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
			require.NoError(t, cmd.Start())
			var pid int
			require.Eventually(t, func() bool {
				b, err := os.ReadFile(pidFile)
				pid, _ = strconv.Atoi(string(b))
				return err == nil && pid > 0
			}, 20*time.Second, 10*time.Millisecond, "the server started")
			if how != "exit" {
				require.Eventually(t, waiting, 20*time.Second, 10*time.Millisecond, "panto waits on the provider")
				sig := map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}[how]
				require.NoError(t, cmd.Process.Signal(sig))
			}
			_ = cmd.Wait()
			require.Eventually(t, func() bool { return !pidAlive(pid) }, 10*time.Second, 20*time.Millisecond,
				"the server (pid %d) ended with panto (%s)", pid, how)
		})
	}
}

// server-filesystem reads and writes through MCP, inside its root only.
func TestMCPFilesystemServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := filepath.Join(h.root, "allowed")
	h.write(filepath.Join(root, "notes.txt"), "first line\n")
	h.write(filepath.Join(h.root, "secret.txt"), "not for the model\n")
	h.userMCP(fmt.Sprintf("[mcp.fs]\ncommand = \"node\"\nargs = [%s, %s]\n", tomlString(mcptest.NPMServer(t, "server-filesystem")), tomlString(root)))
	in := func(v map[string]string) string { b, _ := json.Marshal(v); return string(b) }
	prompt := strings.Join([]string{
		"tool:mcp__fs__read_text_file " + in(map[string]string{"path": filepath.Join(root, "notes.txt")}),
		"tool:mcp__fs__write_file " + in(map[string]string{"path": filepath.Join(root, "new.txt"), "content": "written through MCP\n"}),
		"tool:mcp__fs__read_text_file " + in(map[string]string{"path": filepath.Join(h.root, "secret.txt")}),
		"tool:mcp__fs__write_file " + in(map[string]string{"path": filepath.Join(h.root, "escaped.txt"), "content": "x"}),
	}, "\n")
	r := h.ok(append([]string{"-p", prompt, "--provider", "echo", "--no-session"}, mcpExt()...)...)
	assert.Contains(t, r.stdout, "mcp__fs__read_text_file (ok, 1 line(s)): first line")
	got, err := os.ReadFile(filepath.Join(root, "new.txt"))
	require.NoError(t, err, "the write went through: %s", r.stdout)
	assert.Equal(t, "written through MCP\n", string(got))
	assert.NotContains(t, r.stdout, "not for the model", "a read outside the root is refused")
	assert.Equal(t, 2, strings.Count(r.stdout, "(error, "), "both calls outside the root are errors: %s", r.stdout)
	assert.Contains(t, r.stdout, "Access denied")
	assert.NoFileExists(t, filepath.Join(h.root, "escaped.txt"))
}

// Ctrl-C while an MCP tool runs cancels it at the server too.
func TestMCPCtrlCCancelsTheCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mark := filepath.Join(h.root, "mark")
	h.userMCP(testServerTable("t", `env = { `+mcptest.MarkEnv+` = `+tomlString(mark)+` }`))
	cmd := h.command("", append([]string{"-p", "tool:mcp__t__slow {}", "--provider", "echo"}, mcpExt()...)...)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { b, _ := os.ReadFile(mark); return string(b) == "started" }, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	_ = cmd.Wait()
	assert.Equal(t, 130, cmd.ProcessState.ExitCode(), "stderr: %s", errb.String())
	require.Eventually(t, func() bool { b, _ := os.ReadFile(mark); return string(b) == "cancelled" }, 10*time.Second, 10*time.Millisecond,
		"the server got notifications/cancelled")
	// What the model is told is recorded.
	var results []string
	for _, l := range logLines(t, h.sessionFiles()[0]) {
		if m, ok := l["message"].(map[string]any); ok && m["role"] == "tool" {
			b, _ := json.Marshal(m)
			results = append(results, string(b))
		}
	}
	require.Len(t, results, 1)
	assert.Contains(t, results[0], "mcp server t: slow was interrupted")
}

// panto mcp auth NAME authorizes a server in a terminal: it prints the URL
// to open and waits for the redirect; the next sessions use the token.
func TestMCPAuthInATerminal(t *testing.T) {
	t.Parallel()
	a := mcptest.NewAuthServer(t)
	h := newHarness(t)
	h.userMCP("[mcp.web]\nurl = " + tomlString(a.URL+"/mcp") + "\n")

	r := h.ok(append([]string{"mcp", "list"}, mcpExt()...)...)
	assert.Contains(t, r.stdout, "web (http, config "+filepath.Join(h.userDir(), "config.toml")+"): needs auth")

	cmd := h.command("", append([]string{"mcp", "auth", "web"}, mcpExt()...)...)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	var u string
	require.Eventually(t, func() bool {
		for _, line := range strings.Split(out.String(), "\n") {
			if s := strings.TrimSpace(line); strings.HasPrefix(s, "http") {
				u = s
			}
		}
		return u != ""
	}, 20*time.Second, 20*time.Millisecond, "the URL to open: %s %s", out.String(), errb.String())
	resp, err := http.Get(u) // the person opens it; it redirects to panto's loopback port
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, cmd.Wait(), "stderr: %s", errb.String())
	assert.Contains(t, out.String(), "mcp server web is authorized: 1 tools")

	r = h.ok(append([]string{"-p", "tool:mcp__web__ping {}", "--provider", "echo", "--no-session"}, mcpExt()...)...)
	assert.Contains(t, r.stdout, "mcp__web__ping (ok, 1 line(s)): pong", "the kept token: %s", r.stderr)
	files, _ := filepath.Glob(filepath.Join(h.home, "*", "panto", "mcp-oauth", "*.json"))
	require.Len(t, files, 1, "kept under the state directory")
	st, err := os.Stat(files[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}
