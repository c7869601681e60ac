// Command mcp is panto's first-party MCP extension: it connects the MCP
// servers of panto's configuration — stdio and Streamable HTTP — and
// offers their tools to the model as mcp__SERVER__TOOL, through the same
// path as every extension's tools, so watchers, guards, timeouts and the
// session log see them alike. panto starts it when servers are
// configured and hands it the servers in Init (docs/mcp.md).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/panto-dev/panto/internal/mcpwire"
	"github.com/panto-dev/panto/sdk"
)

// version is the extension's version, as servers see the client's.
const version = "0.1.0"

type ext struct {
	sdk.Base

	mu        sync.Mutex
	cfg       Config
	servers   []*server
	host      sdk.Host
	outputDir string   // where whole results are saved
	pending   []string // notices for session_start (the host takes none during Init)
	started   bool     // session_start came: notices go at once
}

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "mcp", Version: version, Description: "MCP servers' tools (docs/mcp.md)"}
}

// Init starts every server in parallel, each within its startup_timeout,
// and waits for them: the first request offers the tools of every server
// that started. One that did not is a notice (at session_start) and the
// session goes on without it; a required one fails the start.
func (e *ext) Init(ctx context.Context, h sdk.Host) error {
	cfg, err := mcpwire.Parse(h.Info().Config)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.cfg, e.host, e.outputDir = cfg, h, cfg.OutputDir
	e.mu.Unlock()
	logger := h.Logger()
	var wg sync.WaitGroup
	servers := make([]*server, len(cfg.Servers))
	store := &authStore{dir: cfg.AuthDir}
	for i, sc := range cfg.Servers {
		s := newServer(sc, version, logger, store)
		servers[i] = s
		wg.Go(func() { _ = s.start(ctx) })
	}
	wg.Wait()
	var required []string
	for _, s := range servers {
		sn := s.snapshot()
		if sn.state == stateReady {
			continue
		}
		msg := fmt.Sprintf("mcp server %s (%s) did not start: %v", s.cfg.Name, s.cfg.Source, sn.err)
		if sn.state == stateNeedsAuth {
			msg = fmt.Sprintf("mcp server %s (%s) %v", s.cfg.Name, s.cfg.Source, sn.err)
		}
		if s.cfg.Required {
			required = append(required, msg+" (it is required: required = true)")
			continue
		}
		e.pending = append(e.pending, msg+"; the session goes on without it")
	}
	if len(required) > 0 {
		for _, s := range servers {
			s.close()
		}
		return errors.New(strings.Join(required, "\n"))
	}
	e.mu.Lock()
	e.servers = servers
	e.mu.Unlock()
	for _, s := range servers {
		s.mu.Lock()
		s.changed, s.notify = e.toolsChanged, e.notify
		s.mu.Unlock()
	}
	return nil
}

// notify shows a notice now, or at session_start when it has not come.
func (e *ext) notify(level, text string) {
	e.mu.Lock()
	if !e.started {
		e.pending = append(e.pending, text)
		e.mu.Unlock()
		return
	}
	h := e.host
	e.mu.Unlock()
	_ = h.Notify(context.Background(), level, text)
	e.status(context.Background())
}

func (e *ext) SessionStart(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	e.mu.Lock()
	e.started = true
	pending := e.pending
	e.pending = nil
	if ev.SessionPath != "" {
		e.outputDir = strings.TrimSuffix(ev.SessionPath, filepath.Ext(ev.SessionPath)) + ".outputs"
	}
	e.mu.Unlock()
	for _, p := range pending {
		_ = h.Notify(ctx, "warning", p)
	}
	e.status(ctx)
	return sdk.SessionStartResponse{}, nil
}

// status sets the status segment: how many servers are ready.
func (e *ext) status(ctx context.Context) {
	e.mu.Lock()
	h, servers := e.host, e.servers
	e.mu.Unlock()
	if h == nil || len(servers) == 0 {
		return
	}
	ready := 0
	for _, s := range servers {
		if s.snapshot().state == stateReady {
			ready++
		}
	}
	_ = h.SetStatus(ctx, "servers", fmt.Sprintf("mcp %d/%d", ready, len(servers)))
}

func (e *ext) SessionEnd(ctx context.Context, h sdk.Host, ev sdk.SessionEndEvent) (sdk.SessionEndResponse, error) {
	e.closeAll()
	return sdk.SessionEndResponse{}, nil
}

func (e *ext) closeAll() {
	e.mu.Lock()
	servers := e.servers
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.close)
	}
	wg.Wait()
}

// toolsChanged gives panto the new set, which it applies at the next
// turn boundary and records.
func (e *ext) toolsChanged(s *server, reason string) {
	e.mu.Lock()
	h := e.host
	e.mu.Unlock()
	if h == nil {
		return
	}
	if err := h.SetTools(context.Background(), e.Tools(), "mcp server "+s.cfg.Name+": "+reason); err != nil {
		h.Logger().Warn("give panto the new tools", "server", s.cfg.Name, "error", err)
	}
	e.status(context.Background())
}

// Tools are every ready server's tools, in the configured order of the
// servers and the server's order of its tools.
func (e *ext) Tools() []sdk.Tool {
	e.mu.Lock()
	servers := e.servers
	e.mu.Unlock()
	var out []sdk.Tool
	seen := map[string]bool{}
	for _, s := range servers {
		for _, t := range s.snapshot().tools {
			name := toolName(s.cfg.Name, t.Name)
			if seen[name] { // two names that sanitize alike
				name = toolName(s.cfg.Name, t.Name+strings.Repeat("\x00", maxToolName))
			}
			seen[name] = true
			out = append(out, sdk.Tool{
				Name:        name,
				Description: t.Description,
				Parameters:  inputSchema(t.InputSchema),
				Run:         e.run(s, t.Name),
			})
		}
	}
	return out
}

