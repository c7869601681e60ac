package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sdk/pb"
)

// Handshake is the go-plugin handshake panto and its extensions share. Its
// protocol version changes only for a break of go-plugin's transport; the
// panto API version (APIVersion) is negotiated inside Init.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "PANTO_PLUGIN",
	MagicCookieValue: "extension-v1",
}

// PluginName is the name of the one plugin an extension binary serves.
const PluginName = "extension"

// Serve runs ext as a panto extension: it answers go-plugin's handshake on
// stdout and serves the extension protocol until panto shuts it down. It
// does not return. Never print to stdout in an extension: that is the
// handshake channel. Log with Host.Logger (or the logger of ServeLogger).
func Serve(ext Extension) {
	if os.Getenv("GOMAXPROCS") == "" {
		// One P: an extension waits on panto far more than it computes,
		// and with one P a gRPC call's goroutine hand-offs stay on one
		// thread instead of waking another (a hook with a callback takes
		// about a quarter less time). GOMAXPROCS in the environment wins.
		runtime.GOMAXPROCS(1)
	}
	logger := ServeLogger(ext)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginName: &GRPCPlugin{Impl: ext, Logger: logger}},
		GRPCServer:      func(o []grpc.ServerOption) *grpc.Server { return grpc.NewServer(append(o, ServerOptions()...)...) },
		Logger:          logger,
	})
}

// ServeLogger returns the logger Serve uses: JSON lines on the process's
// stderr, which panto shows in its log under the extension's name. It
// must be created before Serve replaces os.Stderr.
func ServeLogger(ext Extension) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       nameOf(ext),
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      hclog.Trace,
	})
}

func nameOf(ext Extension) string {
	if d, ok := ext.(Describer); ok {
		if n := d.Describe().Name; n != "" {
			return n
		}
	}
	return filepath.Base(os.Args[0])
}

// GRPCPlugin is the go-plugin glue for the extension protocol. Extension
// authors do not need it: Serve uses it, and so do the host and the
// contract tests (plugin.TestPluginGRPCConn).
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the extension served (plugin side only).
	Impl Extension
	// Logger is what Host.Logger returns (plugin side only).
	Logger hclog.Logger
}

// GRPCServer registers the extension service (plugin side).
func (p *GRPCPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	logger := p.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	pb.RegisterExtensionServer(s, newServer(p.Impl, broker, logger))
	return nil
}

// GRPCClient returns a *Conn (host side).
func (p *GRPCPlugin) GRPCClient(_ context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &Conn{Extension: pb.NewExtensionClient(conn), Broker: broker}, nil
}

// Conn is the host's side of one extension: its client and the broker on
// which the host serves the Host service back to it.
type Conn struct {
	Extension pb.ExtensionClient
	Broker    *plugin.GRPCBroker
}

// server implements the extension service around an Extension.
type server struct {
	pb.UnimplementedExtensionServer
	ext    Extension
	broker *plugin.GRPCBroker
	logger hclog.Logger
	// host is set once by Init and read by every hook, possibly on other
	// goroutines.
	host     atomic.Pointer[hostRef]
	commands []Command
	byName   map[string]Command
	tools    map[string]Tool
	initOnce sync.Once
}

type hostRef struct{ Host }

func newServer(ext Extension, broker *plugin.GRPCBroker, logger hclog.Logger) *server {
	s := &server{ext: ext, broker: broker, logger: logger, byName: map[string]Command{}, tools: map[string]Tool{}}
	s.host.Store(&hostRef{noHost{logger}})
	if cp, ok := ext.(CommandProvider); ok {
		for _, c := range cp.Commands() {
			if _, dup := s.byName[c.Name]; dup {
				logger.Error("command registered twice; the first is kept", "command", c.Name)
				continue
			}
			s.byName[c.Name] = c
			s.commands = append(s.commands, c)
		}
	}
	if tp, ok := ext.(ToolProvider); ok {
		for _, t := range tp.Tools() {
			s.tools[t.Name] = t
		}
	}
	return s
}

func errMsg(err error) *pb.Error {
	if err == nil {
		return nil
	}
	return &pb.Error{Message: err.Error()}
}

