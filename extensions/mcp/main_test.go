package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk/sdktest"
)

// everything is the path of server-everything's entry point, installed
// by .ci/run (npm ci --prefix extensions/mcp/testdata/servers). Without
// node or the package the test is skipped, but not under CI.
func everything(t *testing.T) string {
	t.Helper()
	return npmServer(t, "server-everything")
}

func npmServer(t *testing.T, pkg string) string {
	t.Helper()
	path, _ := filepath.Abs(filepath.Join("testdata", "servers", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	_, err := os.Stat(path)
	if _, nerr := exec.LookPath("node"); nerr != nil || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and %s are needed (npm ci --prefix extensions/mcp/testdata/servers): %v %v", pkg, nerr, err)
		}
		t.Skipf("node or %s is not installed (npm ci --prefix extensions/mcp/testdata/servers)", pkg)
	}
	return path
}

func configJSON(t *testing.T, servers ...Server) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(Config{Servers: servers})
	require.NoError(t, err)
	return b
}

func TestEverythingOverStdio(t *testing.T) {
	e := &ext{}
	h := sdktest.New(t, e)
	t.Cleanup(e.closeAll)
	srv := Server{Name: "everything", Source: "test", Command: "node", Args: []string{everything(t), "stdio"}}
	require.NoError(t, h.Init(configJSON(t, srv)))

	names := map[string]bool{}
	for _, tool := range h.Tools() {
		names[tool.Name] = true
		assert.Contains(t, string(tool.Parameters), `"type":"object"`, tool.Name)
	}
	assert.True(t, names["mcp__everything__echo"], "tools: %v", names)
	assert.True(t, names["mcp__everything__get-sum"], "tools: %v", names)

	res, err := h.CallTool("mcp__everything__echo", json.RawMessage(`{"message":"hi there"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "Echo: hi there", res.Content)

	res, err = h.CallTool("mcp__everything__get-sum", json.RawMessage(`{"a":2,"b":40}`))
	require.NoError(t, err)
	assert.Contains(t, res.Content, "42")
	_ = time.Second
	_ = strings.Contains
}

// TestMain lets the test binary serve as the servers' reaper, as the mcp
// binary does (it re-executes itself).
func TestMain(m *testing.M) {
	if os.Getenv(reaperEnv) != "" {
		os.Exit(runReaper())
	}
	os.Exit(m.Run())
}
