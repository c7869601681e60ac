// Command noisy is a test extension that writes to its stdout and
// stderr, logs, and sends notices at every event it can: whatever it
// prints must never reach panto's stdout (panto acp's is JSON-RPC only).
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var (
	_ sdk.SessionStarter = (*ext)(nil)
	_ sdk.BeforeTurner   = (*ext)(nil)
)

func (*ext) Describe() sdk.Info { return sdk.Info{Name: "noisy", Description: "prints everywhere"} }

func noise(where string) {
	fmt.Println("NOISE on stdout at", where)
	fmt.Fprintln(os.Stderr, "NOISE on stderr at", where)
	log.Println("NOISE logged at", where)
}

func (*ext) SessionStart(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	noise("session_start")
	_ = h.Notify(ctx, "info", "noisy started\nwith a second line")
	_ = h.SetStatus(ctx, "noisy", "noisy")
	return sdk.SessionStartResponse{}, nil
}

func (*ext) BeforeTurn(ctx context.Context, h sdk.Host, _ sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	noise("before_turn")
	_ = h.Notify(ctx, "warning", "noisy saw a turn")
	return sdk.BeforeTurnResponse{}, nil
}

func main() {
	// Not on stdout before the handshake: go-plugin reads its line there.
	fmt.Fprintln(os.Stderr, "NOISE on stderr at main")
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
