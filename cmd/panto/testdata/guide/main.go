// Command guide is a test extension: it offers the tool note, whose
// guidance is $PANTO_TEST_GUIDANCE (or "Use note to take notes."), and the
// tool crash, which makes the extension exit.
package main

import (
	"context"
	"log"
	"os"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var _ sdk.ToolProvider = (*ext)(nil)

func (*ext) Describe() sdk.Info { return sdk.Info{Name: "guide"} }

func (*ext) Tools() []sdk.Tool {
	guidance := os.Getenv("PANTO_TEST_GUIDANCE")
	if guidance == "" {
		guidance = "Use note to take notes."
	}
	return []sdk.Tool{
		{Name: "note", Description: "takes a note", Guidance: guidance,
			Run: func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) {
				return sdk.ToolResult{Content: "noted"}, nil
			}},
		{Name: "crash", Description: "makes the extension exit",
			Run: func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) {
				os.Exit(3)
				return sdk.ToolResult{}, nil
			}},
	}
}

func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
