package sdk

import (
	"context"

	"github.com/panto-dev/panto/internal/protocol"
)

// The session tree (API v2). A session's entries form a tree; the user
// moves its leaf to another entry (/tree ID in panto, --from ID), and the
// next message continues from there as a new branch. The conversation and
// the system prompt are then those of the path to the new leaf: exactly
// what they were at that point.

// The move events.
const (
	EventBeforeMove = protocol.EventBeforeMove
	EventAfterMove  = protocol.EventAfterMove
)

// BeforeMoveEvent says the user is about to move the leaf.
type BeforeMoveEvent struct {
	// From is the leaf now; To the entry the user moves to (entry ids of
	// the session log).
	From, To string
	// Summarize is set when the user asked for a summary of the branch
	// being left (the model writes it unless an extension gives one).
	Summarize bool
	// Left is how many messages of the branch being left the new path
	// does not hold.
	Left int
}

// BeforeMoveResponse vetoes the move, or adds a summary to it.
type BeforeMoveResponse struct {
	// Veto stops the move; the user sees Reason.
	Veto   bool
	Reason string
	// Summary, when set, is recorded as the summary of the branch being
	// left — instead of the model's when the user asked for one, and even
	// when not — so the model knows what was tried there.
	Summary string
}

// BeforeMover sees every move of the leaf before it is recorded and may
// veto it or give the branch summary. A system edit made in BeforeMove is
// recorded on the branch being left: edit in AfterMove for the new path.
// An extension that fails to answer does not stop the move.
type BeforeMover interface {
	BeforeMove(ctx context.Context, h Host, ev BeforeMoveEvent) (BeforeMoveResponse, error)
}

// AfterMoveEvent says the leaf moved: Host.Messages and Host.SystemPrompt
// are now those of the path to To.
type AfterMoveEvent struct {
	From, To string
	// Summary is the branch summary recorded with the move, if any.
	Summary string
}

// AfterMoveResponse is what AfterMove answers (no fields yet).
type AfterMoveResponse struct{}

// AfterMover handles a move of the leaf once it is recorded: derive
// state from the new path (Host.Messages), or edit the prompt for it.
type AfterMover interface {
	AfterMove(ctx context.Context, h Host, ev AfterMoveEvent) (AfterMoveResponse, error)
}
