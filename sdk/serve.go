package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
)

// Option changes how Serve runs an extension.
type Option func(*serveConfig)

type serveConfig struct {
	maxProcs int
	logger   hclog.Logger
}

// MaxProcs sets GOMAXPROCS for the extension, unless GOMAXPROCS is set in
// the environment. The default is 1: an extension waits on panto far
// more than it computes, and with one P a gRPC call's goroutine hand-offs
// stay on one thread instead of waking another (a hook with a callback
// takes about a quarter less time). An extension that computes — a
// search tool, say — gives MaxProcs(0) to keep the runtime's default,
// every core.
func MaxProcs(n int) Option { return func(c *serveConfig) { c.maxProcs = n } }

// WithLogger makes l what Host.Logger returns; by default it is
// ServeLogger's, which panto shows in its log under the extension's name.
func WithLogger(l hclog.Logger) Option { return func(c *serveConfig) { c.logger = l } }

// ErrNotStartedByPanto is returned by Serve when the executable was run by
// hand, without panto (the magic cookie is missing from the environment)
// and not in debug mode. panto starts extensions itself; to run one by
// hand under a debugger, set PANTO_EXTENSION_DEBUG=1 (docs/extensions.md).
var ErrNotStartedByPanto = errors.New("this is a panto extension: panto starts it (see docs/extensions.md); to run it by hand under a debugger, set " + DebugEnv + "=1")

// DebugEnv, set to 1, makes Serve run the extension for a debugger: it
// listens, prints the PANTO_REATTACH_EXTENSIONS value that makes panto
// attach to it instead of starting it, and serves until it is
// interrupted (docs/extensions.md, "Debugging").
const DebugEnv = "PANTO_EXTENSION_DEBUG"

// ReattachEnv is the variable that tells panto to attach to extensions
// already running (under a debugger) instead of starting them: a JSON
// object from name to go-plugin reattach config, as Serve prints it in
// debug mode.
const ReattachEnv = protocol.ReattachEnv

// Serve runs ext as a panto extension: it answers go-plugin's handshake on
// stdout and serves the extension protocol until panto shuts it down;
// then it returns nil. Started other than by panto it returns
// ErrNotStartedByPanto at once, unless DebugEnv is set. Never print to
// stdout in an extension: that is the handshake channel. Log with
// Host.Logger.
//
//	func main() {
//		if err := sdk.Serve(&ext{}); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//	}
func Serve(ext Extension, opts ...Option) error {
	cfg := serveConfig{maxProcs: 1}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxProcs > 0 && os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(cfg.maxProcs)
	}
	if cfg.logger == nil {
		cfg.logger = ServeLogger(ext)
	}
	debug := os.Getenv(DebugEnv) == "1"
	if !debug && os.Getenv(protocol.Handshake.MagicCookieKey) != protocol.Handshake.MagicCookieValue {
		return ErrNotStartedByPanto
	}
	if debug {
		return serveDebug(ext, cfg.logger)
	}
	panto := pantoPID(os.Getenv, os.Getppid())
	plugin.Serve(pluginServe(ext, cfg.logger, onlyPanto(panto, cfg.logger, "call this extension"), onlyPanto(panto, cfg.logger, "serve the Host service")))
	return nil
}

// pluginServe is go-plugin's ServeConfig for ext: its server admits the
// connections callers accepts, and its connection to panto's Host
// service goes only to the process host accepts.
func pluginServe(ext Extension, logger hclog.Logger, callers, host protocol.PeerCheck, onShutdown ...func()) *plugin.ServeConfig {
	var done func()
	if len(onShutdown) > 0 {
		done = onShutdown[0]
	}
	return &plugin.ServeConfig{
		HandshakeConfig: protocol.Handshake,
		Plugins:         plugin.PluginSet{protocol.PluginName: pluginWith(ext, logger, host, done)},
		GRPCServer: func(o []grpc.ServerOption) *grpc.Server {
			opts := append(append(o, protocol.ServerOptions()...), grpc.ChainUnaryInterceptor(newToolCancel().intercept))
			return grpc.NewServer(append(opts, grpc.Creds(protocol.PeerCredentials(callers, nil)))...)
		},
		Logger: logger,
	}
}

// pantoPID is the panto that started the extension: the pid it gives in
// protocol.HostPIDEnv, or, from a panto that does not give it, the
// extension's parent.
func pantoPID(getenv func(string) string, parent int) int {
	if pid, err := strconv.Atoi(getenv(protocol.HostPIDEnv)); err == nil && pid > 0 {
		return pid
	}
	return parent
}

