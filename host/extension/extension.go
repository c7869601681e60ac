// Package extension runs panto's extensions: executables started with
// hashicorp/go-plugin over gRPC, each in its own process. It starts them
// concurrently, negotiates the API version, serves each one the Host
// service on one broker connection, delivers events in load order under a
// deadline, runs their commands, and disables an extension that crashes,
// hangs or answers nonsense — showing the error once — while the session
// goes on.
//
// It records nothing itself: system edits go to a Recorder (the session),
// which writes them to the log at once, in call order.
package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
	"github.com/panto-dev/panto/rules"
)

// APIVersion is the newest panto extension API version the host speaks,
// MinAPIVersion the oldest.
const (
	APIVersion    = protocol.APIVersion
	MinAPIVersion = protocol.MinAPIVersion
)

// Recorder is what extensions change and read: the session. Its methods
// are called from gRPC goroutines, concurrently with each other and with
// the host's own work; it serialises them.
type Recorder interface {
	// EditSystem records an unkeyed system block by the named extension
	// (after a replace that is not bare, the live sections again).
	EditSystem(by string, e Edit) error
	// SetSection records by's section key with text (empty: removed),
	// unless the prompt holds exactly that already.
	SetSection(by, key, text string) error
	// Sections returns by's sections in the current prompt.
	Sections(by string) []Section
	// DisposeSections removes owner's sections on its behalf: it was
	// disabled (why says how).
	DisposeSections(owner, why string) error
	// Ask puts an extension's question to the user and waits for the
	// answer, at most q.Timeout and until ctx ends (ErrNoUser,
	// ErrDismissed, ErrNoAnswer).
	Ask(ctx context.Context, by string, q Question) (Answer, error)
	// Notify and SetStatus tell the user something; they never wait.
	Notify(by, level, text string)
	SetStatus(by, key, text string)
	EffectiveSystem() []conversation.SystemText
	Messages() []conversation.Message
	// AppendData records an extension_data entry.
	AppendData(extension string, data json.RawMessage) error
}

// Edit is an extension's unkeyed system edit: AddSystemMessage,
// ReplaceSystemMessage, or a SystemEdit without a key.
type Edit struct {
	Mode conversation.Mode
	Text string
	// Bare is set on a replace the extension asked to leave bare
	// (sdk.Bare): the session records nothing after it. Without it, the
	// session records the live sections again right after the replace
	// (spec amendment 6).
	Bare bool
}

// Section is one of an extension's sections in the prompt, its key
// without the extension's name.
type Section struct {
	Key, Text, Source string
}

// Spec says where an extension is and how far it is trusted.
type Spec struct {
	// Path is the executable.
	Path string
	// Source says where it was found, for people: "--extension",
	// "base layer", "project layer".
	Source string
	// Checksum, when set, is the sha256 the binary must have: go-plugin
	// checks it right before the start.
	Checksum []byte
	// Environ, when not nil, is the environment the extension starts
	// with (plus go-plugin's own variables); nil means panto's own.
	Environ []string
	// Reattach, when set, is an extension already running — started by
	// hand under a debugger (sdk.DebugEnv) — that panto connects to
	// instead of starting Path. panto never stops or kills its process:
	// closing the session only closes the connection.
	Reattach *plugin.ReattachConfig
	// Required says the extension is a safeguard the user installed (in
	// the base or user layer, or marked required in config): while it is
	// not running — it failed to start, timed out, crashed or was
	// disabled — tool calls are blocked rather than run unwatched.
	Required bool
	// Config is what panto's configuration holds for the extension, as
	// JSON, handed over in Init (API v3; InitRequest.config): the mcp
	// extension's servers. Nil: nothing.
	Config []byte
	// StartTimeout, when longer than Options.StartTimeout, bounds this
	// extension's start instead (the mcp extension waits for its servers'
	// startup_timeout).
	StartTimeout time.Duration
	// MustStart makes a start failure of the extension fail the session's
	// open (an MCP server with required = true did not start).
	MustStart bool
}

