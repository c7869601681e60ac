// Command slowguard is a test extension: a tool_call watcher that is slow
// to start (it sleeps 5 s before serving, longer than the tests'
// extension_start_timeout) and, once running, blocks every bash command
// that holds "rm ". A guard like it that misses its start must not leave
// bash unguarded.
package main

import (
	"context"
	"encoding/json"
	"log"
	"strings"
	"time"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var _ sdk.ToolCallWatcher = (*ext)(nil)

func (*ext) Describe() sdk.Info { return sdk.Info{Name: "slowguard"} }

func (*ext) ToolCall(_ context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolCallDecision, error) {
	var in struct{ Command string }
	if call.Name == "bash" && json.Unmarshal(call.Input, &in) == nil && strings.Contains(in.Command, "rm ") {
		return sdk.ToolCallDecision{Block: true, Reason: "slowguard blocks rm"}, nil
	}
	return sdk.ToolCallDecision{}, nil
}

func main() {
	time.Sleep(5 * time.Second)
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
