// Package extension runs panto's extensions: executables started with
// hashicorp/go-plugin over gRPC, each in its own process. It starts them
// concurrently, negotiates the API version, serves each one the Host
// service on one broker connection, delivers events in load order under a
// deadline, runs their commands, restarts once an extension whose process
// dies (restart.go), and disables one that dies again, hangs or answers
// nonsense — showing the error once — while the session goes on.
//
// It records nothing itself: system edits go to a Recorder (the session),
// which writes them to the log at once, in call order.
package extension

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
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
	// Warn is told, once, of what happened to an extension that the user
	// should know but that is no failure of the session's: an extension
	// that stopped and was restarted. nil: Report.
	Warn func(string)
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
	// outputs are the tool calls it runs now, each with the end of the
	// progress it sent (progress.go).
	outputs outputs

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
	// stopping is set once panto begins to stop it: an exit after that is
	// no death to restart it for (restart.go).
	stopping atomic.Bool

	// restarts counts the restarts that led to this Ext (0 or 1); lostOnce
	// handles its death once, settled closes when that is done, and next
	// (under mu) is the Ext restarted in its place, if any.
	restarts int
	lostOnce sync.Once
	settled  chan struct{}
	next     *Ext
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