// inputSchema is a tool's input schema as panto takes it: a JSON object
// schema with "type": "object".
func inputSchema(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	if m["type"] != "object" {
		m["type"] = "object"
		b, _ = json.Marshal(m)
	}
	return b
}

func (e *ext) run(s *server, tool string) func(ctx context.Context, h sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
	return func(ctx context.Context, h sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
		e.mu.Lock()
		global, dir := e.cfg.ToolTimeout, e.outputDir
		e.mu.Unlock()
		res, err := s.call(ctx, tool, call.Input, s.cfg.CallTimeout(global))
		if err != nil {
			return sdk.ToolResult{}, err
		}
		text := cut(resultText(res), func(whole string) (string, error) { return saveOutput(dir, call.ID, whole) })
		return sdk.ToolResult{Content: text, IsError: res.IsError, Images: resultImages(res)}, nil
	}
}

func (e *ext) Commands() []sdk.Command {
	return []sdk.Command{{
		Name:        "mcp",
		Description: "the MCP servers, their state and tools",
		Usage:       "/mcp [--json] | /mcp auth NAME",
		Run: func(ctx context.Context, h sdk.Host, req sdk.CommandRequest) (sdk.CommandResponse, error) {
			args := strings.Fields(req.Args)
			if len(args) > 0 && args[0] == "auth" {
				if len(args) != 2 {
					return sdk.CommandResponse{}, errors.New("usage: /mcp auth NAME")
				}
				out, err := e.authorize(args[1])
				return sdk.CommandResponse{Output: out}, err
			}
			out, err := e.list(strings.TrimSpace(req.Args) == "--json")
			return sdk.CommandResponse{Output: out}, err
		},
	}}
}

// ServerInfo is one server as /mcp --json and panto mcp list --json
// give it.
type ServerInfo struct {
	Name      string     `json:"name"`
	Source    string     `json:"source,omitempty"`
	Transport string     `json:"transport"`
	State     string     `json:"state"`
	Error     string     `json:"error,omitempty"`
	Tools     []ToolInfo `json:"tools"`
}

// ToolInfo is one tool of a server: the name the model calls it by and
// the server's own.
type ToolInfo struct {
	Name        string `json:"name"`
	ServerTool  string `json:"server_tool"`
	Description string `json:"description,omitempty"`
}

func (e *ext) infos() []ServerInfo {
	e.mu.Lock()
	servers := e.servers
	e.mu.Unlock()
	out := []ServerInfo{}
	for _, s := range servers {
		sn := s.snapshot()
		si := ServerInfo{Name: s.cfg.Name, Source: s.cfg.Source, Transport: "stdio", State: sn.state, Tools: []ToolInfo{}}
		if s.cfg.URL != "" {
			si.Transport = "http"
		}
		if sn.err != nil {
			si.Error = sn.err.Error()
		}
		for _, t := range sn.tools {
			si.Tools = append(si.Tools, ToolInfo{Name: toolName(s.cfg.Name, t.Name), ServerTool: t.Name, Description: firstLine(t.Description)})
		}
		sort.Slice(si.Tools, func(i, j int) bool { return si.Tools[i].Name < si.Tools[j].Name })
		out = append(out, si)
	}
	return out
}

func (e *ext) list(asJSON bool) (string, error) {
	infos := e.infos()
	if asJSON {
		b, err := json.MarshalIndent(infos, "", "  ")
		return string(b), err
	}
	if len(infos) == 0 {
		return "no MCP servers are configured (docs/mcp.md)", nil
	}
	var b strings.Builder
	for i, si := range infos {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s (%s, %s): %s", si.Name, si.Transport, si.Source, si.State)
		if si.State == stateReady {
			fmt.Fprintf(&b, ", %d tools", len(si.Tools))
		}
		b.WriteString("\n")
		if si.Error != "" {
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(si.Error, "\n", "\n  "))
		}
		for _, t := range si.Tools {
			fmt.Fprintf(&b, "  %s  %s\n", t.Name, t.Description)
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// authorize starts the authorization of the server name.
func (e *ext) authorize(name string) (string, error) {
	e.mu.Lock()
	servers := e.servers
	e.mu.Unlock()
	for _, s := range servers {
		if s.cfg.Name != name {
			continue
		}
		u, err := s.authorize(func(err error) {
			if err != nil {
				e.notify("error", fmt.Sprintf("mcp server %s: the authorization failed: %v", name, err))
			} else {
				e.notify("info", fmt.Sprintf("mcp server %s is authorized and ready; its tools are offered from the next message on", name))
			}
			e.toolsChanged(s, "it was authorized")
		}, func(u string) {
			e.notify("info", fmt.Sprintf("To authorize mcp server %s, open this URL in a browser on this machine: %s", name, u))
		})
		if errors.Is(err, errURLLate) {
			return fmt.Sprintf("Authorizing mcp server %s: the URL to open follows as a notice.", name), nil
		}
		if err != nil {
			return "", err
		}
		if u == "" {
			return fmt.Sprintf("mcp server %s is authorized", name), nil
		}
		return fmt.Sprintf("To authorize mcp server %s, open this URL in a browser (on this machine: the authorization server redirects to %s):\n\n  %s\n\npanto waits up to %s.",
			name, s.auth.redirect(), u, authFlowTimeout), nil
	}
	return "", fmt.Errorf("no mcp server is called %q (see /mcp)", name)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func main() {
	if os.Getenv(reaperEnv) != "" {
		os.Exit(runReaper())
	}
	e := &ext{}
	err := sdk.Serve(e)
	e.closeAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}
