package mcpconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/internal/mcpwire"
)

// A .mcp.json as Claude Code writes it, with its own fields, works as it is.
func TestParseClaudeCodesFormat(t *testing.T) {
	t.Parallel()
	servers, notes, err := Parse("/p/.mcp.json", []byte(`{
	  "mcpServers": {
	    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_PAT}"}},
	    "db": {"command": "npx", "args": ["-y", "@bytebase/dbhub", "--dsn", "${DSN:-sqlite:///tmp/x.db}"], "env": {"LOG": "1"}, "alwaysAllow": ["query"]},
	    "old": {"type": "sse", "url": "https://old.example/sse"}
	  },
	  "someOtherTool": true
	}`))
	require.NoError(t, err)
	require.Equal(t, []config.MCPServer{
		{Name: "db", Source: "project /p/.mcp.json", Project: true, Command: "npx", Args: []string{"-y", "@bytebase/dbhub", "--dsn", "${DSN:-sqlite:///tmp/x.db}"}, Env: map[string]string{"LOG": "1"}},
		{Name: "github", Source: "project /p/.mcp.json", Project: true, URL: "https://api.githubcopilot.com/mcp/", Headers: map[string]string{"Authorization": "Bearer ${GITHUB_PAT}"}},
	}, servers)
	require.Equal(t, []string{`/p/.mcp.json: server old is of type "sse", which panto does not speak (stdio and http only); it is left out`}, notes)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"mcpServers": `, "read /p/.mcp.json: unexpected EOF"},
		{`{} {}`, "more than one JSON value"},
		{`{"mcpServers": {"a": {}}}`, "mcpServers.a: give command (a stdio server) or url"},
		{`{"mcpServers": {"a b": {"command": "x"}}}`, "an MCP server's name is 1 to 64"},
		{`{"mcpServers": {"a": {"command": 5}}}`, "cannot unmarshal number"},
	} {
		_, _, err := Parse("/p/.mcp.json", []byte(tc.in))
		require.Error(t, err, tc.in)
		require.Contains(t, err.Error(), tc.want, tc.in)
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"A": "1", "EMPTY": "", "ANTHROPIC_API_KEY": "sk-secret"}
	get := func(k string) string { return env[k] }
	isKey := func(k string) bool { return k == "ANTHROPIC_API_KEY" }
	for in, want := range map[string]string{
		"plain":                "plain",
		"${A}":                 "1",
		"x${A}y${A}z":          "x1y1z",
		"${EMPTY:-def}":        "def",
		"${UNSET:-a:-b}":       "a:-b",
		"${A:-def}":            "1",
		"$A stays":             "$A stays",
		"${ANTHROPIC_API_KEY}": "sk-secret",
	} {
		got, err := Expand(in, get, nil)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for in, want := range map[string]string{
		"${UNSET}":             "${UNSET}: UNSET is not set",
		"${A":                  "${ without a closing }",
		"${1A}":                "not a variable name",
		"${}":                  "not a variable name",
		"${ANTHROPIC_API_KEY}": "a project's MCP server never gets a provider's API key",
	} {
		_, err := Expand(in, get, isKey)
		require.Error(t, err, in)
		require.Contains(t, err.Error(), want, in)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOKEN": "t0k", "HOST": "h.example", "ANTHROPIC_API_KEY": "sk-secret"}
	opts := Options{Getenv: func(k string) string { return env[k] }, IsKey: func(k string) bool { return k == "ANTHROPIC_API_KEY" }, Dir: "/proj"}
	out, failed := Resolve([]config.MCPServer{
		{Name: "a", Source: "user config", Command: "node", Args: []string{"${HOME:-/h}/s.js"}, Env: map[string]string{"T": "${TOKEN}", "K": "${ANTHROPIC_API_KEY}"}, StartupTimeout: 3 * time.Second},
		{Name: "b", Source: "user config", URL: "https://${HOST}/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}},
		{Name: "c", Source: "project .mcp.json", Project: true, Command: "x", Cwd: "tools"},
		{Name: "leak", Source: "project .mcp.json", Project: true, Command: "x", Env: map[string]string{"K": "${ANTHROPIC_API_KEY}"}},
		{Name: "unset", Source: "user config", Command: "x", Args: []string{"${NOPE}"}},
		{Name: "badurl", Source: "user config", URL: "${TOKEN}"},
	}, opts)
	require.Equal(t, []Server{
		{Name: "a", Source: "user config", Command: "node", Args: []string{"/h/s.js"}, Env: map[string]string{"T": "t0k", "K": "sk-secret"}, Cwd: "/proj", StartupTimeout: mcpwire.Duration(3 * time.Second)},
		{Name: "b", Source: "user config", URL: "https://h.example/mcp", Headers: map[string]string{"Authorization": "Bearer t0k"}, Cwd: "/proj"},
		{Name: "c", Source: "project .mcp.json", Command: "x", Cwd: "/proj/tools"},
	}, out, "the user's own server may name their key; a project's may not")
	var why []string
	for _, f := range failed {
		why = append(why, f.Error())
	}
	require.Equal(t, []string{
		"mcp server leak (project .mcp.json): env K: ${ANTHROPIC_API_KEY}: a project's MCP server never gets a provider's API key",
		"mcp server unset (user config): args[0]: ${NOPE}: NOPE is not set",
		`mcp server badurl (user config): mcp.badurl: url "t0k": want an http:// or https:// URL`,
	}, why)
}

// FuzzParse: any bytes give servers, or an error; never a panic, and
// every server it gives passes the rules of an [mcp.NAME] table.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["y"], "env": {"K": "${V}"}}}}`))
	f.Add([]byte(`{"mcpServers": {"b": {"type": "http", "url": "https://h/mcp", "headers": {"A": "b"}}}}`))
	f.Add([]byte(`{"mcpServers": {"c": {"type": "sse", "url": "https://h/sse"}}}`))
	f.Add([]byte(`{"mcpServers": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, _, err := Parse("/p/.mcp.json", data)
		if err != nil {
			if !strings.Contains(err.Error(), "/p/.mcp.json") {
				t.Fatalf("an error that does not name the file: %v", err)
			}
			return
		}
		for _, s := range servers {
			if err := config.CheckMCPServer(s.Name, s); err != nil {
				t.Fatalf("server %q breaks the rules: %v", s.Name, err)
			}
			if !s.Project {
				t.Fatalf("server %q of a project file not marked as the project's", s.Name)
			}
		}
	})
}

// FuzzExpand: never a panic; without ${ the text is kept as it is.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A}", "x${A:-d}y", "${", "${}", "$${A}}", "plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Expand(s, func(k string) string { return "v" }, nil)
		if !strings.Contains(s, "${") && (err != nil || got != s) {
			t.Fatalf("Expand(%q) = %q, %v; want it unchanged", s, got, err)
		}
	})
}