// onlyPanto admits a connection only with panto at its other end: one
// panto dialled (callers), or the Host service panto serves (host).
// Every other process — one the extension started, such as the tools
// extension's bash, included — is refused before a byte is read, and
// that is logged. Where the system cannot say who is at the other end
// (Windows: go-plugin uses TCP there), the connection is admitted and
// that is logged, once.
func onlyPanto(panto int, logger hclog.Logger, what string) protocol.PeerCheck {
	var unknown sync.Once
	return func(pid int, err error) error {
		switch {
		case errors.Is(err, protocol.ErrPeerUnknown):
			unknown.Do(func() {
				logger.Warn("connections are not checked: the system cannot say which process is at the other end; any local process of the user's could "+what, "error", err)
			})
			return nil
		case err != nil:
			logger.Warn("refused a connection: its peer could not be read", "what", what, "error", err)
			return fmt.Errorf("refused: %w", err)
		case pid != panto:
			logger.Warn("refused a connection with a process other than panto", "what", what, "peer_pid", pid, "panto_pid", panto)
			return fmt.Errorf("refused a connection with pid %d: only panto (pid %d) may %s", pid, panto, what)
		}
		return nil
	}
}

// anyPeer admits every connection and logs each one's peer: debug mode,
// where the panto that attaches is not the extension's parent.
func anyPeer(logger hclog.Logger) protocol.PeerCheck {
	return func(pid int, err error) error {
		logger.Info("debug mode: admitted a connection without checking that it is panto's", "peer_pid", pid, "peer_error", err)
		return nil
	}
}

// pluginFor is the go-plugin glue serving ext, its Host.Logger logger;
// onShutdown, when not nil, is called when panto ends the session. Its
// host connection is not checked (the in-process tests).
func pluginFor(ext Extension, logger hclog.Logger, onShutdown ...func()) plugin.Plugin {
	var done func()
	if len(onShutdown) > 0 {
		done = onShutdown[0]
	}
	return pluginWith(ext, logger, nil, done)
}

// pluginWith is pluginFor whose host connection goes only to a server
// that host admits (nil: any).
func pluginWith(ext Extension, logger hclog.Logger, host protocol.PeerCheck, onShutdown func()) plugin.Plugin {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &protocol.GRPCPlugin{NewServer: func(broker *plugin.GRPCBroker) pb.ExtensionServer {
		s := newServer(ext, broker, logger)
		s.onShutdown, s.hostPeer = onShutdown, host
		return s
	}}
}

// serveDebug serves in go-plugin's test mode, for one session: no
// handshake on stdout, the reattach config printed for the user to hand
// to panto, and a return once that panto ends its session (or on Ctrl-C).
func serveDebug(ext Extension, logger hclog.Logger) error {
	name := nameOf(ext)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	sc := pluginServe(ext, logger, anyPeer(logger), anyPeer(logger), cancel)
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	sc.Test = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed}
	go plugin.Serve(sc)
	select {
	case rc := <-reattach:
		data, err := protocol.EncodeReattach(name, rc)
		if err != nil {
			return fmt.Errorf("debug: encode the reattach config: %w", err)
		}
		fmt.Fprintf(os.Stderr, "Extension %s is serving one panto session, for a debugger. Run panto with:\n\n\t%s='%s'\n\nIt returns when that session ends; Ctrl-C stops it before.\n", name, ReattachEnv, data)
	case <-closed:
		return errors.New("debug: the extension stopped before it was ready")
	}
	<-closed
	return nil
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

	toolsMu sync.Mutex
	tools   map[string]Tool // every tool declared, by name: the last set declared wins

	mu   sync.Mutex
	conn *grpc.ClientConn // the host connection; nil: none
	// onShutdown, when set, is called when panto ends the session (debug
	// mode: Serve then returns).
	onShutdown func()
	// hostPeer checks the process serving the host connection (every
	// time gRPC dials it); nil: none.
	hostPeer protocol.PeerCheck
}

// connect dials the host service at broker id and makes it the Host of
// every hook from now on. Every Init dials: a panto attached to an
// extension run under a debugger is a new one each time (its broker ids
// start at 1 again), and a dial that failed leaves nothing behind.
func (s *server) connect(id uint32, info HostInfo) error {
	opts := protocol.DialOptions()
	if s.hostPeer != nil {
		opts = append(opts, grpc.WithTransportCredentials(protocol.PeerCredentials(nil, s.hostPeer)))
	}
	conn, err := s.broker.DialWithOptions(id, opts...)
	if err != nil {
		return err
	}
	s.mu.Lock()
	old := s.conn
	s.conn = conn
	s.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	s.host.Store(&hostRef{&remoteHost{client: pb.NewHostClient(conn), logger: s.logger, info: info, server: s}})
	return nil
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
		s.addTools(tp.Tools())
	}
	return s
}

