// Package mcpconfig turns the configured MCP servers into what the mcp
// extension is handed: it reads a project's .mcp.json (Claude Code's
// format, so a repository's file works unchanged), expands ${VAR} in the
// servers' values, and writes the extension's configuration
// (docs/mcp.md). Whether a project's servers may run at all — its trust
// — is the app's to decide.
package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/internal/mcpwire"
)

// FileName is the project's MCP file, at the project's root (the working
// directory).
const FileName = ".mcp.json"

// jsonFile is .mcp.json: {"mcpServers": {NAME: {...}}}.
type jsonFile struct {
	MCPServers map[string]jsonServer `json:"mcpServers"`
}

// jsonServer is one entry. Fields panto does not know are ignored: the
// file is Claude Code's, and may carry its own.
type jsonServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// Parse reads a .mcp.json. Servers of a type panto does not speak (the
// old "sse") are left out, each with a note saying so; a server that
// breaks the rules of an [mcp.NAME] table is an error naming it.
func Parse(path string, data []byte) (servers []config.MCPServer, notes []string, err error) {
	var f jsonFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("read %s: more than one JSON value", path)
	}
	source := "project " + path
	for _, name := range slices.Sorted(maps.Keys(f.MCPServers)) {
		js := f.MCPServers[name]
		s := config.MCPServer{Name: name, Source: source, Project: true,
			Command: js.Command, Args: js.Args, Env: js.Env, Cwd: js.Cwd, URL: js.URL, Headers: js.Headers}
		switch js.Type {
		case "", "stdio", "http", "streamable-http", "streamableHttp":
		default:
			notes = append(notes, fmt.Sprintf("%s: server %s is of type %q, which panto does not speak (stdio and http only); it is left out", path, name, js.Type))
			continue
		}
		if err := config.CheckMCPServer("mcpServers."+name, s); err != nil {
			return nil, nil, fmt.Errorf("%s: %w (see docs/mcp.md)", path, err)
		}
		servers = append(servers, s)
	}
	return servers, notes, nil
}

// Expand replaces each ${VAR} of s with the variable's value from getenv,
// and ${VAR:-default} with the default when VAR is unset or empty. A
// variable that is unset with no default is an error; so is one that
// refuse names (a project's server never gets a provider's API key).
func Expand(s string, getenv func(string) string, refuse func(string) bool) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("%q: ${ without a closing }", s)
		}
		b.WriteString(s[:i])
		ref := s[i+2 : i+j]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVar(name) {
			return "", fmt.Errorf("${%s}: not a variable name", ref)
		}
		if refuse != nil && refuse(name) {
			return "", fmt.Errorf("${%s}: a project's MCP server never gets a provider's API key", name)
		}
		v := getenv(name)
		switch {
		case v == "" && hasDef:
			v = def
		case v == "":
			return "", fmt.Errorf("${%s}: %s is not set", name, name)
		}
		b.WriteString(v)
		s = s[i+j+1:]
	}
}

func validVar(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Server is one server as the mcp extension takes it; ExtensionConfig its
// whole configuration (internal/mcpwire, which the extension reads).
type (
	Server          = mcpwire.Server
	ExtensionConfig = mcpwire.Config
)

// Options say how Resolve expands and places the servers.
type Options struct {
	Getenv func(string) string
	// IsKey names the provider API key variables a project's server
	// never expands.
	IsKey func(string) bool
	// Dir is the project directory: a relative cwd is taken from there.
	Dir string
}

// Failure is a server Resolve left out, and why.
type Failure struct {
	Server config.MCPServer
	Err    error
}

func (f Failure) Error() string {
	return fmt.Sprintf("mcp server %s (%s): %v", f.Server.Name, f.Server.Source, f.Err)
}

// Resolve expands each server's values; a server whose expansion fails
// is left out, with a Failure saying why (the session goes on without
// it, as without one that does not start, unless it is required).
func Resolve(servers []config.MCPServer, opts Options) (out []Server, failed []Failure) {
	for _, s := range servers {
		r, err := resolve(s, opts)
		if err != nil {
			failed = append(failed, Failure{s, err})
			continue
		}
		out = append(out, r)
	}
	return out, failed
}

func resolve(s config.MCPServer, opts Options) (Server, error) {
	var refuse func(string) bool
	if s.Project {
		refuse = opts.IsKey
	}
	var err error
	ex := func(what, v string) string {
		if err != nil {
			return ""
		}
		out, e := Expand(v, opts.Getenv, refuse)
		if e != nil {
			err = fmt.Errorf("%s: %w", what, e)
		}
		return out
	}
	exMap := func(what string, m map[string]string) map[string]string {
		if len(m) == 0 {
			return nil
		}
		out := make(map[string]string, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out[k] = ex(what+" "+k, m[k])
		}
		return out
	}
	r := Server{Name: s.Name, Source: s.Source, EnabledTools: s.EnabledTools, DisabledTools: s.DisabledTools, Required: s.Required,
		StartupTimeout: mcpwire.Duration(s.StartupTimeout), ToolTimeout: mcpwire.Duration(s.ToolTimeout)}
	r.Command = ex("command", s.Command)
	for i, a := range s.Args {
		r.Args = append(r.Args, ex(fmt.Sprintf("args[%d]", i), a))
	}
	r.Env = exMap("env", s.Env)
	r.URL = ex("url", s.URL)
	r.Headers = exMap("headers", s.Headers)
	r.Cwd = ex("cwd", s.Cwd)
	if err != nil {
		return Server{}, err
	}
	if err := config.CheckMCPServer("mcp."+s.Name, config.MCPServer{Name: s.Name, Command: r.Command, URL: r.URL}); err != nil {
		return Server{}, err // a url that ${VAR} made
	}
	if r.Cwd == "" {
		r.Cwd = opts.Dir
	} else if !filepath.IsAbs(r.Cwd) {
		r.Cwd = filepath.Join(opts.Dir, r.Cwd)
	}
	return r, nil
}
