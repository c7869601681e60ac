// Package mcptest is an MCP server over stdio, built with the official
// Go SDK, for the mcp extension's tests and panto's end-to-end tests:
// tools whose set changes, one that waits until it is cancelled, one that
// fails, one with a long result and one that exits the server.
package mcptest

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Env, set, makes a test binary that calls Run from TestMain this server.
const Env = "PANTO_MCP_TEST_SERVER"

// MarkEnv names a file the slow tool writes "started" to as it starts
// and "cancelled" when the client's notifications/cancelled ends it; PIDEnv one the server writes
// its pid to as it starts.
// StayEnv, set, keeps the server running after its stdin ends, as a
// server that ignores the end of its input (or a process it left
// behind) would: only its process group's death ends it.
const (
	MarkEnv = "PANTO_MCP_TEST_MARK"
	PIDEnv  = "PANTO_MCP_TEST_PID"
	StayEnv = "PANTO_MCP_TEST_STAY"
)

// Run serves the tools on stdin and stdout until stdin ends: ping
// (answers pong), grow (adds grown and removes ping; the SDK sends
// notifications/tools/list_changed), slow (waits until cancelled), fail
// (an isError result), big (5,000 lines) and die (exits with status 3).
func Run() {
	if p := os.Getenv(PIDEnv); p != "" {
		_ = os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "panto-test", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	text := func(t string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t}}}
	}
	s.AddTool(&mcp.Tool{Name: "ping", Description: "Answers pong.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("pong"), nil
	})
	s.AddTool(&mcp.Tool{Name: "grow", Description: "Adds the tool grown.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.AddTool(&mcp.Tool{Name: "grown", Description: "Added by grow.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("grown here"), nil
		})
		s.RemoveTools("ping")
		return text("grew"), nil
	})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Waits until cancelled.", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if mark := os.Getenv(MarkEnv); mark != "" {
			_ = os.WriteFile(mark, []byte("started"), 0o600)
		}
		select {
		case <-ctx.Done():
			if mark := os.Getenv(MarkEnv); mark != "" {
				_ = os.WriteFile(mark, []byte("cancelled"), 0o600)
			}
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return text("finished"), nil
		}
	})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "An error result.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("it went wrong")
		r.IsError = true
		return r, nil
	})
	s.AddTool(&mcp.Tool{Name: "big", Description: "A long result.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, _ := json.Marshal(map[string]int{"n": 1})
		out := ""
		for i := range 5000 {
			out += string(b) + " line " + strconv.Itoa(i) + "\n"
		}
		return text(out), nil
	})
	s.AddTool(&mcp.Tool{Name: "die", Description: "Exits the server.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Stderr.WriteString("test server: exiting as asked\n")
		os.Exit(3)
		return nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	if os.Getenv(StayEnv) != "" {
		select {}
	}
}

// NPMServer is the entry point of an @modelcontextprotocol package the
// tests run (server-everything, server-filesystem), installed by .ci/run
// with npm ci --prefix extensions/mcp/testdata/servers. Without node or
// the package the test is skipped, but not under CI, where it fails.
func NPMServer(t testing.TB, pkg string) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0) // internal/mcptest/mcptest.go
	root := filepath.Join(filepath.Dir(here), "..", "..")
	path := filepath.Join(root, "extensions", "mcp", "testdata", "servers", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	_, err := os.Stat(path)
	if _, nerr := exec.LookPath("node"); nerr != nil || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and %s are needed (npm ci --prefix extensions/mcp/testdata/servers): %v %v", pkg, nerr, err)
		}
		t.Skipf("node or %s is not installed (npm ci --prefix extensions/mcp/testdata/servers)", pkg)
	}
	return path
}

// EverythingHTTP starts server-everything's Streamable HTTP transport on
// a free loopback port and returns its endpoint (…/mcp) once it listens;
// the server is killed when the test ends. NPMServer's rules on node and
// the package apply.
func EverythingHTTP(t testing.TB) string {
	t.Helper()
	path := NPMServer(t, "server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command("node", path, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start server-everything: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything does not listen on %s: %v", addr, err)
		}
	}
}
