// Command mover is a test extension of the session tree's events: with
// PANTO_MOVER_VETO set it vetoes every move; otherwise it gives the
// branch summary when one is asked for, and after a move sets its section
// "where" to say where the leaf went.
package main

import (
	"context"
	"log"
	"os"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var (
	_ sdk.BeforeMover = (*ext)(nil)
	_ sdk.AfterMover  = (*ext)(nil)
)

func (*ext) Describe() sdk.Info { return sdk.Info{Name: "mover"} }

func (*ext) BeforeMove(_ context.Context, _ sdk.Host, ev sdk.BeforeMoveEvent) (sdk.BeforeMoveResponse, error) {
	if os.Getenv("PANTO_MOVER_VETO") != "" {
		return sdk.BeforeMoveResponse{Veto: true, Reason: "moves are frozen here"}, nil
	}
	if ev.Summarize {
		return sdk.BeforeMoveResponse{Summary: "mover's summary of what was left"}, nil
	}
	return sdk.BeforeMoveResponse{}, nil
}

func (*ext) AfterMove(ctx context.Context, h sdk.Host, ev sdk.AfterMoveEvent) (sdk.AfterMoveResponse, error) {
	return sdk.AfterMoveResponse{}, h.SetSection(ctx, "where", "The leaf moved to "+ev.To+".")
}

func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