// Options tune the Manager.
type Options struct {
	// Logger receives panto's log lines; each extension's own log lines
	// appear under its name.
	Logger hclog.Logger
	// Report is told, once, of each failure the user should see: an
	// extension that did not start, was disabled, or answered an error.
	// nil means none (they are logged either way).
	Report func(error)
	// StartTimeout bounds one extension's start, in wall time from exec
	// to Init's answer (default 10 s); on expiry its process group is
	// killed.
	StartTimeout time.Duration
	// HookTimeout bounds each hook and command (default 5 s).
	HookTimeout time.Duration
	// ToolTimeout bounds each tool call (default 15 min; a tool such as
	// bash has its own, shorter limit).
	ToolTimeout time.Duration
	// HostVersion is panto's version, sent in Init.
	HostVersion string
	// SessionID and CWD are sent in Init.
	SessionID, CWD string
	// SocketDir is the folder go-plugin makes each extension's socket
	// folder in (OpenSocketDir's, so that a SIGKILLed panto's are found
	// and removed); empty: the system's temporary folder.
	SocketDir string
	// Workspace is the user's workspace the front end offers (an ACP
	// editor's files and terminal); nil: none.
	Workspace Workspace

	// questionTime caps a question's wait and the time a hook's deadline
	// stands still for questions (MaxQuestionTimeout; tests shorten it).
	questionTime time.Duration
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.HookTimeout <= 0 {
		o.HookTimeout = 5 * time.Second
	}
	if o.ToolTimeout <= 0 {
		o.ToolTimeout = 15 * time.Minute
	}
	if o.questionTime <= 0 {
		o.questionTime = MaxQuestionTimeout
	}
}

// Ext is one running extension.
type Ext struct {
	spec   Spec
	logger hclog.Logger
	client *plugin.Client
	conn   *protocol.Conn
	rpc    *grpc.ClientConn // go-plugin's connection, for its GRPCController
	// sockDir is the folder go-plugin made for the plugin's sockets.
	sockDir string
	info    *pb.InitResponse
	desc    Info
	events  map[string]bool
	server  *grpc.Server // the Host service served to it

	// questions are its questions to the user: one on the screen at a
	// time (see user.go).
	questions questions
	// checking are the tool calls it is checking (its tool_call hook) or
	// running (its tool) now: a question it asks meanwhile is about the
	// call when there is one (Question.ToolCall).
	checking checks

	// ready is set once Init has returned and info is final; the Host
	// service refuses calls before that (it would not know the caller).
	ready atomic.Bool
	// servedBy is the pid of the process that first served panto's
	// connection to the extension: the process started or, through a
	// wrapper script, one it started (see serverCheck).
	servedBy atomic.Int64

	// current and pending are the tools it gave after Init (SetTools):
	// current is offered (nil: Init's), pending waits for the next turn
	// boundary (see toolsets.go).
	toolsMu sync.Mutex
	current *toolSet
	pending *toolSet

	mu       sync.Mutex
	disabled error
	proc     *process // nil until go-plugin asks for it
	expired  bool     // the start deadline passed
	how      *Stop    // set once stopped

	stopOnce sync.Once
}

// shutdownGrace bounds a graceful stop: the Shutdown calls and the wait
// for the process to exit. Then its process group is killed.
const shutdownGrace = time.Second

// StopKind says how an extension's process ended.
type StopKind string

const (
	// StopGraceful: it exited by itself after Shutdown.
	StopGraceful StopKind = "graceful"
	// StopTimeout: it did not exit within 1 s of Shutdown; it was killed.
	StopTimeout StopKind = "shutdown timeout"
	// StopKilled: it was killed without being asked (it had crashed,
	// hung, answered nonsense or was refused at start).
	StopKilled StopKind = "killed"
	// StopExited: it had exited by itself before panto stopped it, or
	// never ran.
	StopExited StopKind = "exited"
)

