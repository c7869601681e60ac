// Command blocker is a test extension: it blocks bash commands that remove
// files, marks every read result it sees, and never offers the write tool.
// A bash command holding "blocker:crash" or "blocker:hang" makes it crash or
// hang in the tool_call hook, and one holding "blocker:result-crash" makes it
// crash when it sees that call's result (safeguards must fail closed).
package main

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"strings"
	"time"

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

func (*ext) Describe() sdk.Info { return sdk.Info{Name: "blocker"} }

func (*ext) ToolCall(_ context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolCallDecision, error) {
	var in struct{ Command string }
	if call.Name == "bash" && json.Unmarshal(call.Input, &in) == nil {
		misbehave(in.Command, "blocker:crash", "blocker:hang")
	}
	if call.Name == "bash" && json.Unmarshal(call.Input, &in) == nil && strings.Contains(in.Command, "rm ") {
		return sdk.ToolCallDecision{Block: true, Reason: "removing files is not allowed here"}, nil
	}
	return sdk.ToolCallDecision{}, nil
}

func (*ext) ToolResult(_ context.Context, _ sdk.Host, ev sdk.ToolResultEvent) (sdk.ToolResultChange, error) {
	var in struct{ Command string }
	if ev.Call.Name == "bash" && json.Unmarshal(ev.Call.Input, &in) == nil {
		misbehave(in.Command, "blocker:result-crash", "")
	}
	if ev.Call.Name != "read" {
		return sdk.ToolResultChange{}, nil
	}
	return sdk.ToolResultChange{Amend: true, Result: sdk.ToolResult{Content: "[checked by blocker]\n" + ev.Result.Content, IsError: ev.Result.IsError}}, nil
}

// misbehave crashes when command holds crash, and hangs when it holds
// hang (an empty marker never matches).
func misbehave(command, crash, hang string) {
	switch {
	case strings.Contains(command, crash):
		os.Exit(3)
	case hang != "" && strings.Contains(command, hang):
		time.Sleep(time.Minute)
	}
}

func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
