// Command bigresult is a test extension with one tool, big, that answers
// input.bytes bytes of "x": a result larger than the 64 MiB an extension
// may send in one message, to see what panto says of a call that ran but
// whose result cannot be carried.
package main

import (
	"context"
	"encoding/json"
	"log"
	"strings"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var _ sdk.ToolProvider = (*ext)(nil)

func (*ext) Describe() sdk.Info { return sdk.Info{Name: "bigresult"} }

func (*ext) Tools() []sdk.Tool {
	return []sdk.Tool{{
		Name:        "big",
		Description: "answers input.bytes bytes",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"bytes":{"type":"integer"}}}`),
		Run: func(_ context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
			var in struct{ Bytes int }
			if err := json.Unmarshal(call.Input, &in); err != nil {
				return sdk.ToolResult{}, err
			}
			return sdk.ToolResult{Content: strings.Repeat("x", in.Bytes)}, nil
		},
	}}
}

func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