// Stop is how an extension's process ended.
type Stop struct {
	Kind StopKind
	// Leftovers: its process group still had processes once it exited
	// (children it did not end); they were killed.
	Leftovers bool
	// PipesHeld: a process outside its group (a new session) still held
	// its stdout or stderr once it exited; panto closed its own ends.
	PipesHeld bool
	// Undead: it did not die within 1 s of SIGKILL (uninterruptible
	// sleep); panto stopped waiting for it.
	Undead bool
	// Exit is the process's exit error ("exit status 1", "signal:
	// killed"); nil for exit status 0.
	Exit error
	// Took is how long the stop took.
	Took time.Duration
}

// Clean reports whether it exited by itself after Shutdown and left
// nothing running.
func (s Stop) Clean() bool {
	return s.Kind == StopGraceful && !s.Leftovers && !s.PipesHeld && !s.Undead
}

// String says how it ended, for people.
func (s Stop) String() string {
	var out string
	switch s.Kind {
	case StopGraceful:
		out = "it exited after Shutdown"
	case StopTimeout:
		out = fmt.Sprintf("it did not exit within %s of Shutdown; panto killed its process group", shutdownGrace)
	case StopKilled:
		out = "panto killed its process group"
	default:
		out = fmt.Sprintf("it had already exited (%s)", exitText(s.Exit))
	}
	if s.Leftovers {
		out += "; it left processes running in its process group, which panto killed"
	}
	if s.PipesHeld {
		out += "; a process outside its process group still held its stdout or stderr"
	}
	if s.Undead {
		out += fmt.Sprintf("; it did not die within %s of SIGKILL", killWait)
	}
	return out
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// Stopped returns how the extension's process ended, once it has been
// stopped.
func (e *Ext) Stopped() (Stop, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.how == nil {
		return Stop{}, false
	}
	return *e.how, true
}

// stop ends the extension's process, once, within a bound: with
// graceful, Shutdown (panto's, then go-plugin's GRPCController) and a
// wait for it to exit, at most min(timeout, 1 s); then, always, SIGKILL
// to its whole process group. Without graceful it is killed at once. A
// second call waits for the first to finish. It never calls go-plugin's
// Client.Kill (a second GRPCController call, then up to 2 s of waiting)
// and never waits on the EOF of pipes a child holds.
func (e *Ext) stop(graceful bool, timeout time.Duration) {
	e.stopOnce.Do(func() {
		t0 := time.Now()
		e.mu.Lock()
		p := e.proc
		e.mu.Unlock()
		st := Stop{Kind: StopExited}
		if e.spec.Reattach != nil && graceful && e.conn != nil {
			// Attached under a debugger: the process is the user's. Tell
			// it the session is over (the SDK then returns from Serve);
			// never kill it.
			ctx, cancel := context.WithTimeout(context.Background(), min(timeout, shutdownGrace))
			if _, err := e.conn.Extension.Shutdown(ctx, &pb.ShutdownRequest{}); err == nil {
				st.Kind = StopGraceful
			}
			cancel()
		}
		if p != nil {
			switch {
			case p.stopped():
			case graceful:
				st.Kind = e.shutdown(p, min(timeout, shutdownGrace))
			default:
				st.Kind = StopKilled
			}
			st.Undead = !p.end()
			st.Leftovers, st.PipesHeld = p.leftovers()
			st.Exit = p.exitErr()
			if st.Kind == StopKilled && !killedBySIGKILL(st.Exit) {
				st.Kind = StopExited // it had exited, not yet reaped
			}
		}
		e.release()
		st.Took = time.Since(t0)
		e.mu.Lock()
		e.how = &st
		e.mu.Unlock()
		e.logger.Debug("extension stopped", "path", e.spec.Path, "how", st.String(), "took", st.Took)
	})
}

// release frees what go-plugin holds for the extension: its broker, its
// connection and its socket folder, as its Client.Kill would, without
// that Kill's second GRPCController call and 2 s wait. go-plugin's
// goroutines end by themselves: the process is reaped and the pipes they
// read are closed.
func (e *Ext) release() {
	if e.conn != nil {
		_ = e.conn.Broker.Close()
	}
	if e.rpc != nil {
		_ = e.rpc.Close()
	}
	if e.sockDir != "" {
		_ = os.RemoveAll(e.sockDir)
	}
}

// shutdown asks the extension to exit and waits for it, up to grace.
// Panto's Shutdown comes first (an extension in another language exits
// after answering it), then go-plugin's GRPCController.Shutdown (what
// makes a Go extension's Serve return); one that serves neither is simply
// waited for.
func (e *Ext) shutdown(p *process, grace time.Duration) StopKind {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		if e.conn != nil {
			_, _ = e.conn.Extension.Shutdown(ctx, &pb.ShutdownRequest{})
		}
		if e.rpc != nil {
			_ = e.rpc.Invoke(ctx, "/plugin.GRPCController/Shutdown", &emptypb.Empty{}, &emptypb.Empty{})
		}
	}()
	select {
	case <-p.exited:
		return StopGraceful
	case <-ctx.Done():
		return StopTimeout
	}
}

