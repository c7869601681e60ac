package tui

import (
	"context"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// Session is what the UI needs of a running session; *host.Session
// satisfies it, and tests use a fake.
type Session interface {
	// Subscribe is where every event comes from, Open's first (the
	// first subscription); Turn starts a turn whose events, TurnEnd
	// last, come there.
	Subscribe(ctx context.Context) <-chan host.Event
	Turn(ctx context.Context, text string) error
	Info() host.Info
	Commands() []extension.Command
	RunCommand(ctx context.Context, name, args string) (string, error)
	Compact(ctx context.Context) (host.CompactResult, error)
	SetModel(name string) error
	ContextUsage() (tokens, window int)
	Messages() []conversation.Message
	EffectiveSystem() []conversation.SystemText
	Close(ctx context.Context) error

	// The session tree (/tree).
	Tree() (*sessionlog.Tree, error)
	MoveTo(ctx context.Context, ref string, opt host.MoveOptions) (host.MoveResult, error)
	Label(ref, text string) (string, error)
	PromptAt(ref string) ([]conversation.SystemText, error)
}

var _ Session = (*host.Session)(nil)
