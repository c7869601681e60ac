package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/protocol"
)

// APIVersion is the newest panto extension API version this SDK speaks,
// MinAPIVersion the oldest. The version is negotiated inside Init (the
// newest both speak; go-plugin's own protocol version stays 1), and
// Host.Info says which it is.
const (
	APIVersion    = protocol.APIVersion
	MinAPIVersion = protocol.MinAPIVersion
)

// Extension is what Serve runs. Embed Base to implement it, then implement
// the optional interfaces (SessionStarter, BeforeTurner, TurnEnder,
// SystemPromptWatcher, SessionEnder, CommandProvider, ToolProvider,
// ToolCallWatcher, ToolResultWatcher, BeforeRequester, Describer) for the
// hooks you want; panto calls only those.
type Extension interface {
	isExtension()
}

// Base makes a struct an Extension. It handles nothing by itself.
type Base struct{}

func (Base) isExtension() {}

// Info describes an extension.
type Info struct {
	// Name identifies the extension in logs, /help and the session log.
	// Empty means the executable's file name.
	Name        string
	Version     string
	Description string
}

// Describer supplies the extension's Info.
type Describer interface {
	Describe() Info
}

// Literal returns text escaped so that panto records it exactly as given.
// panto renders {{variables}} in every system block an extension records
// (docs/system-prompt.md), strictly: an unknown name is refused. Text that
// is data — a file's contents, a path, a command's output — may hold "{{"
// of its own (Go templates, Helm charts, Mustache) and must not be
// rendered: pass it through Literal before AddSystemMessage.
func Literal(text string) string { return strings.ReplaceAll(text, "{{", `\{{`) }

// Host is panto, as an extension sees it. Every system edit is recorded at
// once in the session log, in call order; an edit made while a model
// request is in flight takes effect for the next request. Host is safe to
// use from any goroutine, also outside a hook, for the whole session.
type Host interface {
	// AddSystemMessage appends a block to the system prompt.
	AddSystemMessage(ctx context.Context, text string) error
	// ReplaceSystemMessage discards the system prompt's prose — every
	// block — and starts it afresh with text. The live sections are not
	// prose: right after the replace panto records again each section an
	// extension still loaded held (the tools' guidance, the environment,
	// a context file, this extension's own), in its earlier order, so the
	// tools offered keep their guidance. With Bare among opts panto
	// records nothing after it: the prompt is text alone. The replacement
	// lasts across resumes with unchanged prompt files; a changed file
	// re-seeds the prompt wholesale, this replacement included.
	ReplaceSystemMessage(ctx context.Context, text string, opts ...ReplaceOption) error
	// SetSection sets this extension's section key to text: in place when
	// the prompt has it, at the end when not; an empty text removes it.
	// Nothing is recorded when the section already has exactly that text,
	// so calling it at every session start costs nothing when nothing
	// changed. Keys are this extension's own (another extension's "notes"
	// is another section): 1 to about 100 letters, digits and _ - . / :.
	// When the extension is not loaded, or is disabled, panto removes its
	// sections. Needs panto API v2.
	SetSection(ctx context.Context, key, text string) error
	// RemoveSection removes this extension's section key (nothing is
	// recorded when there is none). Needs panto API v2.
	RemoveSection(ctx context.Context, key string) error
	// Sections returns this extension's sections in the current prompt,
	// in prompt order.
	Sections(ctx context.Context) ([]Section, error)
	// SystemPrompt returns the current effective system prompt, block by
	// block.
	SystemPrompt(ctx context.Context) ([]string, error)
	// CacheEstimate says what a change of the system prompt made now
	// would cost the provider's prompt cache: about how many cached
	// tokens it would invalidate (the system prompt and the conversation,
	// which the next request then sends uncached). An edit that can wait
	// can check it first: panto warns the user of one that invalidates
	// more than cache_warn_tokens (10000 by default). Needs panto API v7.
	CacheEstimate(ctx context.Context) (CacheEstimate, error)
	// Messages returns the conversation so far (system messages
	// included). Changing the result changes nothing in panto.
	Messages(ctx context.Context) ([]conversation.Message, error)
	// AppendData records v (JSON-encoded) in the session log as this
	// extension's data. It is never sent to the model.
	AppendData(ctx context.Context, v any) error
	// Logger logs to panto's log under the extension's name.
	Logger() hclog.Logger
	// Info says which panto this is and for which session.
	Info() HostInfo

	// The user (API v2). Confirm asks a yes/no question, Select a choice
	// among options (it returns the index), Input a line of text; opts
	// add to the question (Highlight). Each waits for the answer until
	// ctx ends or its deadline passes (ctx's deadline, at most 5
	// minutes). An extension has one question on the screen at a time:
	// the next ones wait their turn within their own deadline, and with 4
	// waiting another gives ErrTooManyQuestions at once. While a question
	// of the extension's is on the screen, a hook is not held to the hook
	// deadline — for at most 5 questions and 5 minutes in all per hook.
	// With nobody to ask — print mode, --mode json — each returns
	// ErrNoUser at once (a confirm may get the user's configured default
	// instead); once the session is closing (session_end) ErrClosing. A
	// user who closes the question gives ErrDismissed (Confirm: false,
	// nil — a "no"); no answer in time gives ErrNoAnswer. Asked with the
	// ctx of a tool_call hook or of a tool's Run, a question is about
	// that call, and the front end shows it with the call (an ACP
	// editor's permission request).
	Confirm(ctx context.Context, title, message string, opts ...AskOption) (bool, error)
	Select(ctx context.Context, title string, options []string, opts ...AskOption) (int, error)
	Input(ctx context.Context, title, placeholder string, opts ...AskOption) (string, error)
	// Notify shows the user a notice (level "info", "warning" or
	// "error"); SetStatus sets the extension's status segment key (an
	// empty text clears it). Neither waits.
	Notify(ctx context.Context, level, text string) error
	SetStatus(ctx context.Context, key, text string) error

	// SetTools replaces the extension's tools (API v3): what Tools
	// declared at the start, or the last SetTools. panto checks the set as
	// it checks the first one, and applies it at the next turn boundary,
	// never in the middle of a turn, recording what changed (reason says
	// why, for people). Until then the old set is offered and called, so
	// keep serving its calls. The SDK dispatches the new tools' calls to
	// their Run.
	SetTools(ctx context.Context, tools []Tool, reason string) error

	// The workspace (API v4): where the user works, when the front end
	// offers it — panto acp, for an editor that lends its file system and
	// terminal (Info().Workspace says which). ReadTextFile reads a file
	// as the editor's buffer holds it, unsaved changes included, from
	// line (1-based; 0: the first) at most limit lines (0: all);
	// WriteTextFile writes it through the editor; RunInTerminal runs a
	// command line in the editor's terminal and waits for it. Without
	// them each returns ErrUnavailable at once: use the machine's files
	// and processes. Paths are absolute. Called with a tool's ctx, they
	// are for that call (the editor shows its terminal with the call).
	ReadTextFile(ctx context.Context, path string, line, limit int) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
	RunInTerminal(ctx context.Context, c TerminalCommand) (TerminalResult, error)
}