// expire is the start deadline: the process group is killed, whichever
// step of the start it is in.
func (e *Ext) expire() {
	e.mu.Lock()
	e.expired = true
	p := e.proc
	e.mu.Unlock()
	if p != nil {
		p.end()
	}
}

func (e *Ext) hasExpired() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.expired
}

// setProc records the process go-plugin is about to start; false once
// the start deadline has passed.
func (e *Ext) setProc(p *process) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.expired {
		return false
	}
	e.proc = p
	return true
}

// process is its OS process; nil until go-plugin asks for it, and for
// one attached under a debugger.
func (e *Ext) process() *process {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.proc
}

// Name is the extension's name (from Init).
func (e *Ext) Name() string { return e.info.GetName() }

// Info is what the extension said about itself in Init.
func (e *Ext) Info() Info { return e.desc }

// Spec is where it came from.
func (e *Ext) Spec() Spec { return e.spec }

// Handles reports whether the extension declared the event.
func (e *Ext) Handles(event string) bool { return e.events[event] }

// Disabled returns why the extension was disabled, or nil.
func (e *Ext) Disabled() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.disabled
}

// ReattachEnv names the variable that makes panto attach to extensions
// already running under a debugger (see Reattachments).
const ReattachEnv = protocol.ReattachEnv

// Reattachments reads the ReattachEnv value s: each extension, by name,
// that panto attaches to instead of starting it. An extension serving
// with sdk.DebugEnv=1 prints the value to give.
func Reattachments(s string) (map[string]*plugin.ReattachConfig, error) {
	m, err := protocol.DecodeReattach(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ReattachEnv, err)
	}
	return m, nil
}

// ErrStart is wrapped by the error of an extension that could not start.
var ErrStart = errors.New("extension did not start")

