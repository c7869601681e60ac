// Package mcpwire is the configuration panto hands its first-party mcp
// extension in Init (InitRequest.config): the MCP servers, merged from
// every layer and a trusted .mcp.json, checked and with ${VAR} expanded.
// panto's app writes it (cmd/panto/internal/mcpconfig); the extension
// reads it (extensions/mcp). One definition keeps the two in step.
package mcpwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Config is what panto hands the extension in Init (sdk.HostInfo.Config):
// the MCP servers of every layer's [mcp.NAME] tables and of a trusted
// project's .mcp.json, already merged, checked and with ${VAR} expanded
// (docs/mcp.md). panto writes it; a person never does.
type Config struct {
	Servers []Server `json:"servers"`
	// ToolTimeout is panto's tool_timeout, the default of a server's.
	ToolTimeout Duration `json:"tool_timeout,omitempty"`
	// OutputDir is where a result too long for the model is saved whole
	// when the session has no log to put it beside (--no-session).
	OutputDir string `json:"output_dir,omitempty"`
	// AuthDir keeps the OAuth tokens and client ids, per server URL.
	AuthDir string `json:"auth_dir,omitempty"`
}

// Server is one MCP server: stdio (Command) or Streamable HTTP (URL).
type Server struct {
	Name string `json:"name"`
	// Source says where it was configured, for people: "user config",
	// "project .mcp.json".
	Source string `json:"source,omitempty"`

	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`

	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`

	EnabledTools   []string `json:"enabled_tools,omitempty"`
	DisabledTools  []string `json:"disabled_tools,omitempty"`
	StartupTimeout Duration `json:"startup_timeout,omitempty"`
	ToolTimeout    Duration `json:"tool_timeout,omitempty"`
	Required       bool     `json:"required,omitempty"`
}

// Duration is a time.Duration as a Go duration string ("10s").
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string; a negative one is an error.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"10s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %s is negative", s)
	}
	*d = Duration(v)
	return nil
}

// The defaults of a server's timeouts.
const (
	DefaultStartupTimeout = 10 * time.Second
	DefaultToolTimeout    = 15 * time.Minute
)

// Startup is how long the server may take to start and list its tools.
func (s Server) Startup() time.Duration {
	if s.StartupTimeout > 0 {
		return time.Duration(s.StartupTimeout)
	}
	return DefaultStartupTimeout
}

// CallTimeout is the deadline of one call: the server's tool_timeout, or
// the global one.
func (s Server) CallTimeout(global Duration) time.Duration {
	switch {
	case s.ToolTimeout > 0:
		return time.Duration(s.ToolTimeout)
	case global > 0:
		return time.Duration(global)
	}
	return DefaultToolTimeout
}

// Parse reads and checks the configuration panto sent.
func Parse(raw json.RawMessage) (Config, error) {
	var c Config
	if len(raw) == 0 {
		return c, nil
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("mcp: read the configuration panto sent: %w", err)
	}
	seen := map[string]bool{}
	for _, s := range c.Servers {
		switch {
		case s.Name == "":
			return c, errors.New("mcp: a server has no name")
		case seen[s.Name]:
			return c, fmt.Errorf("mcp: server %q is configured twice", s.Name)
		case (s.Command == "") == (s.URL == ""):
			return c, fmt.Errorf("mcp: server %q: give command (stdio) or url (Streamable HTTP), not both or neither", s.Name)
		}
		seen[s.Name] = true
	}
	return c, nil
}