// Workspace says what of the user's workspace the front end offers
// (HostInfo.Workspace).
type Workspace struct {
	// Files: ReadTextFile and WriteTextFile. Terminal: RunInTerminal.
	Files, Terminal bool
}

// TerminalCommand is a command for Host.RunInTerminal.
type TerminalCommand struct {
	// Command is a shell command line, run as bash -c Command.
	Command string
	// Dir is where it runs (absolute); empty: the session's directory.
	Dir string
	// Timeout bounds the run (0: only ctx does); past it the command is
	// killed and TimedOut is set.
	Timeout time.Duration
	// OutputLimit is the most output kept, in bytes (0: the front end's
	// default); the front end keeps the end and sets Truncated.
	OutputLimit int
}

// TerminalResult is what a command run in the terminal did.
type TerminalResult struct {
	// Output is what it wrote, stdout and stderr as the terminal shows
	// them.
	Output    string
	Truncated bool
	// ExitCode is its exit status when it exited; Signal the signal that
	// ended it, else "".
	ExitCode int
	Signal   string
	TimedOut bool
}

// ErrUnavailable: the front end offers no workspace (or not that part of
// it); use the machine's files and processes.
var ErrUnavailable = errors.New("panto host: the front end offers no workspace here")

// The errors of the user calls (Host.Confirm, Select, Input).
var (
	// ErrNoUser: nobody can answer; panto runs in print mode or with
	// --mode json. Nothing waited. Decide without the user (block the
	// risky action, take the safe default).
	ErrNoUser = errors.New("panto host: no interactive user to ask")
	// ErrDismissed: the user closed the question without answering.
	ErrDismissed = errors.New("panto host: the user dismissed the question")
	// ErrNoAnswer: no answer before the deadline.
	ErrNoAnswer = errors.New("panto host: no answer in time")
	// ErrTooManyQuestions: this extension has a question on the screen
	// and 4 more waiting their turn; nothing was asked. Decide without
	// the user, or ask again once they are answered.
	ErrTooManyQuestions = errors.New("panto host: too many questions wait already")
	// ErrClosing: the session is closing (session_end and after); nobody
	// will answer, and nothing was asked. Decide without the user.
	ErrClosing = errors.New("panto host: the session is closing; no more questions")
)

