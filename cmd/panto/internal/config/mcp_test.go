package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

func TestMCPTablesMergeByName(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	user := put(t, d, layers.User, `
[mcp.docs]
command = "node"
args = ["docs.js", "stdio"]
env = { TOKEN = "${DOCS_TOKEN}" }
enabled_tools = ["search"]
startup_timeout = "20s"
tool_timeout = "1m"
required = true

[mcp.web]
url = "https://example.com/mcp"
headers = { Authorization = "Bearer ${WEB_TOKEN}" }
`)
	put(t, d, layers.Base, "[mcp.docs]\ncommand = \"old\"\n\n[mcp.base]\ncommand = \"b\"\n")
	project := put(t, d, layers.Project, "[mcp.web]\nurl = \"http://evil.example/mcp\"\n\n[mcp.proj]\ncommand = \"p\"\ncwd = \"tools\"\n")
	c, err := load(t, d)
	require.NoError(t, err)
	require.Equal(t, []MCPServer{
		{Name: "base", Source: "config " + Path(d.Layer(layers.Base)), Command: "b"},
		{Name: "docs", Source: "config " + user, Command: "node", Args: []string{"docs.js", "stdio"}, Env: map[string]string{"TOKEN": "${DOCS_TOKEN}"},
			EnabledTools: []string{"search"}, StartupTimeout: 20 * time.Second, ToolTimeout: time.Minute, Required: true},
		{Name: "web", Source: "config " + user, URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${WEB_TOKEN}"}},
		{Name: "proj", Source: "config " + project, Project: true, Command: "p", Cwd: "tools"},
	}, c.MCP, "a later layer replaces a server whole; a project never replaces the user's")
	require.Equal(t, []MCPServer{{Name: "web", Source: "config " + project, Project: true, URL: "http://evil.example/mcp"}}, c.MCPShadowed)
}

func TestMCPTablesAreStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, toml, want string }{
		{"unknown key", "[mcp.a]\ncommand = \"x\"\ncomand = \"y\"\n", "comand"},
		{"neither", "[mcp.a]\nargs = [\"x\"]\n", "mcp.a: give command (a stdio server) or url (a Streamable HTTP server)"},
		{"both", "[mcp.a]\ncommand = \"x\"\nurl = \"https://h/mcp\"\n", "mcp.a: give command or url, not both"},
		{"bad url", "[mcp.a]\nurl = \"ftp://h/mcp\"\n", `mcp.a: url "ftp://h/mcp": want an http:// or https:// URL`},
		{"headers on stdio", "[mcp.a]\ncommand = \"x\"\nheaders = { A = \"b\" }\n", "headers are for a server at a url"},
		{"args on http", "[mcp.a]\nurl = \"https://h/mcp\"\nargs = [\"x\"]\n", "args, env and cwd are for a stdio server"},
		{"bad name", "[mcp.\"a b\"]\ncommand = \"x\"\n", "an MCP server's name is 1 to 64 letters, digits"},
		{"both lists", "[mcp.a]\ncommand = \"x\"\nenabled_tools = [\"t\"]\ndisabled_tools = [\"t\"]\n", `tool "t" is in both enabled_tools and disabled_tools`},
		{"bad timeout", "[mcp.a]\ncommand = \"x\"\nstartup_timeout = \"soon\"\n", "startup_timeout"},
		{"negative timeout", "[mcp.a]\ncommand = \"x\"\ntool_timeout = \"-1s\"\n", "want a positive duration"},
		{"required type", "[mcp.a]\ncommand = \"x\"\nrequired = \"yes\"\n", "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := dirs(t)
			put(t, d, layers.User, tc.toml)
			_, err := load(t, d)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// An untrusted project's [mcp] tables run nothing.
func TestMCPOfAnUntrustedProject(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	put(t, d, layers.Project, "[mcp.proj]\ncommand = \"p\"\n")
	c, err := Load(d, Options{})
	require.NoError(t, err)
	require.Empty(t, c.MCP)
	require.NotNil(t, c.Project)
	require.False(t, c.Project.Applied)
	require.Equal(t, []Setting{{Key: "mcp.proj.command", Value: `"p"`, Note: "an MCP server panto runs: p", Table: "mcp.proj"}}, c.Project.Settings)
}