// start launches one extension and initialises it, within
// opts.StartTimeout of wall time from exec to Init's answer (the
// handshake, the connection, Init and the broker dial it makes). On
// error the process group is gone.
func start(ctx context.Context, spec Spec, rec Recorder, opts Options, report func(error)) (*Ext, error) {
	logger := opts.Logger.Named("ext")
	ext := &Ext{spec: spec, logger: logger, questions: questions{limit: opts.questionTime}}
	opts.StartTimeout = max(opts.StartTimeout, spec.StartTimeout)
	deadline := time.Now().Add(opts.StartTimeout)
	timer := time.AfterFunc(opts.StartTimeout, ext.expire)
	defer timer.Stop()
	// panto stopping (SIGTERM, Ctrl-C) ends the start at once, as the
	// deadline would.
	cancelled := context.AfterFunc(ctx, ext.expire)
	defer cancelled()
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake,
		Plugins:          plugin.PluginSet{protocol.PluginName: &protocol.GRPCPlugin{}},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		// A backstop only: the deadline above kills the process first,
		// which ends go-plugin's wait for the handshake.
		StartTimeout: opts.StartTimeout + 5*time.Second,
		// Only to the extension (see serverCheck): the last credentials
		// given win over go-plugin's own (insecure ones; no TLS).
		GRPCDialOptions: append(protocol.DialOptions(), grpc.WithTransportCredentials(protocol.PeerCredentials(nil, ext.serverCheck()))),
		Logger:          logger,
		// The prototype command holds only go-plugin's variables; the
		// runner adds them to the extension's environment.
		SkipHostEnv: true,
		// Stdout after the handshake and plain stderr go to the log, never
		// to the user's terminal.
		SyncStdout: logWriter{logger, "stdout"},
		SyncStderr: logWriter{logger, "stderr"},
		RunnerFunc: func(l hclog.Logger, cmd *exec.Cmd, tmpDir string) (runner.Runner, error) {
			ext.sockDir = tmpDir
			r, err := newRunner(l, spec, opts.CWD, cmd)
			if err != nil {
				return nil, err
			}
			if !ext.setProc(r.p) {
				r.p.kill()
				_ = r.p.start() // refused: closes the pipes
				return nil, errStartAborted
			}
			return r, nil
		},
	}
	if opts.SocketDir != "" {
		cfg.UnixSocketConfig = &plugin.UnixSocketConfig{TempDir: opts.SocketDir}
	}
	if spec.Reattach != nil {
		cfg.RunnerFunc, cfg.Reattach = nil, spec.Reattach
	}
	client := plugin.NewClient(cfg)
	ext.client = client
	// fail stops the process at once and describes the failure; with
	// tail, the end of its stderr follows.
	fail := func(err error, tail bool) (*Ext, error) {
		timer.Stop()
		ext.stop(false, 0)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %s (%s): start cancelled: %w", ErrStart, shownPath(spec.Path), spec.Source, context.Cause(ctx))
		}
		var end string
		if p := ext.proc; tail && p != nil {
			end = p.tail.String()
		}
		return nil, fmt.Errorf("%w: %s (%s): %w%s", ErrStart, shownPath(spec.Path), spec.Source, err, end)
	}
	rpc, err := client.Client()
	if err != nil {
		return fail(ext.handshakeErr(err, opts.StartTimeout), true)
	}
	if g, ok := rpc.(*plugin.GRPCClient); ok {
		ext.rpc = g.Conn
	}
	raw, err := rpc.Dispense(protocol.PluginName)
	if err != nil {
		return fail(err, true)
	}
	conn, ok := raw.(*protocol.Conn)
	if !ok {
		return fail(fmt.Errorf("unexpected plugin type %T", raw), false)
	}
	ext.conn = conn

	// Serve the Host service once, on one broker connection the extension
	// dials during Init and keeps (go-plugin's Dial waits at most 5 s).
	id := conn.Broker.NextId()
	hs := &hostServer{ext: ext, rec: rec, logger: logger, report: report, ws: opts.Workspace}
	peers := ext.ownProcess()
	go conn.Broker.AcceptAndServe(id, func(o []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(append(append(o, protocol.ServerOptions()...), grpc.Creds(protocol.PeerCredentials(peers, nil)))...)
		pb.RegisterHostServer(s, hs)
		ext.mu.Lock()
		ext.server = s
		ext.mu.Unlock()
		return s
	})

	ictx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	info, err := conn.Extension.Init(ictx, &pb.InitRequest{
		ApiVersion: APIVersion, MinApiVersion: MinAPIVersion, HostBrokerId: id,
		HostVersion: opts.HostVersion, SessionId: opts.SessionID, Cwd: opts.CWD, Config: spec.Config,
		Workspace: initWorkspace(opts.Workspace),
	})
	if err != nil {
		return fail(ext.initErr(err, ictx, opts.StartTimeout), true)
	}
	if !timer.Stop() {
		// The deadline passed as Init returned: the process is being killed.
		return fail(fmt.Errorf("it did not answer Init within %s", opts.StartTimeout), true)
	}
	if v := info.GetApiVersion(); v < MinAPIVersion || v > APIVersion {
		return fail(fmt.Errorf("it speaks panto API v%d; this panto speaks v%d to v%d (upgrade the one that is older)", v, MinAPIVersion, APIVersion), false)
	}
	if info.GetError() != nil {
		return fail(fmt.Errorf("init: %s", info.GetError().GetMessage()), false)
	}
	if info.GetName() == "" {
		return fail(errors.New("init: the extension gave no name"), false)
	}
	if err := rules.CheckExtensionName(info.GetName()); err != nil {
		// The name labels what the user reads: one that breaks a line or
		// poses as panto could forge panto's own lines.
		return fail(fmt.Errorf("init: %w; give it another name (sdk.Info.Name in Go, InitResponse.name in the protocol, or its file name when it gives none)", err), false)
	}
	if err := checkTools(info.GetTools()); err != nil {
		return fail(fmt.Errorf("extension %s: %w", info.GetName(), err), false)
	}
	ext.info, ext.desc = info, infoFrom(info)
	ext.events = map[string]bool{}
	for _, ev := range info.GetEvents() {
		ext.events[ev] = true
	}
	ext.ready.Store(true)
	return ext, nil
}

