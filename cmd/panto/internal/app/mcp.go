package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/keys"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/mcpconfig"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/internal/mcpwire"
)

// MCPExtension is the file name of the first-party extension that runs
// the MCP servers (extensions/mcp): panto hands it the servers, and
// starts it only when there are some.
const MCPExtension = "mcp"

// ProjectMCP is a project's .mcp.json as panto found it.
type ProjectMCP struct {
	// Path is the file; empty when the project has none.
	Path string
	// Sum is its content's sha256; Status whether the user trusted it.
	Sum    []byte
	Status trust.Status
	// Servers are what it configures; Notes what of it panto leaves out.
	Servers []config.MCPServer
	Notes   []string
	// Err is why it could not be read.
	Err error
}

// LoadProjectMCP reads the working directory's .mcp.json and says
// whether the user trusted it; a project without one gives a zero
// ProjectMCP and no error.
func LoadProjectMCP(d layers.Dirs) (ProjectMCP, *trust.Store, error) {
	ts, err := trust.Load(d.Layer(layers.User), trust.MCPFile)
	if err != nil {
		return ProjectMCP{}, nil, err
	}
	path := filepath.Join(d.CWD, mcpconfig.FileName)
	data, err := layers.ReadFile(path, layers.MaxFileSize, layers.RegularOnly)
	if errors.Is(err, os.ErrNotExist) {
		return ProjectMCP{}, ts, nil
	}
	p := ProjectMCP{Path: path}
	if err != nil {
		p.Err = fmt.Errorf("read %s: %w", path, err)
		return p, ts, nil
	}
	p.Sum = trust.Sum(data)
	p.Status = ts.Check(path, p.Sum)
	p.Servers, p.Notes, p.Err = mcpconfig.Parse(path, data)
	return p, ts, nil
}

// mcpServers are the MCP servers to run: the [mcp.NAME] tables of the
// config files applied (a project's only once its settings are trusted),
// then a trusted .mcp.json's, whose names never replace one the user
// configured. What does not run is told.
func (a *App) mcpServers() ([]config.MCPServer, error) {
	servers := slices.Clone(a.cfg.MCP)
	for _, s := range a.cfg.MCPShadowed {
		a.env.notify(fmt.Sprintf("ignoring MCP server %s of %s: you configured a server of that name, which a project never replaces", s.Name, s.Source))
	}
	for _, s := range a.flags.MCPServers {
		if i := slices.IndexFunc(servers, func(o config.MCPServer) bool { return o.Name == s.Name }); i >= 0 {
			servers[i] = s
			continue
		}
		servers = append(servers, s)
	}
	p, _, err := LoadProjectMCP(a.dirs)
	if err != nil {
		return nil, err
	}
	if p.Path == "" {
		return servers, nil
	}
	switch {
	case p.Err != nil:
		a.env.notify(fmt.Sprintf("the project's MCP servers do not run: %v", p.Err))
		return servers, nil
	case len(p.Servers) == 0:
		return servers, nil
	case p.Status == trust.Changed:
		a.env.notify(fmt.Sprintf("the project's MCP servers (%s) do not run: %s changed since you trusted it; check it, then run 'panto mcp trust'", serverNames(p.Servers), p.Path))
		return servers, nil
	case p.Status == trust.Declined:
		return servers, nil
	case p.Status != trust.Trusted:
		a.env.notify(fmt.Sprintf("the project's MCP servers (%s) do not run until you trust %s: see what they run with 'panto mcp trust --show', trust them with 'panto mcp trust'", serverNames(p.Servers), p.Path))
		return servers, nil
	}
	for _, note := range p.Notes {
		a.env.notify(note)
	}
	for _, s := range p.Servers {
		if i := slices.IndexFunc(servers, func(o config.MCPServer) bool { return o.Name == s.Name }); i >= 0 {
			if !servers[i].Project {
				a.env.notify(fmt.Sprintf("ignoring MCP server %s of %s: you configured a server of that name, which a project never replaces", s.Name, s.Source))
				continue
			}
			servers[i] = s // the project's .mcp.json over its config.toml
			continue
		}
		servers = append(servers, s)
	}
	return servers, nil
}

