// Command hello is the smallest useful panto extension: when a session
// starts it adds one block to the system prompt. docs/extensions.md walks
// through it line by line.
//
// Build it and load it for one run:
//
//	go build -o bin/ ./examples/plugins/hello
//	panto --extension bin/hello -p hi --provider echo
package main

import (
	"context"
	"log"

	// sdk is the only package an extension imports.
	"github.com/panto-dev/panto/sdk"
)

// ext is the extension. Embedding sdk.Base makes it an sdk.Extension; it
// handles nothing until it implements one of the optional interfaces.
type ext struct{ sdk.Base }

// The compiler checks that ext really implements the hook it means to:
// a typo in SessionStart's signature is a build error, not a silent no-op.
var _ sdk.SessionStarter = (*ext)(nil)

// SessionStart runs once the session's system prompt is seeded (a fresh
// session) or reconciled (a resumed one). An edit made here is recorded
// right after the session's lifecycle entry.
func (*ext) SessionStart(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	// A resume with unchanged prompt files keeps every earlier edit, this
	// block included: adding it again would repeat it. A re-seed
	// (Reseeded) discarded it, so it is added again then.
	if ev.Resumed && !ev.Reseeded {
		return sdk.SessionStartResponse{}, nil
	}
	// Record the block; the next model request carries it.
	return sdk.SessionStartResponse{}, h.AddSystemMessage(ctx, "Greetings from the hello extension.")
}

// main hands the extension to the SDK, which answers panto's handshake on
// stdout and serves until panto shuts it down. Never print to stdout.
func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
