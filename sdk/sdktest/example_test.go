package sdktest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

// greeter is the extension under test: it greets at session start, and
// /shout TEXT appends TEXT in capitals.
type greeter struct{ sdk.Base }

func (*greeter) SessionStart(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	if ev.Resumed && !ev.Reseeded {
		return sdk.SessionStartResponse{}, nil
	}
	return sdk.SessionStartResponse{}, h.AddSystemMessage(ctx, "Greet the user by name.")
}

func (*greeter) Commands() []sdk.Command {
	return []sdk.Command{{Name: "shout", Usage: "TEXT", Run: func(ctx context.Context, h sdk.Host, req sdk.CommandRequest) (sdk.CommandResponse, error) {
		if err := h.AddSystemMessage(ctx, fmt.Sprintf("%s!", req.Args)); err != nil {
			return sdk.CommandResponse{}, err
		}
		return sdk.CommandResponse{Output: "shouted"}, nil
	}}}
}

func Example() {
	// In a test this is the test's t; a bare one stands in here so that
	// the example runs.
	t := new(testing.T)

	h := sdktest.New(t, &greeter{}).WithSystem("You are a helpful assistant.")
	if err := h.SessionStart(sdk.SessionStartEvent{SessionID: "s1"}); err != nil {
		fmt.Println("session start:", err)
	}
	resp, err := h.Command("/shout", "Be brief")
	fmt.Println(resp.Output, err)
	_, err = h.Command("/whisper", "")
	fmt.Println(err)

	for _, e := range h.Edits() {
		fmt.Printf("edit: %s %q\n", e.Mode, e.Text)
	}
	for i, block := range h.Prompt() {
		fmt.Printf("block %d: %s\n", i+1, block)
	}
	// Output:
	// shouted <nil>
	// sdktest: unknown command /whisper
	// edit: append "Greet the user by name."
	// edit: append "Be brief!"
	// block 1: You are a helpful assistant.
	// block 2: Greet the user by name.
	// block 3: Be brief!
}