func serverNames(servers []config.MCPServer) string {
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// withMCP hands the MCP servers to the mcp extension, or leaves it out
// when there are none (it costs nothing then). Servers configured
// without the extension installed are told.
func (a *App) withMCP(specs []extension.Spec) ([]extension.Spec, error) {
	i := slices.IndexFunc(specs, func(s extension.Spec) bool { return filepath.Base(s.Path) == MCPExtension })
	configured, err := a.mcpServers()
	if err != nil {
		return nil, err
	}
	servers, failed := mcpconfig.Resolve(configured, mcpconfig.Options{Getenv: a.env.Getenv, IsKey: keys.IsKey, Dir: a.dirs.CWD})
	for _, f := range failed {
		if f.Server.Required {
			return nil, fmt.Errorf("%w (it is required: required = true)", f)
		}
		a.env.notify(f.Error() + "; it is left out")
	}
	if len(servers) == 0 {
		if i >= 0 {
			specs = slices.Delete(specs, i, i+1)
		}
		return specs, nil
	}
	if i < 0 {
		a.mcpMissing = true
		a.env.notify(fmt.Sprintf("MCP servers are configured (%s), but the mcp extension is not installed: make install puts it in %s (docs/mcp.md)",
			resolvedNames(servers), filepath.Join(a.dirs.Layer(layers.Base), "extensions")))
		return specs, nil
	}
	cfg := mcpconfig.ExtensionConfig{Servers: servers, OutputDir: filepath.Join(a.dirs.State, "mcp-outputs"), AuthDir: filepath.Join(a.dirs.State, "mcp-oauth")}
	cfg.ToolTimeout = mcpwire.Duration(a.cfg.ToolTimeout)
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("hand the MCP servers to the mcp extension: %w", err)
	}
	sp := &specs[i]
	sp.Config = data
	longest := time.Duration(0)
	for _, s := range configured {
		longest = max(longest, s.StartupTimeout)
		sp.MustStart = sp.MustStart || s.Required
	}
	if longest == 0 {
		longest = 10 * time.Second // the mcp extension's default startup_timeout
	}
	// Init waits for the servers, which start in parallel.
	sp.StartTimeout = longest + 5*time.Second
	// It watches nothing: a failure leaves the other tools running,
	// unless config marks it required.
	sp.Required = a.cfg.Required[MCPExtension]
	return specs, nil
}

func resolvedNames(servers []mcpconfig.Server) string {
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// ErrNoMCP says no MCP server is configured, or none may run here.
var ErrNoMCP = errors.New("no MCP servers are configured here (docs/mcp.md)")

// OpenMCP opens an in-memory session with only the mcp extension,
// started as a session starts it, for panto mcp list and auth. Nothing
// is recorded. Close it when done.
func (a *App) OpenMCP(ctx context.Context) (*host.Session, error) {
	specs, err := a.extensionSpecs()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(specs, func(s extension.Spec) bool { return filepath.Base(s.Path) == MCPExtension && s.Config != nil })
	if i < 0 {
		if a.mcpMissing {
			return nil, errors.New("the mcp extension is not installed, so no server can start (see above)")
		}
		return nil, ErrNoMCP
	}
	cfg := a.HostConfig(host.Log{ID: "mcp"}, specs[i:i+1], nil)
	cfg.MaxProcs = nil
	return host.Open(ctx, cfg)
}

// MCPList starts the MCP servers in an in-memory session and returns
// what the mcp extension's /mcp says of them (its --json form with
// asJSON).
func (a *App) MCPList(ctx context.Context, asJSON bool) (string, error) {
	sess, err := a.OpenMCP(ctx)
	if err != nil {
		return "", err
	}
	defer sess.Close(context.WithoutCancel(ctx))
	args := ""
	if asJSON {
		args = "--json"
	}
	return sess.RunCommand(ctx, "mcp", args)
}

// TrustProjectMCP trusts the working directory's .mcp.json as it is now
// and returns it; Revoke forgets it.
func TrustProjectMCP(d layers.Dirs, revoke bool) (ProjectMCP, bool, error) {
	p, ts, err := LoadProjectMCP(d)
	if err != nil {
		return p, false, err
	}
	if p.Path == "" {
		return p, false, fmt.Errorf("mcp trust: %s has no %s", d.CWD, mcpconfig.FileName)
	}
	if revoke {
		was := ts.Revoke(p.Path)
		return p, was, ts.Save()
	}
	if p.Err != nil {
		return p, false, fmt.Errorf("mcp trust: %w", p.Err)
	}
	ts.Trust(p.Path, p.Sum)
	p.Status = trust.Trusted
	return p, true, ts.Save()
}
