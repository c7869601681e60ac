// Command watcher is a test extension: it records, as extension_data, the
// text of every before_turn and system_prompt_changed event it is told of,
// so a test can see what reached an extension.
package main

import (
	"context"
	"log"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var (
	_ sdk.BeforeTurner        = (*ext)(nil)
	_ sdk.SystemPromptWatcher = (*ext)(nil)
)

func (*ext) Describe() sdk.Info { return sdk.Info{Name: "watcher"} }

func (*ext) BeforeTurn(ctx context.Context, h sdk.Host, ev sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	return sdk.BeforeTurnResponse{}, h.AppendData(ctx, map[string]string{"event": sdk.EventBeforeTurn, "text": ev.UserText})
}

func (*ext) SystemPromptChanged(ctx context.Context, h sdk.Host, ev sdk.SystemPromptChangedEvent) (sdk.SystemPromptChangedResponse, error) {
	return sdk.SystemPromptChangedResponse{}, h.AppendData(ctx, map[string]string{"event": sdk.EventSystemPromptChanged, "text": ev.Text, "by": ev.By})
}

func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
