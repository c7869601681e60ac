package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/mcptest"
	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

// everything is the path of server-everything's entry point, installed
// by .ci/run (npm ci --prefix extensions/mcp/testdata/servers). Without
// node or the package the test is skipped, but not under CI.
func everything(t *testing.T) string {
	t.Helper()
	return mcptest.NPMServer(t, "server-everything")
}

func configJSON(t *testing.T, servers ...Server) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(Config{Servers: servers})
	require.NoError(t, err)
	return b
}

// testServer is the test binary as an MCP server (testserver_test.go).
func testServer(t *testing.T, name string, env ...string) Server {
	t.Helper()
	e := map[string]string{mcptest.Env: "1"}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	return Server{Name: name, Source: "test", Command: os.Args[0], Env: e}
}

// started is a harness whose extension started servers; they are closed
// when the test ends.
func started(t *testing.T, servers ...Server) (*sdktest.Harness, *ext) {
	t.Helper()
	e := &ext{}
	h := sdktest.New(t, e)
	t.Cleanup(e.closeAll)
	require.NoError(t, h.Init(configJSON(t, servers...)))
	return h, e
}

func toolNames(h *sdktest.Harness) []string {
	var out []string
	for _, t := range h.Tools() {
		out = append(out, t.Name)
	}
	return out
}

func TestEverythingOverStdio(t *testing.T) {
	h, _ := started(t, Server{Name: "everything", Source: "test", Command: "node", Args: []string{everything(t), "stdio"}})
	checkEverything(t, h)
}

// checkEverything checks what server-everything offers and answers, over
// either transport.
func checkEverything(t *testing.T, h *sdktest.Harness) {
	t.Helper()
	names := toolNames(h)
	require.Contains(t, names, "mcp__everything__echo")
	require.Contains(t, names, "mcp__everything__get-sum")
	for _, tool := range h.Tools() {
		var schema map[string]any
		require.NoError(t, json.Unmarshal(tool.Parameters, &schema), tool.Name)
		assert.Equal(t, "object", schema["type"], tool.Name)
		if tool.Name == "mcp__everything__echo" {
			assert.Equal(t, "Echoes back the input string", tool.Description)
			assert.Contains(t, string(tool.Parameters), `"message"`, "the server's input schema")
		}
	}

	res, err := h.CallTool("mcp__everything__echo", json.RawMessage(`{"message":"hi there"}`))
	require.NoError(t, err)
	assert.Equal(t, sdk.ToolResult{Content: "Echo: hi there"}, res)

	res, err = h.CallTool("mcp__everything__get-sum", json.RawMessage(`{"a":2,"b":40}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Contains(t, res.Content, "42")

	// The server refuses the input: an isError result the model reads.
	res, err = h.CallTool("mcp__everything__echo", json.RawMessage(`{"message":5}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "Invalid arguments for tool echo")

	// Structured content only: it is the text.
	res, err = h.CallTool("mcp__everything__get-structured-content", json.RawMessage(`{"location":"Chicago"}`))
	require.NoError(t, err)
	var weather map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.Content), &weather), res.Content)
	assert.Contains(t, weather, "temperature")

	// An image comes as an image, after the text.
	res, err = h.CallTool("mcp__everything__get-tiny-image", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Len(t, res.Images, 1)
	assert.Equal(t, "image/png", res.Images[0].MediaType)
	assert.Equal(t, "\x89PNG", string(res.Images[0].Data[:4]))
	assert.Contains(t, res.Content, "[image: image/png")
}

func TestEverythingOverStreamableHTTP(t *testing.T) {
	h, _ := started(t, Server{Name: "everything", Source: "test", URL: mcptest.EverythingHTTP(t)})
	checkEverything(t, h)
}

func TestEnabledAndDisabledTools(t *testing.T) {
	srv := testServer(t, "t")
	srv.EnabledTools = []string{"ping", "fail", "slow"}
	srv.DisabledTools = []string{"slow"}
	h, _ := started(t, srv)
	assert.Equal(t, []string{"mcp__t__fail", "mcp__t__ping"}, toolNames(h), "in the server's order")
}

func TestErrorResult(t *testing.T) {
	h, _ := started(t, testServer(t, "t"))
	res, err := h.CallTool("mcp__t__fail", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, sdk.ToolResult{Content: "it went wrong", IsError: true}, res)
}

