package host

import (
	"context"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/serializers"
)

// What a session needs of its extensions and of its model, as the small
// interfaces it uses: *extension.Manager is the one Open starts, a
// provider.Provider the Sender a front end passes; host's own tests put
// fakes in their place, so sections, disposal, reconciliation, the open
// order and moves are tested without a binary.

// Sender sends one model request; provider.Provider fits. With req.Stream
// set, fn receives the reply's pieces as they arrive. A reply is returned
// only whole: on an error nothing is recorded.
type Sender interface {
	Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error)
}

// turnHooks are told of a turn's progress. They are called without the
// session's locks, so they may record changes (system edits made in
// BeforeTurn shape the turn's request).
type turnHooks interface {
	BeforeTurn(ctx context.Context, userText string)
	TurnEnd(ctx context.Context, reply conversation.Message, stopReason string)
}

// toolRunner offers tools to the model and runs their calls.
type toolRunner interface {
	// Tools are the tools to offer, in order.
	Tools() []serializers.Tool
	// NarrowTools lets extensions shrink the offer of one request (step
	// counts the requests of the turn from 1); it returns the names kept.
	NarrowTools(ctx context.Context, step int, names []string) []string
	// RunTool runs one call and always returns its tool-result block: a
	// failure of any kind (unknown tool, bad input, a crashed or timed-out
	// owner, a blocked call, cancellation) is an is_error result the model
	// can read.
	RunTool(ctx context.Context, call conversation.Block) conversation.Block
	// RunToolIn is RunTool inside a sandbox (nil: none), saying what the
	// sandbox blocked.
	RunToolIn(ctx context.Context, call conversation.Block, sb *extension.Sandbox) extension.ToolRun
}

// moveHooks are asked before the leaf moves (one may veto it, or give the
// branch summary) and told after.
type moveHooks interface {
	BeforeMove(ctx context.Context, mv extension.Move) (summary string, err error)
	AfterMove(ctx context.Context, mv extension.Move, summary string)
}

// extensionSet is a session's running extensions.
type extensionSet interface {
	turnHooks
	toolRunner
	moveHooks
	// Names are the enabled extensions, in load order; Infos what each
	// said about itself; Variables the {{variables}} they define.
	Names() []string
	Infos() []extension.Info
	Variables() map[string]string
	// Disable stops the named extensions before any event reaches them.
	Disable(names []string)
	Commands() []extension.Command
	RunCommand(ctx context.Context, name, args string) (string, error)
	// SystemChanged queues system_prompt_changed; it never blocks.
	SystemChanged(extension.Change)
	// RecordGuidance sets each extension's tool-guidance section through
	// rec.
	RecordGuidance(rec extension.Recorder)
	SessionStart(ctx context.Context, ev extension.SessionStart)
	// Close delivers session_end and stops them; Stops says how each
	// stopped.
	Close(ctx context.Context)
	Stops() []extension.NamedStop
}

var _ extensionSet = (*extension.Manager)(nil)

// startExtensions starts a session's extensions: extension.Start, unless
// a test puts a fake in its place.
type startExtensions func(ctx context.Context, specs []extension.Spec, rec extension.Recorder, opts extension.Options) extensionSet

func startManager(ctx context.Context, specs []extension.Spec, rec extension.Recorder, opts extension.Options) extensionSet {
	return extension.Start(ctx, specs, rec, opts)
}
