//go:build unix

package main

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/mcptest"
)

// The MCP servers a client gives in session/new run for that session,
// over stdio and over Streamable HTTP, through the mcp extension: their
// tools are named as anywhere, and a call of one is a tool call the
// client sees.
func TestACPClientMCPServers(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	require.NoError(t, err)
	everything := mcptest.NPMServer(t, "server-everything")
	url := mcptest.EverythingHTTP(t)
	h := newHarness(t)
	c := h.acpStart(append(echoTools(h), mcpExt()...)...)
	c.initialize(map[string]any{})
	var out struct {
		SessionID string `json:"sessionId"`
	}
	c.ok("session/new", map[string]any{"cwd": h.project, "mcpServers": []any{
		map[string]any{"name": "local", "command": node, "args": []string{everything, "stdio"}, "env": []any{}},
		map[string]any{"type": "http", "name": "remote", "url": url, "headers": []any{}},
	}}, &out)
	resp, updates := c.prompt(out.SessionID, `tool:mcp__local__echo {"message":"over stdio"}`+"\n"+`tool:mcp__remote__echo {"message":"over http"}`)
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	calls := ofKind(updates, "tool_call")
	require.Len(t, calls, 2, "%v", kinds(updates))
	var results []string
	for _, u := range ofKind(updates, "tool_call_update") {
		if u["status"] == "completed" {
			results = append(results, dump(u["content"]))
		}
	}
	require.Len(t, results, 2, "both calls completed: %s", dump(updates))
	require.Contains(t, results[0]+results[1], "Echo: over stdio")
	require.Contains(t, results[0]+results[1], "Echo: over http")
	for _, call := range calls {
		require.Equal(t, "other", call["kind"])
	}
}