// A new tool set goes to panto (Host.SetTools), which applies it at the
// next turn boundary.
func TestToolsChangedAtTheServer(t *testing.T) {
	h, _ := started(t, testServer(t, "t"))
	require.Contains(t, toolNames(h), "mcp__t__ping")
	res, err := h.CallTool("mcp__t__grow", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Equal(t, "grew", res.Content)
	require.Eventually(t, func() bool {
		return len(h.ToolSets()) > 0 && slices.Contains(toolNames(h), "mcp__t__grown") && !slices.Contains(toolNames(h), "mcp__t__ping")
	},
		10*time.Second, 20*time.Millisecond, "tools now: %v", toolNames(h))
	set := h.ToolSets()[len(h.ToolSets())-1]
	assert.Equal(t, "mcp server t: its tools changed", set.Reason)
	res, err = h.CallTool("mcp__t__grown", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, "grown here", res.Content)
}

func TestToolTimeoutCancelsTheCall(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	srv := testServer(t, "t", mcptest.MarkEnv+"="+mark)
	srv.ToolTimeout = Duration(300 * time.Millisecond)
	h, _ := started(t, srv)
	start := time.Now()
	res, err := h.CallTool("mcp__t__slow", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.True(t, res.IsError)
	assert.Equal(t, "mcp server t: slow did not finish within 300ms (tool_timeout); the server was told to stop it", res.Content)
	// The server got notifications/cancelled: its handler's context ended.
	require.Eventually(t, func() bool { b, _ := os.ReadFile(mark); return string(b) == "cancelled" }, 10*time.Second, 20*time.Millisecond)
}

func TestServersThatDoNotStart(t *testing.T) {
	e := &ext{}
	h := sdktest.New(t, e)
	t.Cleanup(e.closeAll)
	boom := Server{Name: "boom", Source: "user config", Command: "sh", Args: []string{"-c", "echo cannot reach the database >&2; exit 1"}}
	missing := Server{Name: "missing", Source: "user config", Command: filepath.Join(t.TempDir(), "no-such-server")}
	slow := Server{Name: "slow", Source: "user config", Command: "sleep", Args: []string{"60"}, StartupTimeout: Duration(300 * time.Millisecond)}
	require.NoError(t, h.Init(configJSON(t, boom, missing, slow, testServer(t, "ok"))), "the session goes on without them")
	assert.Contains(t, toolNames(h), "mcp__ok__ping")
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	var notices []string
	for _, n := range h.Notices() {
		notices = append(notices, n.Text)
	}
	text := strings.Join(notices, "\n")
	assert.Contains(t, text, "mcp server boom (user config) did not start")
	assert.Contains(t, text, "cannot reach the database", "the end of its stderr")
	assert.Contains(t, text, "mcp server missing (user config) did not start")
	assert.Contains(t, text, "mcp server slow (user config) did not start: it did not start within 300ms (startup_timeout)")
	assert.Equal(t, "mcp 1/4", h.Status()["servers"])

	out, err := h.Command("mcp", "")
	require.NoError(t, err)
	assert.Contains(t, out.Output, "boom (stdio, user config): failed")
	assert.Contains(t, out.Output, "ok (stdio, test): ready, 6 tools")
	out, err = h.Command("mcp", "--json")
	require.NoError(t, err)
	var infos []ServerInfo
	require.NoError(t, json.Unmarshal([]byte(out.Output), &infos))
	require.Len(t, infos, 4)
	assert.Equal(t, stateFailed, infos[0].State)
	assert.Equal(t, stateReady, infos[3].State)
}

func TestARequiredServerFailsTheStart(t *testing.T) {
	e := &ext{}
	h := sdktest.New(t, e)
	t.Cleanup(e.closeAll)
	srv := Server{Name: "db", Source: "user config", Command: "false", Required: true}
	err := h.Init(configJSON(t, srv, testServer(t, "ok")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mcp server db (user config) did not start")
	assert.Contains(t, err.Error(), "it is required")
}

func TestALongResultIsCutAndSavedWhole(t *testing.T) {
	e := &ext{}
	h := sdktest.New(t, e)
	t.Cleanup(e.closeAll)
	dir := t.TempDir()
	b, err := json.Marshal(Config{Servers: []Server{testServer(t, "t")}, OutputDir: dir})
	require.NoError(t, err)
	require.NoError(t, h.Init(b))
	res, err := h.CallTool("mcp__t__big", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(res.Content), maxBytes+500)
	assert.True(t, strings.HasPrefix(res.Content, `{"n":1} line 0`+"\n"), "the head")
	assert.True(t, strings.HasSuffix(res.Content, `{"n":1} line 4999`+"\n"), "the tail")
	whole := filepath.Join(dir, "sdktest_call.txt")
	assert.Contains(t, res.Content, "the whole result is in "+whole)
	data, err := os.ReadFile(whole)
	require.NoError(t, err)
	assert.Equal(t, 5000, strings.Count(string(data), "\n"))
	st, err := os.Stat(whole)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

func TestAServerThatExitsIsRestartedOnce(t *testing.T) {
	h, _ := started(t, testServer(t, "t"))
	res, err := h.CallTool("mcp__t__die", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.True(t, res.IsError, "the call it died in: %q", res.Content)
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	require.Eventually(t, func() bool {
		r, err := h.CallTool("mcp__t__ping", json.RawMessage(`{}`))
		return err == nil && r.Content == "pong"
	}, 20*time.Second, 50*time.Millisecond, "started again")
	var notices []string
	for _, n := range h.Notices() {
		notices = append(notices, n.Text)
	}
	assert.Contains(t, strings.Join(notices, "\n"), "mcp server t stopped; starting it again")
	assert.Contains(t, strings.Join(notices, "\n"), "test server: exiting as asked", "its stderr")

	// A second exit is not restarted.
	_, err = h.CallTool("mcp__t__die", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for _, n := range h.Notices() {
			if strings.Contains(n.Text, "stopped again and is not restarted") {
				return true
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond)
	// Its tools go, from panto's next turn on.
	require.Eventually(t, func() bool { return len(h.Tools()) == 0 }, 10*time.Second, 20*time.Millisecond, "tools: %v", toolNames(h))
	out, err := h.Command("mcp", "")
	require.NoError(t, err)
	assert.Contains(t, out.Output, "t (stdio, test): failed")
}

func TestToolNames(t *testing.T) {
	assert.Equal(t, "mcp__github__create_issue", toolName("github", "create_issue"))
	assert.Equal(t, "mcp__my_server__do_it_now_", toolName("my.server", "do it/now!"))
	long := toolName("a-server-with-a-rather-long-name", "and-a-tool-whose-name-goes-on-and-on-and-on")
	assert.Len(t, long, 64)
	assert.Regexp(t, `^mcp__a-server-with-a-rather-long-name__and-a-tool-whose-n_[0-9a-f]{6}$`, long)
	other := toolName("a-server-with-a-rather-long-name", "and-a-tool-whose-name-goes-on-and-on-and-off")
	assert.NotEqual(t, long, other, "two long names that share a beginning stay apart")
	assert.Equal(t, long, toolName("a-server-with-a-rather-long-name", "and-a-tool-whose-name-goes-on-and-on-and-on"), "the same in every run")
}

// TestMain lets the test binary serve as the servers' reaper, as the mcp
// binary does (it re-executes itself).
func TestMain(m *testing.M) {
	if os.Getenv(reaperEnv) != "" {
		os.Exit(runReaper())
	}
	if os.Getenv(mcptest.Env) != "" {
		mcptest.Run()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A Streamable HTTP server that forgot the session (it restarted: 404)
// gets a new one, and the call goes through.
func TestAnExpiredHTTPSessionIsInitialisedAgain(t *testing.T) {
	newHandler := func() http.Handler {
		s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "h", Version: "1"}, nil)
		s.AddTool(&mcpsdk.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "pong"}}}, nil
		})
		return mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s }, nil)
	}
	var current atomic.Pointer[http.Handler]
	h0 := newHandler()
	current.Store(&h0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)

	h, _ := started(t, Server{Name: "web", Source: "test", URL: srv.URL})
	res, err := h.CallTool("mcp__web__ping", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Equal(t, "pong", res.Content)

	h1 := newHandler() // the server restarted: it knows no session
	current.Store(&h1)
	res, err = h.CallTool("mcp__web__ping", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, sdk.ToolResult{Content: "pong"}, res)
}