func (s *server) Init(ctx context.Context, req *pb.InitRequest) (*pb.InitResponse, error) {
	resp := &pb.InitResponse{ApiVersion: APIVersion, Name: nameOf(s.ext), Events: Events(s.ext)}
	if d, ok := s.ext.(Describer); ok {
		info := d.Describe()
		resp.Version, resp.Description = info.Version, info.Description
	}
	if APIVersion < req.MinApiVersion || APIVersion > req.ApiVersion {
		resp.Error = &pb.Error{Message: fmt.Sprintf("extension %s speaks panto API v%d; this panto speaks v%d to v%d",
			resp.Name, APIVersion, req.MinApiVersion, req.ApiVersion)}
		return resp, nil
	}
	if req.HostBrokerId != 0 {
		// Dial once, now (the broker waits at most 5 s), and keep the
		// connection for every callback of the session. A second Init
		// keeps the first connection.
		var dialErr error
		s.initOnce.Do(func() {
			conn, err := s.broker.DialWithOptions(req.HostBrokerId, DialOptions()...)
			if err != nil {
				dialErr = err
				return
			}
			s.host.Store(&hostRef{&remoteHost{client: pb.NewHostClient(conn), logger: s.logger}})
		})
		if dialErr != nil {
			resp.Error = &pb.Error{Message: fmt.Sprintf("connect to the panto host service: %v", dialErr)}
			return resp, nil
		}
	}
	for _, c := range s.commands {
		resp.Commands = append(resp.Commands, &pb.Command{Name: c.Name, Description: c.Description, Usage: c.Usage})
	}
	if tp, ok := s.ext.(ToolProvider); ok {
		for _, t := range tp.Tools() {
			resp.Tools = append(resp.Tools, &pb.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Guidance: t.Guidance})
		}
	}
	if vp, ok := s.ext.(VariableProvider); ok {
		resp.Variables = vp.Variables()
	}
	return resp, nil
}

func (s *server) HandleEvent(ctx context.Context, req *pb.EventRequest) (*pb.EventResponse, error) {
	switch p := req.Payload.(type) {
	case *pb.EventRequest_ToolCall:
		if h, ok := s.ext.(ToolCallWatcher); ok {
			d, err := h.ToolCall(ctx, s.host.Load().Host, toolCall(p.ToolCall))
			return &pb.EventResponse{Error: errMsg(err), Block: d.Block, BlockReason: d.Reason}, nil
		}
		return &pb.EventResponse{}, nil
	case *pb.EventRequest_ToolResult:
		if h, ok := s.ext.(ToolResultWatcher); ok {
			ev := ToolResultEvent{Call: toolCall(p.ToolResult.GetCall()),
				Result:    ToolResult{Content: p.ToolResult.GetContent(), IsError: p.ToolResult.GetIsError()},
				Truncated: p.ToolResult.GetTruncated(), Size: int(p.ToolResult.GetSize())}
			ch, err := h.ToolResult(ctx, s.host.Load().Host, ev)
			return &pb.EventResponse{Error: errMsg(err), Amend: ch.Amend, Content: ch.Result.Content, IsError: ch.Result.IsError}, nil
		}
		return &pb.EventResponse{}, nil
	case *pb.EventRequest_BeforeRequest:
		if h, ok := s.ext.(BeforeRequester); ok {
			r, err := h.BeforeRequest(ctx, s.host.Load().Host, BeforeRequestEvent{Tools: p.BeforeRequest.GetTools(), Step: int(p.BeforeRequest.GetStep())})
			return &pb.EventResponse{Error: errMsg(err), Narrow: r.Narrow, Tools: r.Tools}, nil
		}
		return &pb.EventResponse{}, nil
	}
	err := s.dispatch(ctx, req)
	return &pb.EventResponse{Error: errMsg(err)}, nil
}

func toolCall(c *pb.ToolCall) ToolCall {
	return ToolCall{ID: c.GetId(), Name: c.GetName(), Input: c.GetInput()}
}

func (s *server) CallTool(ctx context.Context, req *pb.ToolCallRequest) (*pb.ToolCallResponse, error) {
	call := toolCall(req.GetCall())
	t, ok := s.tools[call.Name]
	if !ok || t.Run == nil {
		return &pb.ToolCallResponse{Content: "unknown tool " + call.Name, IsError: true}, nil
	}
	res, err := t.Run(ctx, s.host.Load().Host, call)
	if err != nil {
		return &pb.ToolCallResponse{Content: err.Error(), IsError: true}, nil
	}
	return &pb.ToolCallResponse{Content: res.Content, IsError: res.IsError}, nil
}

