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
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
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
	// EditSystem records a system block by the named extension.
	EditSystem(by string, mode conversation.Mode, text string) error
	// SetSection records by's section key with text (empty: removed),
	// unless the prompt holds exactly that already.
	SetSection(by, key, text string) error
	// Sections returns by's sections in the current prompt.
	Sections(by string) []Section
	// DisposeSections removes owner's sections on its behalf: it was
	// disabled (why says how).
	DisposeSections(owner, why string) error
	EffectiveSystem() []conversation.SystemText
	Messages() []conversation.Message
	// AppendData records an extension_data entry.
	AppendData(extension string, data json.RawMessage) error
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
	// with (go-plugin's own variables are added); nil means panto's.
	Environ []string
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
	// StartTimeout bounds one extension's start (default 10 s).
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
}

// Ext is one running extension.
type Ext struct {
	spec   Spec
	client *plugin.Client
	conn   *protocol.Conn
	info   *pb.InitResponse
	desc   Info
	events map[string]bool
	server *grpc.Server // the Host service served to it

	// ready is set once Init has returned and info is final; the Host
	// service refuses calls before that (it would not know the caller).
	ready atomic.Bool

	mu       sync.Mutex
	disabled error

	stopOnce sync.Once
}

// stop ends the extension's process, once: with graceful, a Shutdown call
// (bounded by timeout) first, then go-plugin's Kill (its own graceful
// stop, then SIGKILL). A second call waits for the first to finish.
func (e *Ext) stop(graceful bool, timeout time.Duration) {
	e.stopOnce.Do(func() {
		if graceful {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			e.conn.Extension.Shutdown(ctx, &pb.ShutdownRequest{})
			cancel()
		}
		e.client.Kill()
	})
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

// ErrStart is wrapped by the error of an extension that could not start.
var ErrStart = errors.New("extension did not start")

// start launches one extension and initialises it. On error the process
// is gone.
func start(ctx context.Context, spec Spec, rec Recorder, opts Options, report func(error)) (*Ext, error) {
	logger := opts.Logger.Named("ext")
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake,
		Plugins:          plugin.PluginSet{protocol.PluginName: &protocol.GRPCPlugin{}},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     opts.StartTimeout,
		SkipHostEnv:      true,
		GRPCDialOptions:  protocol.DialOptions(),
		Logger:           logger,
		// Stdout after the handshake and plain stderr go to the log, never
		// to the user's terminal.
		SyncStdout: logWriter{logger, "stdout"},
		SyncStderr: logWriter{logger, "stderr"},
		RunnerFunc: func(l hclog.Logger, cmd *exec.Cmd, tmpDir string) (runner.Runner, error) {
			return newRunner(l, spec, cmd)
		},
	}
	client := plugin.NewClient(cfg)
	ext := &Ext{spec: spec, client: client}
	fail := func(err error) (*Ext, error) {
		client.Kill()
		return nil, fmt.Errorf("%w: %s (%s): %w", ErrStart, spec.Path, spec.Source, err)
	}
	rpc, err := client.Client()
	if err != nil {
		return fail(err)
	}
	raw, err := rpc.Dispense(protocol.PluginName)
	if err != nil {
		return fail(err)
	}
	conn, ok := raw.(*protocol.Conn)
	if !ok {
		return fail(fmt.Errorf("unexpected plugin type %T", raw))
	}
	ext.conn = conn

	// Serve the Host service once, on one broker connection the extension
	// dials during Init and keeps (go-plugin's Dial waits at most 5 s).
	id := conn.Broker.NextId()
	hs := &hostServer{ext: ext, rec: rec, logger: logger, report: report}
	go conn.Broker.AcceptAndServe(id, func(o []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(append(o, protocol.ServerOptions()...)...)
		pb.RegisterHostServer(s, hs)
		ext.mu.Lock()
		ext.server = s
		ext.mu.Unlock()
		return s
	})

	ictx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	info, err := conn.Extension.Init(ictx, &pb.InitRequest{
		ApiVersion: APIVersion, MinApiVersion: MinAPIVersion, HostBrokerId: id,
		HostVersion: opts.HostVersion, SessionId: opts.SessionID, Cwd: opts.CWD,
	})
	if err != nil {
		return fail(fmt.Errorf("init: %w", err))
	}
	if v := info.GetApiVersion(); v < MinAPIVersion || v > APIVersion {
		return fail(fmt.Errorf("it speaks panto API v%d; this panto speaks v%d to v%d (upgrade the one that is older)", v, MinAPIVersion, APIVersion))
	}
	if info.GetError() != nil {
		return fail(fmt.Errorf("init: %s", info.GetError().GetMessage()))
	}
	if info.GetName() == "" {
		return fail(errors.New("init: the extension gave no name"))
	}
	if err := checkTools(info.GetTools()); err != nil {
		return fail(fmt.Errorf("extension %s: %w", info.GetName(), err))
	}
	ext.info, ext.desc = info, infoFrom(info)
	ext.events = map[string]bool{}
	for _, ev := range info.GetEvents() {
		ext.events[ev] = true
	}
	ext.ready.Store(true)
	return ext, nil
}

// newRunner starts the plugin's process our way: stdin is /dev/null (never
// the user's terminal), the process dies with panto even on SIGKILL
// (Pdeathsig), and a trusted checksum is verified right before the start.
func newRunner(l hclog.Logger, spec Spec, proto *exec.Cmd) (runner.Runner, error) {
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
	// proto.Env holds go-plugin's own variables only (SkipHostEnv).
	base := spec.Environ
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(append([]string(nil), base...), proto.Env...)
	cmd.Stdin = nil
	cmd.SysProcAttr = sysProcAttr()
	return newCmdRunner(l, cmd)
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