// addTools makes tools callable. Tools of an earlier set stay callable:
// panto offers a set until the next turn boundary after SetTools.
func (s *server) addTools(tools []Tool) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	for _, t := range tools {
		s.tools[t.Name] = t
	}
}

func (s *server) tool(name string) (Tool, bool) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	t, ok := s.tools[name]
	return t, ok
}

func pbTools(tools []Tool) []*pb.Tool {
	out := make([]*pb.Tool, 0, len(tools))
	for _, t := range tools {
		out = append(out, &pb.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Guidance: t.Guidance})
	}
	return out
}

func errMsg(err error) *pb.Error {
	if err == nil {
		return nil
	}
	return &pb.Error{Message: err.Error()}
}

func (s *server) Init(ctx context.Context, req *pb.InitRequest) (*pb.InitResponse, error) {
	resp := &pb.InitResponse{Name: nameOf(s.ext), Events: Events(s.ext)}
	if d, ok := s.ext.(Describer); ok {
		info := d.Describe()
		resp.Version, resp.Description = info.Version, info.Description
	}
	// The newest version both speak.
	v := min(uint32(APIVersion), req.GetApiVersion())
	if v < max(uint32(MinAPIVersion), req.GetMinApiVersion()) || v == 0 {
		resp.ApiVersion = APIVersion
		resp.Error = &pb.Error{Message: fmt.Sprintf("extension %s speaks panto API v%d to v%d; this panto speaks v%d to v%d (upgrade the one that is older)",
			resp.Name, MinAPIVersion, APIVersion, req.GetMinApiVersion(), req.GetApiVersion())}
		return resp, nil
	}
	resp.ApiVersion = v
	info := HostInfo{Version: req.GetHostVersion(), APIVersion: int(v), SessionID: req.GetSessionId(), CWD: req.GetCwd(),
		Workspace: Workspace{Files: req.GetWorkspace().GetFiles(), Terminal: req.GetWorkspace().GetTerminal()}}
	if c := req.GetConfig(); len(c) > 0 {
		info.Config = json.RawMessage(c)
	}
	if id := req.GetHostBrokerId(); id != 0 {
		// Dial now (the broker waits at most 5 s) and keep the connection
		// for every callback of the session. A failed dial leaves nothing
		// behind: a later Init dials again.
		if err := s.connect(id, info); err != nil {
			resp.Error = &pb.Error{Message: fmt.Sprintf("connect to the panto host service: %v", err)}
			return resp, nil
		}
	}
	if x, ok := s.ext.(Initializer); ok {
		h := s.host.Load().Host
		if rh, ok := h.(*remoteHost); !ok || rh == nil {
			h = &infoHost{Host: h, info: info}
		}
		if err := x.Init(ctx, h); err != nil {
			resp.Error = &pb.Error{Message: err.Error()}
			return resp, nil
		}
	}
	for _, c := range s.commands {
		resp.Commands = append(resp.Commands, &pb.Command{Name: c.Name, Description: c.Description, Usage: c.Usage})
	}
	if tp, ok := s.ext.(ToolProvider); ok {
		tools := tp.Tools()
		s.addTools(tools)
		resp.Tools = pbTools(tools)
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
			d, err := h.ToolCall(withCall(ctx, p.ToolCall.GetId()), s.host.Load().Host, toolCall(p.ToolCall))
			return &pb.EventResponse{Error: errMsg(err), Block: d.Block, BlockReason: d.Reason}, nil
		}
		return &pb.EventResponse{}, nil
	case *pb.EventRequest_ToolResult:
		if h, ok := s.ext.(ToolResultWatcher); ok {
			ev := ToolResultEvent{Call: toolCall(p.ToolResult.GetCall()),
				Result:    ToolResult{Content: p.ToolResult.GetContent(), IsError: p.ToolResult.GetIsError()},
				Truncated: p.ToolResult.GetTruncated(), Size: int(p.ToolResult.GetSize())}
			ch, err := h.ToolResult(withCall(ctx, ev.Call.ID), s.host.Load().Host, ev)
			return &pb.EventResponse{Error: errMsg(err), Amend: ch.Amend, Content: ch.Result.Content, IsError: ch.Result.IsError}, nil
		}
		return &pb.EventResponse{}, nil
	case *pb.EventRequest_BeforeMove:
		if h, ok := s.ext.(BeforeMover); ok {
			ev := p.BeforeMove
			r, err := h.BeforeMove(ctx, s.host.Load().Host, BeforeMoveEvent{From: ev.GetFrom(), To: ev.GetTo(), Summarize: ev.GetSummarize(), Left: int(ev.GetLeft())})
			return &pb.EventResponse{Error: errMsg(err), Block: r.Veto, BlockReason: r.Reason, Summary: r.Summary}, nil
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

// callKey is the context key of the tool call a hook checks or a tool
// runs: a question asked with that context is about the call (the
// requests' tool_call_id).
type callKey struct{}

// withCall is ctx about the tool call id.
func withCall(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callKey{}, id)
}

// callOf is the tool call ctx is about, or "".
func callOf(ctx context.Context) string {
	id, _ := ctx.Value(callKey{}).(string)
	return id
}

func toolCall(c *pb.ToolCall) ToolCall {
	return ToolCall{ID: c.GetId(), Name: c.GetName(), Input: c.GetInput()}
}

func sandboxOf(b *pb.Sandbox) *Sandbox {
	if b == nil {
		return nil
	}
	return &Sandbox{Mode: SandboxMode(b.GetMode()), Network: b.GetNetwork(), WritableRoots: b.GetWritableRoots(),
		TmpDir: b.GetTmpdir(), Required: b.GetRequired(), UnixSockets: b.GetUnixSockets()}
}

func (s *server) CallTool(ctx context.Context, req *pb.ToolCallRequest) (*pb.ToolCallResponse, error) {
	call := toolCall(req.GetCall())
	call.Sandbox = sandboxOf(req.GetSandbox())
	t, ok := s.tool(call.Name)
	if !ok || t.Run == nil {
		return &pb.ToolCallResponse{Content: "unknown tool " + call.Name, IsError: true}, nil
	}
	h := s.host.Load().Host
	ctx = withCall(ctx, call.ID)
	if rh, ok := h.(*remoteHost); ok && rh.needs("tool progress", 6) == nil {
		p := newProgressSender(func(ctx context.Context, text string) error { return rh.toolProgress(ctx, call.ID, text) })
		defer p.stop()
		ctx = WithProgress(ctx, p.add)
	}
	res, err := t.Run(ctx, h, call)
	if err != nil {
		return &pb.ToolCallResponse{Content: err.Error(), IsError: true}, nil
	}
	resp := &pb.ToolCallResponse{Content: res.Content, IsError: res.IsError, SandboxBlocked: res.SandboxBlocked}
	for _, img := range res.Images {
		resp.Images = append(resp.Images, &pb.Image{MediaType: img.MediaType, Data: img.Data})
	}
	return resp, nil
}

func (s *server) dispatch(ctx context.Context, req *pb.EventRequest) error {
	h := s.host.Load().Host
	var err error
	switch p := req.Payload.(type) {
	case *pb.EventRequest_SessionStart:
		if x, ok := s.ext.(SessionStarter); ok {
			ev := p.SessionStart
			_, err = x.SessionStart(ctx, h, SessionStartEvent{
				SessionID: ev.SessionId, SessionPath: ev.SessionPath, Resumed: ev.Resumed, Reseeded: ev.Reseeded,
			})
		}
	case *pb.EventRequest_BeforeTurn:
		if x, ok := s.ext.(BeforeTurner); ok {
			_, err = x.BeforeTurn(ctx, h, BeforeTurnEvent{UserText: p.BeforeTurn.UserText})
		}
	case *pb.EventRequest_TurnEnd:
		if x, ok := s.ext.(TurnEnder); ok {
			var m conversation.Message
			if jerr := json.Unmarshal(p.TurnEnd.AssistantMessage, &m); jerr != nil {
				return fmt.Errorf("decode turn_end message: %w", jerr)
			}
			_, err = x.TurnEnd(ctx, h, TurnEndEvent{Message: m, StopReason: p.TurnEnd.StopReason})
		}
	case *pb.EventRequest_SystemPromptChanged:
		if x, ok := s.ext.(SystemPromptWatcher); ok {
			ev := p.SystemPromptChanged
			_, err = x.SystemPromptChanged(ctx, h, SystemPromptChangedEvent{
				Mode: conversation.Mode(ev.Mode), Text: ev.Text, By: ev.By, Key: ev.Key, Source: ev.Source,
			})
		}
	case *pb.EventRequest_AfterMove:
		if x, ok := s.ext.(AfterMover); ok {
			ev := p.AfterMove
			_, err = x.AfterMove(ctx, h, AfterMoveEvent{From: ev.GetFrom(), To: ev.GetTo(), Summary: ev.GetSummary()})
		}
	case *pb.EventRequest_SessionEnd:
		if x, ok := s.ext.(SessionEnder); ok {
			_, err = x.SessionEnd(ctx, h, SessionEndEvent{})
		}
	default:
		return fmt.Errorf("unknown event %q", req.Event)
	}
	return err // an event this extension did not declare: nothing to do
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
	if s.onShutdown != nil {
		s.onShutdown()
	}
	return &pb.ShutdownResponse{}, nil
}