// startedPID is the pid of the extension's process: the one panto
// started, or, attached under a debugger, the one its reattach config
// gives; 0 before it runs.
func (e *Ext) startedPID() int {
	if e.spec.Reattach != nil {
		return e.spec.Reattach.Pid
	}
	if p := e.process(); p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.pid
	}
	return 0
}

// peerCheck is a check of the process at the other end of a connection
// (what names it for the log): where the system cannot say which process
// that is (Windows, where go-plugin uses TCP), the connection is
// admitted and that is logged, once; otherwise admit decides, and a
// refusal is logged.
func (e *Ext) peerCheck(what string, admit func(pid int) error) protocol.PeerCheck {
	var unknown sync.Once
	return func(pid int, err error) error {
		if errors.Is(err, protocol.ErrPeerUnknown) {
			unknown.Do(func() {
				e.logger.Warn("connections are not checked: the system cannot say which process is at the other end; any local process of the user's could take part", "what", what, "path", e.spec.Path, "error", err)
			})
			return nil
		}
		if err == nil {
			err = admit(pid)
		}
		if err != nil {
			e.logger.Warn("refused a connection", "what", what, "path", e.spec.Path, "peer_pid", pid, "error", err)
		}
		return err
	}
}

// serverCheck checks the process serving each connection panto dials
// to the extension (gRPC dials again after an idle spell): the first
// must be the extension's process or one it started (an extension run
// through a wrapper script), and every later one that same process —
// never a listener some other process put in the socket's place.
func (e *Ext) serverCheck() protocol.PeerCheck {
	return e.peerCheck("panto's connection to the extension", func(pid int) error {
		want := e.startedPID()
		if first := int(e.servedBy.Load()); first != 0 {
			if pid != first {
				return fmt.Errorf("the extension's socket is served by pid %d, not by pid %d, which served it first", pid, first)
			}
			return nil
		}
		if want == 0 || (pid != want && !descends(pid, want)) {
			return fmt.Errorf("the extension's socket is served by pid %d, which is neither the extension (pid %d) nor a process it started", pid, want)
		}
		e.servedBy.CompareAndSwap(0, int64(pid))
		return nil
	})
}

// ownProcess admits a connection to the Host service panto serves the
// extension only from the extension's own process — the one started, or
// the one that serves its socket (serverCheck) — not from what it
// started (the tools extension's bash), nor from any other process of
// the user's that found the socket. (An extension that serves on TCP,
// whose server panto cannot name, is admitted from a process it started
// too: through a wrapper script it is one; and on TCP any local process
// could call it anyway.)
func (e *Ext) ownProcess() protocol.PeerCheck {
	return e.peerCheck("the Host service", func(pid int) error {
		want, served := e.startedPID(), int(e.servedBy.Load())
		switch {
		case pid != 0 && (pid == want || pid == served):
			return nil
		case pid != 0 && served == 0 && want != 0 && descends(pid, want):
			return nil
		}
		return fmt.Errorf("refused a connection from pid %d: only the extension's process (pid %d) may call its Host service", pid, want)
	})
}

