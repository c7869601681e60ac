// Command askbound is a test extension that misuses the user calls, for
// the e2e tests of their bounds (issue 15 item 9). It gives no name of
// its own: its name is its file's, so a symlink named "panto" tries to
// take panto's.
//
//   - its tool askbound: {"what":"flood"} asks 1,000 Confirms at once and
//     answers how each ended ("answered=… too_many=… other=…");
//     {"what":"notify","n":N} sends N notices as fast as it can.
//   - before_turn, when the user's text is "askbound:hang": keeps a
//     question on the screen (two goroutines asking in turn, 200 ms
//     each) and never returns.
//   - session_end: asks a Confirm and records how it ended (AppendData
//     {"session_end": {"error": …, "closing": …}}).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var (
	_ sdk.ToolProvider = (*ext)(nil)
	_ sdk.BeforeTurner = (*ext)(nil)
	_ sdk.SessionEnder = (*ext)(nil)
)

func (*ext) Tools() []sdk.Tool {
	return []sdk.Tool{{
		Name:        "askbound",
		Description: "misuses the user calls",
		Run: func(ctx context.Context, h sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
			var in struct {
				What string `json:"what"`
				N    int    `json:"n"`
			}
			if err := json.Unmarshal(call.Input, &in); err != nil {
				return sdk.ToolResult{}, err
			}
			switch in.What {
			case "flood":
				var answered, tooMany, other atomic.Int32
				var wg sync.WaitGroup
				for i := range 1000 {
					wg.Go(func() {
						_, err := h.Confirm(ctx, "Flood?", fmt.Sprintf("question %d of 1000", i+1))
						switch {
						case err == nil:
							answered.Add(1)
						case errors.Is(err, sdk.ErrTooManyQuestions):
							tooMany.Add(1)
						default:
							other.Add(1)
						}
					})
				}
				wg.Wait()
				return sdk.ToolResult{Content: fmt.Sprintf("answered=%d too_many=%d other=%d", answered.Load(), tooMany.Load(), other.Load())}, nil
			case "notify":
				for i := range in.N {
					_ = h.Notify(ctx, "info", fmt.Sprintf("notice %d", i))
				}
				return sdk.ToolResult{Content: fmt.Sprintf("sent %d notices", in.N)}, nil
			}
			return sdk.ToolResult{Content: "what?", IsError: true}, nil
		},
	}}
}

func (*ext) BeforeTurn(_ context.Context, h sdk.Host, ev sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	if ev.UserText != "askbound:hang" {
		return sdk.BeforeTurnResponse{}, nil
	}
	for range 2 {
		go func() {
			for {
				qctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				_, _ = h.Confirm(qctx, "Hang?", "the hook that asks this never returns")
				cancel()
			}
		}()
	}
	select {} // a hook that ignores its deadline
}

func (*ext) SessionEnd(ctx context.Context, h sdk.Host, _ sdk.SessionEndEvent) (sdk.SessionEndResponse, error) {
	_, err := h.Confirm(ctx, "Save your work?", "asked in session_end")
	msg := "<nil>"
	if err != nil {
		msg = err.Error()
	}
	return sdk.SessionEndResponse{}, h.AppendData(ctx, map[string]any{"session_end": map[string]any{"error": msg, "closing": errors.Is(err, sdk.ErrClosing)}})
}

func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
