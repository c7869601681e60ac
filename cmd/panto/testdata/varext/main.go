// Command varext is a test extension: it defines the variable team and,
// at session start, records a system block that uses it and a built-in.
package main

import (
	"context"
	"log"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var (
	_ sdk.VariableProvider = (*ext)(nil)
	_ sdk.SessionStarter   = (*ext)(nil)
)

func (*ext) Describe() sdk.Info { return sdk.Info{Name: "varext"} }

func (*ext) Variables() map[string]string {
	return map[string]string{"team": "platform", "cwd": "not the real cwd"}
}

func (*ext) SessionStart(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	if ev.Resumed {
		return sdk.SessionStartResponse{}, nil
	}
	if err := h.AddSystemMessage(ctx, "Team {{team}} works in {{cwd}}."); err != nil {
		return sdk.SessionStartResponse{}, err
	}
	// A malformed reference is refused with the extension named.
	if err := h.AddSystemMessage(ctx, "broken {{nope}}"); err == nil {
		return sdk.SessionStartResponse{}, h.AddSystemMessage(ctx, "the broken edit was accepted")
	}
	return sdk.SessionStartResponse{}, nil
}

func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
