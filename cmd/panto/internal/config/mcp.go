package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// MCPServer is one MCP server of the configuration: an [mcp.NAME] table
// of a config.toml, or an entry of a project's .mcp.json
// (docs/mcp.md). Its strings are as written: ${VAR} is expanded when the
// servers are handed to the mcp extension, not here.
type MCPServer struct {
	Name string
	// Source says where it was configured ("config /home/ann/.config/panto/config.toml").
	Source string
	// Project is true for a server from the project layer (its config or
	// its .mcp.json): its ${VAR} never reach a provider's API key.
	Project bool

	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	URL     string
	Headers map[string]string

	EnabledTools   []string
	DisabledTools  []string
	StartupTimeout time.Duration
	ToolTimeout    time.Duration
	Required       bool
}

// mcpFile is one [mcp.NAME] table.
type mcpFile struct {
	Command        *string           `toml:"command"`
	Args           []string          `toml:"args"`
	Env            map[string]string `toml:"env"`
	Cwd            *string           `toml:"cwd"`
	URL            *string           `toml:"url"`
	Headers        map[string]string `toml:"headers"`
	EnabledTools   []string          `toml:"enabled_tools"`
	DisabledTools  []string          `toml:"disabled_tools"`
	StartupTimeout *duration         `toml:"startup_timeout"`
	ToolTimeout    *duration         `toml:"tool_timeout"`
	Required       *bool             `toml:"required"`
}

// mcpName is what an MCP server may be called: it becomes part of its
// tools' names (mcp__NAME__TOOL) and of what the user reads.
var mcpName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// CheckMCPName says why name cannot name an MCP server, or nil.
func CheckMCPName(name string) error {
	if !mcpName.MatchString(name) {
		return fmt.Errorf("an MCP server's name is 1 to 64 letters, digits, '.', '_' or '-'")
	}
	return nil
}

// CheckMCPServer checks one server's values; key names it in the error
// ("mcp.docs").
func CheckMCPServer(key string, s MCPServer) error {
	if err := CheckMCPName(s.Name); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	switch {
	case s.Command == "" && s.URL == "":
		return fmt.Errorf("%s: give command (a stdio server) or url (a Streamable HTTP server)", key)
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("%s: give command or url, not both", key)
	case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != ""):
		return fmt.Errorf("%s: args, env and cwd are for a stdio server (command), not one at a url", key)
	case s.Command != "" && len(s.Headers) > 0:
		return fmt.Errorf("%s: headers are for a server at a url, not a stdio one (command)", key)
	}
	if s.URL != "" && !strings.Contains(s.URL, "${") {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s: url %q: want an http:// or https:// URL", key, s.URL)
		}
	}
	for _, t := range s.EnabledTools {
		if slices.Contains(s.DisabledTools, t) {
			return fmt.Errorf("%s: tool %q is in both enabled_tools and disabled_tools", key, t)
		}
	}
	return nil
}

func (m mcpFile) server(name, source string) MCPServer {
	s := MCPServer{Name: name, Source: source, Args: m.Args, Env: m.Env, Headers: m.Headers,
		EnabledTools: m.EnabledTools, DisabledTools: m.DisabledTools}
	set(&s.Command, m.Command)
	set(&s.Cwd, m.Cwd)
	set(&s.URL, m.URL)
	set(&s.Required, m.Required)
	if m.StartupTimeout != nil {
		s.StartupTimeout = m.StartupTimeout.d
	}
	if m.ToolTimeout != nil {
		s.ToolTimeout = m.ToolTimeout.d
	}
	return s
}

// checkMCP checks a file's [mcp.NAME] tables.
func (f file) checkMCP() error {
	for _, name := range slices.Sorted(maps.Keys(f.MCP)) {
		if err := CheckMCPServer("mcp."+name, f.MCP[name].server(name, "")); err != nil {
			return err
		}
	}
	return nil
}

// mergeMCP adds a file's servers: a later layer's server of a name
// replaces an earlier one's whole, except that a project never replaces
// one the user configured (it is told and ignored: Config.MCPShadowed).
func (f file) mergeMCP(c *Config, source string, project bool) {
	for _, name := range slices.Sorted(maps.Keys(f.MCP)) {
		s := f.MCP[name].server(name, source)
		s.Project = project
		i := slices.IndexFunc(c.MCP, func(o MCPServer) bool { return o.Name == name })
		switch {
		case i < 0:
			c.MCP = append(c.MCP, s)
		case project && !c.MCP[i].Project:
			c.MCPShadowed = append(c.MCPShadowed, s)
		default:
			c.MCP[i] = s
		}
	}
}