func (s *server) dispatch(ctx context.Context, req *pb.EventRequest) error {
	switch p := req.Payload.(type) {
	case *pb.EventRequest_SessionStart:
		if h, ok := s.ext.(SessionStarter); ok {
			ev := p.SessionStart
			return h.SessionStart(ctx, s.host.Load().Host, SessionStartEvent{
				SessionID: ev.SessionId, SessionPath: ev.SessionPath, Resumed: ev.Resumed, Reseeded: ev.Reseeded,
			})
		}
	case *pb.EventRequest_BeforeTurn:
		if h, ok := s.ext.(BeforeTurner); ok {
			return h.BeforeTurn(ctx, s.host.Load().Host, BeforeTurnEvent{UserText: p.BeforeTurn.UserText})
		}
	case *pb.EventRequest_TurnEnd:
		if h, ok := s.ext.(TurnEnder); ok {
			var m conversation.Message
			if err := json.Unmarshal(p.TurnEnd.AssistantMessage, &m); err != nil {
				return fmt.Errorf("decode turn_end message: %w", err)
			}
			return h.TurnEnd(ctx, s.host.Load().Host, TurnEndEvent{Message: m, StopReason: p.TurnEnd.StopReason})
		}
	case *pb.EventRequest_SystemPromptChanged:
		if h, ok := s.ext.(SystemPromptWatcher); ok {
			ev := p.SystemPromptChanged
			return h.SystemPromptChanged(ctx, s.host.Load().Host, SystemPromptChangedEvent{
				Mode: conversation.Mode(ev.Mode), Text: ev.Text, By: ev.By,
			})
		}
	case *pb.EventRequest_SessionEnd:
		if h, ok := s.ext.(SessionEnder); ok {
			return h.SessionEnd(ctx, s.host.Load().Host, SessionEndEvent{})
		}
	default:
		return fmt.Errorf("unknown event %q", req.Event)
	}
	return nil // an event this extension did not declare: nothing to do
}

func (s *server) RunCommand(ctx context.Context, req *pb.CommandRequest) (*pb.CommandResponse, error) {
	c, ok := s.byName[req.Name]
	if !ok || c.Run == nil {
		return &pb.CommandResponse{Error: &pb.Error{Message: "unknown command /" + req.Name}}, nil
	}
	out, err := c.Run(ctx, s.host.Load().Host, CommandRequest{Args: req.Args})
	return &pb.CommandResponse{Output: out.Output, Error: errMsg(err)}, nil
}

func (s *server) Shutdown(context.Context, *pb.ShutdownRequest) (*pb.ShutdownResponse, error) {
	return &pb.ShutdownResponse{}, nil
}

// remoteHost is Host over the broker connection dialled in Init.
type remoteHost struct {
	client pb.HostClient
	logger hclog.Logger
}

func (h *remoteHost) AddSystemMessage(ctx context.Context, text string) error {
	resp, err := h.client.AddSystemMessage(ctx, &pb.SystemEditRequest{Text: text})
	return hostErr("add system message", resp.GetError(), err)
}

func (h *remoteHost) ReplaceSystemMessage(ctx context.Context, text string) error {
	resp, err := h.client.ReplaceSystemMessage(ctx, &pb.SystemEditRequest{Text: text})
	return hostErr("replace system message", resp.GetError(), err)
}

func (h *remoteHost) SystemPrompt(ctx context.Context) ([]string, error) {
	resp, err := h.client.GetSystemPrompt(ctx, &pb.GetSystemPromptRequest{})
	if err != nil {
		return nil, hostErr("get system prompt", nil, err)
	}
	return resp.Blocks, nil
}

func (h *remoteHost) Messages(ctx context.Context) ([]conversation.Message, error) {
	resp, err := h.client.GetMessages(ctx, &pb.GetMessagesRequest{})
	if err != nil {
		return nil, hostErr("get messages", nil, err)
	}
	var msgs []conversation.Message
	if err := json.Unmarshal(resp.Messages, &msgs); err != nil {
		return nil, fmt.Errorf("panto host: get messages: decode: %w", err)
	}
	return msgs, nil
}

func (h *remoteHost) AppendData(ctx context.Context, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("panto host: append data: encode: %w", err)
	}
	resp, err := h.client.AppendData(ctx, &pb.AppendDataRequest{Data: data})
	return hostErr("append data", resp.GetError(), err)
}

func (h *remoteHost) Logger() hclog.Logger { return h.logger }

func hostErr(op string, domain *pb.Error, err error) error {
	if err != nil {
		return fmt.Errorf("panto host: %s: %w", op, err)
	}
	if domain != nil {
		return fmt.Errorf("panto host: %s: %s", op, domain.Message)
	}
	return nil
}

// ErrNoHost is returned by the Host of an extension that panto started
// without a host connection (for example by a protocol test); it cannot
// call back.
var ErrNoHost = errors.New("panto host: no host connection")

// noHost answers every call with ErrNoHost.
type noHost struct{ logger hclog.Logger }

func (noHost) AddSystemMessage(context.Context, string) error     { return ErrNoHost }
func (noHost) ReplaceSystemMessage(context.Context, string) error { return ErrNoHost }
func (noHost) SystemPrompt(context.Context) ([]string, error)     { return nil, ErrNoHost }
func (noHost) Messages(context.Context) ([]conversation.Message, error) {
	return nil, ErrNoHost
}
func (noHost) AppendData(context.Context, any) error { return ErrNoHost }
func (h noHost) Logger() hclog.Logger                { return h.logger }
