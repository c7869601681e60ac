package extension

import (
	"context"
	"fmt"
	"strings"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
)

// Move is a move of the session's leaf, as before_move and after_move
// tell it.
type Move struct {
	// From is the leaf before the move; To the entry moved to.
	From, To string
	// Summarize: the user asked for a summary of the branch left.
	Summarize bool
	// Left counts the messages of the branch left that the new path does
	// not hold.
	Left int
}

// VetoError is a move an extension vetoed.
type VetoError struct {
	By, Reason string
}

func (e *VetoError) Error() string {
	return fmt.Sprintf("the %s extension vetoed the move: %s", e.By, e.Reason)
}

// BeforeMove asks the extensions that handle before_move, in load order,
// whether the leaf may move: the first veto stops it (a *VetoError). The
// summaries they give are returned, joined, to be recorded as the branch
// summary. An extension that fails to answer does not stop the move: a
// move loses nothing, so this is no safeguard.
func (m *Manager) BeforeMove(ctx context.Context, mv Move) (summary string, err error) {
	req := &pb.EventRequest{Event: protocol.EventBeforeMove, Payload: &pb.EventRequest_BeforeMove{BeforeMove: &pb.BeforeMove{
		From: mv.From, To: mv.To, Summarize: mv.Summarize, Left: uint32(max(mv.Left, 0)),
	}}}
	var summaries []string
	for _, e := range m.list() {
		if e.Disabled() != nil || !e.Handles(req.Event) {
			continue
		}
		resp, err := m.ask(ctx, e, req)
		if ctx.Err() != nil {
			return "", fmt.Errorf("move: %w", context.Cause(ctx))
		}
		if err != nil {
			continue // reported by ask
		}
		if resp.GetBlock() {
			reason := resp.GetBlockReason()
			if reason == "" {
				reason = "no reason given"
			}
			return "", &VetoError{By: e.Name(), Reason: reason}
		}
		if s := strings.TrimSpace(resp.GetSummary()); s != "" {
			summaries = append(summaries, s)
		}
	}
	return strings.Join(summaries, "\n\n"), nil
}

// AfterMove tells the extensions the leaf moved; their edits are recorded
// on the new path.
func (m *Manager) AfterMove(ctx context.Context, mv Move, summary string) {
	m.fire(ctx, &pb.EventRequest{Event: protocol.EventAfterMove, Payload: &pb.EventRequest_AfterMove{AfterMove: &pb.AfterMove{
		From: mv.From, To: mv.To, Summary: summary,
	}}})
}
