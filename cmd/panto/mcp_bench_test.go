//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	path := filepath.Join("..", "..", "extensions", "mcp", "testdata", "servers", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := exec.LookPath("node"); err != nil {
		b.Skip("no node")
	}
	if _, err := os.Stat(path); err != nil {
		b.Skip("server-everything is not installed (npm ci --prefix extensions/mcp/testdata/servers)")
	}
	abs, _ := filepath.Abs(path)
	benchStart(b, func(h *harness) []string {
		h.write(filepath.Join(h.userDir(), "config.toml"), fmt.Sprintf("[mcp.everything]\ncommand = \"node\"\nargs = [%q, \"stdio\"]\n", abs))
		return append([]string{"--no-session"}, mcpExt()...)
	})
}
