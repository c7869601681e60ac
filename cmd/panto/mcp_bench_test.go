//go:build unix

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/mcptest"
)

// The start-up cost of MCP servers: process start to the first request
// byte at the provider, with the mcp extension given and 0, 1 or 5 stdio
// servers configured (internal/mcptest's server, built with the official
// SDK). With none, panto leaves the extension out: the 0 case is what a
// user without MCP pays. Compare the three within one run (make bench
// BENCH=StartMCP).
func benchStartMCP(b *testing.B, servers int) {
	benchStart(b, func(h *harness) []string {
		var tables []string
		for i := range servers {
			tables = append(tables, testServerTable(fmt.Sprintf("s%d", i)))
		}
		h.write(filepath.Join(h.userDir(), "config.toml"), strings.Join(tables, "\n"))
		return append([]string{"--no-session"}, mcpExt()...)
	})
}

func BenchmarkStartMCP0(b *testing.B) { benchStartMCP(b, 0) }
func BenchmarkStartMCP1(b *testing.B) { benchStartMCP(b, 1) }
func BenchmarkStartMCP5(b *testing.B) { benchStartMCP(b, 5) }

// BenchmarkStartMCPEverything is one real Node server,
// server-everything: what most of the start costs is its own (node's).
func BenchmarkStartMCPEverything(b *testing.B) {
	path := mcptest.NPMServer(b, "server-everything")
	benchStart(b, func(h *harness) []string {
		h.write(filepath.Join(h.userDir(), "config.toml"), fmt.Sprintf("[mcp.everything]\ncommand = \"node\"\nargs = [%q, \"stdio\"]\n", path))
		return append([]string{"--no-session"}, mcpExt()...)
	})
}
