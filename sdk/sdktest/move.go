package sdktest

import (
	"context"

	"github.com/panto-dev/panto/sdk"
)

// BeforeMove delivers the before_move event and returns the extension's
// answer (a zero one when it does not handle the event). The harness
// has no tree: the conversation stays as it is, whatever the answer.
func (h *Harness) BeforeMove(ev sdk.BeforeMoveEvent) (sdk.BeforeMoveResponse, error) {
	var r sdk.BeforeMoveResponse
	x, ok := h.ext.(sdk.BeforeMover)
	if !ok {
		return r, nil
	}
	err := h.hook("BeforeMove", func(ctx context.Context) error {
		var err error
		r, err = x.BeforeMove(ctx, h.host, ev)
		return err
	})
	return r, err
}

// AfterMove delivers the after_move event. Seed the conversation of the
// new path first (WithSystem, AddMessages) when the extension reads it.
func (h *Harness) AfterMove(ev sdk.AfterMoveEvent) error {
	x, ok := h.ext.(sdk.AfterMover)
	if !ok {
		return nil
	}
	return h.hook("AfterMove", func(ctx context.Context) error { _, err := x.AfterMove(ctx, h.host, ev); return err })
}
