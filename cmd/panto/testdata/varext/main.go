// Command varext is a test extension: it defines the variable team and,
// at session start, records a system block that uses it and a built-in.
package main

import (
	"context"

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

func (*ext) SessionStart(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) error {
	if ev.Resumed {
		return nil
	}
	if err := h.AddSystemMessage(ctx, "Team {{team}} works in {{cwd}}."); err != nil {
		return err
	}
	// A malformed reference is refused with the extension named.
	if err := h.AddSystemMessage(ctx, "broken {{nope}}"); err == nil {
		return h.AddSystemMessage(ctx, "the broken edit was accepted")
	}
	return nil
}

func main() { sdk.Serve(&ext{}) }
