package extension

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
	"github.com/panto-dev/panto/rules"
)

// Starting an extension: the process under go-plugin, the handshake, the
// connection and its peer checks, Init, and the errors of each step.

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
	ext := &Ext{spec: spec, logger: logger, questions: questions{limit: opts.questionTime}, settled: make(chan struct{})}
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
