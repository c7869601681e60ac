// Command guard is a test extension: it blocks bash commands that remove
// files, marks every read result it sees, and never offers the write tool.
package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var (
	_ sdk.ToolCallWatcher   = (*ext)(nil)
	_ sdk.ToolResultWatcher = (*ext)(nil)
	_ sdk.BeforeRequester   = (*ext)(nil)
)

func (*ext) BeforeRequest(_ context.Context, _ sdk.Host, ev sdk.BeforeRequestEvent) (sdk.BeforeRequestResponse, error) {
	var keep []string
	for _, name := range ev.Tools {
		if name != "write" {
			keep = append(keep, name)
		}
	}
	return sdk.BeforeRequestResponse{Narrow: true, Tools: keep}, nil
}

func (*ext) Describe() sdk.Info { return sdk.Info{Name: "guard"} }

func (*ext) ToolCall(_ context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolCallDecision, error) {
	var in struct{ Command string }
	if call.Name == "bash" && json.Unmarshal(call.Input, &in) == nil && strings.Contains(in.Command, "rm ") {
		return sdk.ToolCallDecision{Block: true, Reason: "removing files is not allowed here"}, nil
	}
	return sdk.ToolCallDecision{}, nil
}

func (*ext) ToolResult(_ context.Context, _ sdk.Host, ev sdk.ToolResultEvent) (sdk.ToolResultChange, error) {
	if ev.Call.Name != "read" {
		return sdk.ToolResultChange{}, nil
	}
	return sdk.ToolResultChange{Amend: true, Result: sdk.ToolResult{Content: "[checked by guard]\n" + ev.Result.Content, IsError: ev.Result.IsError}}, nil
}

func main() { sdk.Serve(&ext{}) }
