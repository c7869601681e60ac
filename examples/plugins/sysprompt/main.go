// Command sysprompt is the smallest demonstration of an extension that
// edits the system prompt on the user's request. It adds three slash
// commands:
//
//	/system-append TEXT         append TEXT as a block (Host.AddSystemMessage)
//	/system-replace TEXT        start the prompt afresh with TEXT (Host.ReplaceSystemMessage);
//	                            the extensions' live sections — the tools'
//	                            guidance, the environment — are kept
//	/system-replace-bare TEXT   the same with sdk.Bare: TEXT alone, no section kept
//
// Each edit is recorded in the session log at once, as an append- or
// replace-mode system entry (a replace that is not bare is followed by
// the sections panto records again). Run one without the model:
//
//	panto -p "/system-append Answer in French." --extension bin/sysprompt
//
// A replace lasts: the next resume with unchanged prompt files keeps it,
// and only a changed file re-seeds the prompt (docs/system-prompt.md). The
// end-to-end tests of examples/plugins drive panto through this extension.
package main

import (
	"context"
	"errors"
	"log"
	"strings"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var (
	_ sdk.CommandProvider = (*ext)(nil)
	_ sdk.Describer       = (*ext)(nil)
)

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "sysprompt", Version: "1.0.0", Description: "append to or replace the system prompt by hand"}
}

func (*ext) Commands() []sdk.Command {
	return []sdk.Command{
		{
			Name:        "system-append",
			Description: "append a block to the system prompt",
			Usage:       "TEXT",
			Run:         edit("system-append", "appended", sdk.Host.AddSystemMessage),
		},
		{
			Name:        "system-replace",
			Description: "replace the system prompt's text with one block (the extensions' sections stay)",
			Usage:       "TEXT",
			Run: edit("system-replace", "replaced", func(h sdk.Host, ctx context.Context, text string) error {
				return h.ReplaceSystemMessage(ctx, text)
			}),
		},
		{
			Name:        "system-replace-bare",
			Description: "replace the whole system prompt with one block, sections and all",
			Usage:       "TEXT",
			Run: edit("system-replace-bare", "replaced, bare", func(h sdk.Host, ctx context.Context, text string) error {
				return h.ReplaceSystemMessage(ctx, text, sdk.Bare())
			}),
		},
	}
}

// edit returns a command that applies do to its argument and reports done.
func edit(name, done string, do func(sdk.Host, context.Context, string) error) func(context.Context, sdk.Host, sdk.CommandRequest) (sdk.CommandResponse, error) {
	return func(ctx context.Context, h sdk.Host, req sdk.CommandRequest) (sdk.CommandResponse, error) {
		text := strings.TrimSpace(req.Args)
		if text == "" {
			return sdk.CommandResponse{}, errors.New("usage: /" + name + " TEXT (the text of the system block)")
		}
		if err := do(h, ctx, text); err != nil {
			return sdk.CommandResponse{}, err
		}
		return sdk.CommandResponse{Output: done}, nil
	}
}

func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
