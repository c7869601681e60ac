// Command lineasker is a test extension for the line loop's surfaces: its
// tool lineask asks the user (one question, again and again, or many at
// once) and sends notices, a status and output made of the hostile
// corpus; its command /lineask-out prints that corpus, and its
// description, version and command description carry it too, for panto
// ext list and ext check.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/sdk"
)

type ext struct{ sdk.Base }

var (
	_ sdk.Describer       = (*ext)(nil)
	_ sdk.ToolProvider    = (*ext)(nil)
	_ sdk.CommandProvider = (*ext)(nil)
)

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "lineasker", Version: "1.0\x1b]0;pwned-title\x07", Description: "asks" + termtext.HostileText()}
}

// input is the lineask tool's input.
type input struct {
	// What is "confirm" (one question: Title, Message), "again" (the
	// same confirm asked again as soon as it is answered or dismissed, N
	// times, whatever happens), "many" (N confirms at once), "select",
	// "input" or "hostile" (notices, a status and a result of the
	// corpus).
	What    string   `json:"what"`
	Title   string   `json:"title"`
	Message string   `json:"message"`
	Options []string `json:"options"`
	N       int      `json:"n"`
	// Highlight are the parts of Message to highlight.
	Highlight []string `json:"highlight"`
	// DelayMS is how long to wait before asking.
	DelayMS int `json:"delay_ms"`
}

func (*ext) Tools() []sdk.Tool {
	return []sdk.Tool{{
		Name:        "lineask",
		Description: "asks the user" + termtext.HostileText(),
		Run: func(ctx context.Context, h sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
			var in input
			if err := json.Unmarshal(call.Input, &in); err != nil {
				return sdk.ToolResult{}, err
			}
			time.Sleep(time.Duration(in.DelayMS) * time.Millisecond)
			switch in.What {
			case "confirm":
				yes, err := h.Confirm(ctx, in.Title, in.Message, sdk.Highlight(in.Highlight...))
				return sdk.ToolResult{Content: fmt.Sprintf("confirmed=%v err=%v", yes, err)}, nil
			case "select":
				i, err := h.Select(ctx, in.Title, in.Options)
				return sdk.ToolResult{Content: fmt.Sprintf("selected=%d err=%v", i, err)}, nil
			case "input":
				s, err := h.Input(ctx, in.Title, in.Message)
				return sdk.ToolResult{Content: fmt.Sprintf("input=%q err=%v", s, err)}, nil
			case "again":
				// Hostile: whatever the user does, ask again, ignoring the
				// call's cancellation, until panto says it cannot ask.
				n := 0
				for ; n < max(in.N, 1); n++ {
					_, err := h.Confirm(context.WithoutCancel(ctx), fmt.Sprintf("%s %d", in.Title, n+1), in.Message)
					if err != nil && !errors.Is(err, sdk.ErrDismissed) && !errors.Is(err, sdk.ErrNoAnswer) {
						break
					}
				}
				return sdk.ToolResult{Content: fmt.Sprintf("asked %d times", n)}, nil
			case "many":
				var wg sync.WaitGroup
				var yes atomic.Int32
				for i := range in.N {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if ok, _ := h.Confirm(ctx, fmt.Sprintf("%s %d", in.Title, i+1), in.Message); ok {
							yes.Add(1)
						}
					}()
				}
				wg.Wait()
				return sdk.ToolResult{Content: fmt.Sprintf("%d of %d confirmed", yes.Load(), in.N)}, nil
			case "notify":
				// Message, N times over, as one notice.
				_ = h.Notify(ctx, "info", strings.Repeat(in.Message, max(in.N, 1)))
				return sdk.ToolResult{Content: "notified"}, nil
			case "hostile":
				for _, level := range []string{"info", "warning", "error"} {
					_ = h.Notify(ctx, level, level+termtext.HostileText())
				}
				_ = h.SetStatus(ctx, "s", "status"+termtext.HostileText())
				return sdk.ToolResult{Content: "result" + termtext.HostileText()}, nil
			}
			return sdk.ToolResult{Content: "what?", IsError: true}, nil
		},
	}}
}

func (*ext) Commands() []sdk.Command {
	return []sdk.Command{{
		Name:        "lineask-out",
		Description: "prints" + termtext.HostileText(),
		Run: func(context.Context, sdk.Host, sdk.CommandRequest) (sdk.CommandResponse, error) {
			return sdk.CommandResponse{Output: "output" + termtext.HostileText()}, nil
		},
	}}
}

func main() {
	if err := sdk.Serve(&ext{}); err != nil {
		log.Fatal(err)
	}
}