// AskOption adds to a question to the user (Host.Confirm, Select,
// Input). New options may be added; a panto too old to know one ignores
// it.
type AskOption func(*QuestionOptions)

// QuestionOptions are what a question's AskOptions set. A Host reads
// them with ApplyAskOptions; an extension need not use them.
type QuestionOptions struct {
	// Highlight are the parts of the question's text it is about.
	Highlight []string
}

// Highlight marks parts of the question's text — the message, or the
// title of a Select or Input — as what it is about: the part of a
// command a guard matched, say. The user's front end highlights them
// wherever they occur in the text. Empty parts are ignored.
//
//	h.Confirm(ctx, "Run this command?", cmd, sdk.Highlight(matched))
func Highlight(parts ...string) AskOption {
	return func(o *QuestionOptions) {
		for _, p := range parts {
			if p != "" {
				o.Highlight = append(o.Highlight, p)
			}
		}
	}
}

// ApplyAskOptions returns what opts set.
func ApplyAskOptions(opts ...AskOption) QuestionOptions {
	var o QuestionOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// ReplaceOption changes what Host.ReplaceSystemMessage records. New
// options may be added; a panto too old to know one ignores it.
type ReplaceOption func(*ReplaceOptions)

// ReplaceOptions are what a replace's ReplaceOptions set. A Host reads
// them with ApplyReplaceOptions; an extension need not use them.
type ReplaceOptions struct {
	// Bare: panto records nothing after the replace (no live section is
	// recorded again).
	Bare bool
}

// Bare makes a replace leave the prompt bare: text alone, with none of
// the sections the prompt held — not the tools' guidance, not the
// environment, not a context file — recorded again after it (they come
// back when their extensions set them again, at the next start or a
// change). Use it only when the extension really wants the model to see
// nothing else; the tools are still offered.
//
//	h.ReplaceSystemMessage(ctx, "Answer yes or no.", sdk.Bare())
//
// A panto before this option records nothing after any replace, bare or
// not.
func Bare() ReplaceOption { return func(o *ReplaceOptions) { o.Bare = true } }

// ApplyReplaceOptions returns what opts set.
func ApplyReplaceOptions(opts ...ReplaceOption) ReplaceOptions {
	var o ReplaceOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// Section is one of an extension's sections in the prompt.
type Section struct {
	// Key is the key the extension gave.
	Key  string
	Text string
	// Source says who recorded the text ("extension NAME").
	Source string
}

// CacheEstimate is what a change of the system prompt made now would
// cost the provider's prompt cache (Host.CacheEstimate).
type CacheEstimate struct {
	// Tokens estimates the cached tokens the change would invalidate; 0
	// when nothing is likely cached (no reply in the last five minutes,
	// or a provider with no cache).
	Tokens int
	// LastReply is when the session's last reply came; zero when none.
	LastReply time.Time
}

// HostInfo is what panto tells an extension about itself when it starts
// it.
type HostInfo struct {
	// Version is panto's version.
	Version string
	// APIVersion is the panto API version negotiated with the extension.
	APIVersion int
	// SessionID is the session's id; CWD is panto's working directory.
	SessionID string
	CWD       string
	// Config is what panto's configuration holds for this extension, as
	// JSON (API v3); nil when nothing. The first-party mcp extension gets
	// its servers this way.
	Config json.RawMessage
	// Workspace is what of the user's workspace the front end offers
	// (API v4; see Host.ReadTextFile).
	Workspace Workspace
}

// Initializer prepares an extension when panto starts it, after the host
// connection is made (h.Info is set) and before its tools are read: Init
// may start what its tools need, within the extension's start deadline
// (extension_start_timeout, raised by panto for the mcp extension). An
// error fails the start; panto shows it.
type Initializer interface {
	Init(ctx context.Context, h Host) error
}

// SessionStartEvent is sent once the session's system prompt is seeded
// (fresh) or reconciled (resumed).
type SessionStartEvent struct {
	SessionID string
	// SessionPath is the log file; empty with --no-session.
	SessionPath string
	// Resumed is true when an existing session was opened.
	Resumed bool
	// Reseeded is true when the configured prompt had changed and was
	// recorded again with a replace, discarding earlier system edits.
	Reseeded bool
}

// SessionStartResponse is what SessionStart answers. It has no fields
// yet; new ones will not break an extension that ignores them.
type SessionStartResponse struct{}

// SessionStarter handles the session start. Edits made here come after the
// configured prompt and survive an unchanged-config resume.
type SessionStarter interface {
	SessionStart(ctx context.Context, h Host, ev SessionStartEvent) (SessionStartResponse, error)
}

// BeforeTurnEvent is sent when the user has sent a message, before the
// model request is built.
type BeforeTurnEvent struct {
	// UserText is what the user typed, without the USER_PROMPT.md blocks
	// panto puts before it: conversation.Message.Typed of the message
	// recorded before this event (Host.Messages has the whole message,
	// each block panto added marked with Block.Added).
	UserText string
}

// BeforeTurnResponse is what BeforeTurn answers (no fields yet).
type BeforeTurnResponse struct{}

// BeforeTurner handles the start of a turn; system edits made here shape
// this turn's request.
type BeforeTurner interface {
	BeforeTurn(ctx context.Context, h Host, ev BeforeTurnEvent) (BeforeTurnResponse, error)
}

// TurnEndEvent is sent when the model's reply has been recorded.
type TurnEndEvent struct {
	Message    conversation.Message
	StopReason string
}

// TurnEndResponse is what TurnEnd answers (no fields yet).
type TurnEndResponse struct{}

// TurnEnder handles the end of a turn.
type TurnEnder interface {
	TurnEnd(ctx context.Context, h Host, ev TurnEndEvent) (TurnEndResponse, error)
}

// SystemPromptChangedEvent reports one recorded system block.
type SystemPromptChangedEvent struct {
	Mode conversation.Mode
	Text string
	// By is the extension that made the change, or "panto" for the
	// configured prompt (and a section removed on an extension's behalf).
	By string
	// Key is set for a section, as panto records it: the owner's name, a
	// colon, and the owner's key ("env:environment"). An empty Text then
	// means the section was removed.
	Key string
	// Source says where the text came from, for people.
	Source string
}

// SystemPromptWatcher is told of every system-prompt change, its own
// included. It is told after the change is recorded, asynchronously: do
// not expect it inside the hook that made the change.
type SystemPromptWatcher interface {
	SystemPromptChanged(ctx context.Context, h Host, ev SystemPromptChangedEvent) (SystemPromptChangedResponse, error)
}

// SystemPromptChangedResponse is what SystemPromptChanged answers (no
// fields yet).
type SystemPromptChangedResponse struct{}

// SessionEndEvent is sent before panto shuts the extension down.
type SessionEndEvent struct{}

// SessionEndResponse is what SessionEnd answers (no fields yet).
type SessionEndResponse struct{}

// SessionEnder handles the end of the session.
type SessionEnder interface {
	SessionEnd(ctx context.Context, h Host, ev SessionEndEvent) (SessionEndResponse, error)
}

// Command is a slash command an extension adds: "/name args".
type Command struct {
	// Name without the slash.
	Name        string
	Description string
	// Usage shows the arguments, e.g. "TEXT".
	Usage string
	// Run runs the command. Its Output is shown to the user.
	Run func(ctx context.Context, h Host, req CommandRequest) (CommandResponse, error)
}

// CommandRequest is one invocation of a command.
type CommandRequest struct {
	// Args is the rest of the line after "/name ".
	Args string
}

// CommandResponse is what a command returns.
type CommandResponse struct {
	// Output is shown to the user (stdout in print mode).
	Output string
}

// CommandProvider adds slash commands.
type CommandProvider interface {
	Commands() []Command
}

// The event names of the protocol, as extensions declare them.
const (
	EventSessionStart        = protocol.EventSessionStart
	EventBeforeTurn          = protocol.EventBeforeTurn
	EventTurnEnd             = protocol.EventTurnEnd
	EventSystemPromptChanged = protocol.EventSystemPromptChanged
	EventSessionEnd          = protocol.EventSessionEnd
)

// Events returns the events ext handles, by the optional interfaces it
// implements.
func Events(ext Extension) []string {
	var out []string
	if _, ok := ext.(SessionStarter); ok {
		out = append(out, EventSessionStart)
	}
	if _, ok := ext.(BeforeTurner); ok {
		out = append(out, EventBeforeTurn)
	}
	if _, ok := ext.(TurnEnder); ok {
		out = append(out, EventTurnEnd)
	}
	if _, ok := ext.(SystemPromptWatcher); ok {
		out = append(out, EventSystemPromptChanged)
	}
	if _, ok := ext.(SessionEnder); ok {
		out = append(out, EventSessionEnd)
	}
	if _, ok := ext.(ToolCallWatcher); ok {
		out = append(out, EventToolCall)
	}
	if _, ok := ext.(ToolResultWatcher); ok {
		out = append(out, EventToolResult)
	}
	if _, ok := ext.(BeforeRequester); ok {
		out = append(out, EventBeforeRequest)
	}
	if _, ok := ext.(BeforeMover); ok {
		out = append(out, EventBeforeMove)
	}
	if _, ok := ext.(AfterMover); ok {
		out = append(out, EventAfterMove)
	}
	return out
}