// shownPath is path as a message shows it: quoted when it holds a
// character that is not printable (a newline, an escape), so that a file
// name cannot break the line it is in.
func shownPath(path string) string {
	if q := strconv.Quote(path); q[1:len(q)-1] != path {
		return q
	}
	return path
}

// handshakeErr says why go-plugin's handshake failed, in panto's words
// where go-plugin's would mislead ("timeout while waiting for plugin to
// start", "plugin exited before we could connect").
func (e *Ext) handshakeErr(err error, timeout time.Duration) error {
	p := e.proc
	switch {
	case e.hasExpired():
		return fmt.Errorf("it did not complete the go-plugin handshake within %s", timeout)
	case p != nil && p.ran() && !p.handshake.Load():
		// Its stdout ended without a line: it is exiting, most likely.
		select {
		case <-p.exited:
			return fmt.Errorf("it exited before the go-plugin handshake (%s)", exitText(p.exitErr()))
		case <-time.After(500 * time.Millisecond):
		}
	}
	return err
}

// initErr says why Init failed: no answer within the start deadline, or
// the process exited.
func (e *Ext) initErr(err error, ictx context.Context, timeout time.Duration) error {
	// The extension's end can see the deadline pass a moment before ours
	// (the timeout it is sent is rounded down) and reset the stream:
	// DeadlineExceeded then comes while ictx has not yet expired.
	if e.hasExpired() || errors.Is(ictx.Err(), context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
		return fmt.Errorf("it did not answer Init within %s", timeout)
	}
	if p := e.proc; p != nil && status.Code(err) == codes.Unavailable {
		// A crash: the connection breaks as the process exits.
		select {
		case <-p.exited:
			return fmt.Errorf("it exited during Init (%s)", exitText(p.exitErr()))
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("init: %w", err)
}

// newRunner starts the plugin's process our way: stdin is /dev/null (never
// the user's terminal), the process dies with panto even on SIGKILL
// (Pdeathsig) and leads its own process group — and, when panto has a
// controlling terminal, its own session, without one (see pdeathsig) —,
// its environment is spec.Environ (or panto's) plus go-plugin's
// variables and panto's pid, and a trusted checksum is verified right
// before the start. It runs in dir, the session's working
// directory, when set.
func newRunner(l hclog.Logger, spec Spec, dir string, proto *exec.Cmd) (*cmdRunner, error) {
	if spec.Checksum != nil {
		sc := &plugin.SecureConfig{Checksum: spec.Checksum, Hash: newSHA256()}
		ok, err := sc.Check(spec.Path)
		if err != nil {
			return nil, fmt.Errorf("verify checksum: %w", err)
		}
		if !ok {
			return nil, ErrChanged
		}
	}
	cmd := exec.Command(spec.Path)
	cmd.Dir = dir
	base := spec.Environ
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(append(slices.Clip(base), proto.Env...), protocol.HostPIDEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.SysProcAttr = sysProcAttr()
	p, err := newProcess(l.Named(filepath.Base(spec.Path)), cmd)
	if err != nil {
		return nil, err
	}
	return &cmdRunner{p: p}, nil
}

// ErrChanged is returned when a trusted binary no longer has the checksum
// it was trusted with. Run panto ext trust PATH after checking it.
var ErrChanged = errors.New("the binary changed since it was trusted; run panto ext trust to trust it again")

func sysProcAttr() *syscall.SysProcAttr {
	return pdeathsig()
}

// logWriter turns a plugin's raw output lines into log lines.
type logWriter struct {
	logger hclog.Logger
	stream string
}

func (w logWriter) Write(p []byte) (int, error) {
	w.logger.Debug("extension output", "stream", w.stream, "text", string(p))
	return len(p), nil
}
