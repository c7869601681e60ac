package sdk

import (
	"context"
	"encoding/json"

	"github.com/panto-dev/panto/internal/protocol"
)

// Tool is a tool an extension offers the model.
type Tool struct {
	// Name as the model calls it: letters, digits, _ and -, at most 64.
	Name        string
	Description string
	// Parameters is the JSON schema of the input (an object schema); nil
	// means {"type":"object"}.
	Parameters json.RawMessage
	// Guidance is optional prompt text on when and how to use the tool.
	Guidance string
	// Run runs one call. A returned error becomes an error result the
	// model reads; so does a ToolResult with IsError.
	Run func(ctx context.Context, h Host, call ToolCall) (ToolResult, error)
}

// ToolCall is one call of a tool by the model.
type ToolCall struct {
	ID   string
	Name string
	// Input is the JSON object the model sent.
	Input json.RawMessage
	// Sandbox is the boundary the user chose for this call (API v5), nil
	// when the sandbox is off: a tool that starts processes or writes
	// files keeps to it (package sdk/sandbox applies it to a process).
	Sandbox *Sandbox
}

// Sandbox is the OS boundary a tool call's processes and writes keep to
// (the [sandbox] table of panto's config, resolved for one call).
type Sandbox struct {
	// Mode is SandboxReadOnly or SandboxWorkspaceWrite.
	Mode SandboxMode
	// Network allows sockets other than unix ones.
	Network bool
	// WritableRoots are absolute, cleaned paths written in
	// workspace-write mode: the project, its git directories and the
	// roots the user added.
	WritableRoots []string
	// TmpDir is the session's temporary directory, writable in every
	// mode; processes get it as TMPDIR.
	TmpDir string
	// Required: a call that cannot be sandboxed here (no Landlock or
	// seccomp) must not run.
	Required bool
	// UnixSockets are socket paths a process may connect to with the
	// network off.
	UnixSockets []string
}

// SandboxMode is what a sandboxed process may write.
type SandboxMode string

// The sandbox modes a call carries (off is a nil Sandbox).
const (
	SandboxReadOnly       SandboxMode = "read-only"
	SandboxWorkspaceWrite SandboxMode = "workspace-write"
)

// ToolResult is what a tool answers.
type ToolResult struct {
	Content string
	IsError bool
	// Images follow Content (API v3). Anthropic takes them in the tool
	// result; an OpenAI-compatible provider, whose tool messages hold text
	// only, gets them in a user message right after the tool results.
	Images []Image
	// SandboxBlocked says, in words, what the sandbox refused that the
	// call needed ("network is off (sandbox.network = false)"), so panto
	// can offer the user to run the call again with more room (API v5).
	SandboxBlocked string
}

// Image is an image of a tool result.
type Image struct {
	// MediaType is image/png, image/jpeg, image/gif or image/webp.
	MediaType string
	// Data is the image itself, not base64.
	Data []byte
}

// ToolProvider offers tools to the model.
type ToolProvider interface {
	Tools() []Tool
}

// ToolCallDecision is a ToolCallWatcher's verdict.
type ToolCallDecision struct {
	// Block stops the call; the model reads Reason as its result.
	Block  bool
	Reason string
}

// ToolCallWatcher sees every tool call before it runs (whoever owns the
// tool) and may block it.
type ToolCallWatcher interface {
	ToolCall(ctx context.Context, h Host, call ToolCall) (ToolCallDecision, error)
}

// ToolResultEvent is a tool call and its result.
type ToolResultEvent struct {
	Call   ToolCall
	Result ToolResult
	// Truncated is set when panto cut the result (it keeps at most 1 MiB
	// of a result); Size is then the result's length in bytes before the
	// cut. Result is what the model reads.
	Truncated bool
	Size      int
}

// ToolResultChange amends a result when Amend is set.
type ToolResultChange struct {
	Amend  bool
	Result ToolResult
}

// ToolResultWatcher sees every tool result before the model does and may
// amend it.
type ToolResultWatcher interface {
	ToolResult(ctx context.Context, h Host, ev ToolResultEvent) (ToolResultChange, error)
}

// BeforeRequestEvent is sent before each model request of a turn.
type BeforeRequestEvent struct {
	// Tools are the names about to be offered, in order.
	Tools []string
	// Step counts the model requests of this turn, from 1.
	Step int
}

// BeforeRequestResponse narrows the tools offered on this request when
// Narrow is set: only the names in Tools stay.
type BeforeRequestResponse struct {
	Narrow bool
	Tools  []string
}

// BeforeRequester may narrow the tools of each request. The system prompt
// changes only through the recorded Host calls, never here.
type BeforeRequester interface {
	BeforeRequest(ctx context.Context, h Host, ev BeforeRequestEvent) (BeforeRequestResponse, error)
}

// The tool event names.
const (
	EventToolCall      = protocol.EventToolCall
	EventToolResult    = protocol.EventToolResult
	EventBeforeRequest = protocol.EventBeforeRequest
)

// VariableProvider defines variables for {{name}} references in prompt
// text (SYSTEM.md, APPEND_SYSTEM.md, USER_PROMPT.md and every extension's
// system text), read once at start. panto's built-ins win on a clash.
type VariableProvider interface {
	Variables() map[string]string
}
