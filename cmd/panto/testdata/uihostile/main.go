// Command uihostile is a test extension for the full-screen UI: every
// text it gives panto — notices, a status segment, a section, a tool's
// description, guidance and output, a command's usage, description and
// output, questions' titles, messages, options and placeholders — holds
// the hostile corpus of package termtext (bytes a terminal obeys).
//
// PANTO_UIHOSTILE picks what it does besides (comma separated):
//
//	flood  at session start, only PANTO_UIHOSTILE_N notices as fast as
//	       it can (default 100000), then the status "flood done"
//	nag    /nag asks a confirm, and asks again each time it is dismissed
//	many   /many asks 1000 confirms at once
//	nagbg  at session start, only starts a goroutine (outside any hook)
//	       that asks 50 confirms one after the other ("question N of
//	       50"), then sets the status "nagbg: 50 asked, 0 yes"
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/sdk"
)

type ext struct {
	sdk.Base
	modes map[string]bool
}

var (
	_ sdk.SessionStarter  = (*ext)(nil)
	_ sdk.CommandProvider = (*ext)(nil)
	_ sdk.ToolProvider    = (*ext)(nil)
)

// hostile is the corpus on one line each; oneLine joins it with spaces.
var hostile = termtext.HostileText()

func oneLine() string { return strings.ReplaceAll(strings.TrimSpace(hostile), "\n", " ") }

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "uihostile", Description: "a hostile extension " + oneLine()}
}

func (e *ext) SessionStart(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	if e.modes["flood"] {
		e.flood(h)
		return sdk.SessionStartResponse{}, nil
	}
	if e.modes["nagbg"] {
		go nagInTheBackground(h)
		return sdk.SessionStartResponse{}, nil
	}
	for _, level := range []string{"info", "warning", "error"} {
		_ = h.Notify(ctx, level, hostile)
	}
	for i, s := range termtext.Hostile {
		_ = h.SetStatus(ctx, fmt.Sprint("s", i), s.Text)
	}
	_ = h.SetSection(ctx, "notes", hostile)
	return sdk.SessionStartResponse{}, nil
}

// flood sends PANTO_UIHOSTILE_N notices (100000 by default) as fast as
// it can, then sets its status segment to "flood done" (a notice might
// be dropped).
func (e *ext) flood(h sdk.Host) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("PANTO_UIHOSTILE_N")); err == nil {
		n = v
	}
	go func() {
		bg := context.Background()
		for i := range n {
			_ = h.Notify(bg, "info", fmt.Sprintf("flood notice %d %s", i, strings.Repeat("x", 64)))
		}
		_ = h.SetStatus(bg, "flood", "flood done")
	}()
}

// nagInTheBackground asks 50 confirms one after the other, each as soon
// as the one before is dismissed, from no hook: no hook's bound holds
// it.
func nagInTheBackground(h sdk.Host) {
	bg := context.Background()
	yes := 0
	for i := 1; i <= 50; {
		ok, err := h.Confirm(bg, "Again?", fmt.Sprintf("question %d of 50", i))
		if errors.Is(err, sdk.ErrNoUser) {
			time.Sleep(50 * time.Millisecond) // asked before the front end answers questions
			continue
		}
		if ok {
			yes++
		}
		i++
	}
	_ = h.SetStatus(bg, "nagbg", fmt.Sprintf("nagbg: 50 asked, %d yes", yes))
}

func (e *ext) Tools() []sdk.Tool {
	return []sdk.Tool{{Name: "hostile", Description: "prints the corpus " + oneLine(), Guidance: hostile,
		Run: func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) {
			return sdk.ToolResult{Content: hostile}, nil
		}}}
}

func (e *ext) Commands() []sdk.Command {
	return []sdk.Command{
		{Name: "hx", Usage: "[" + oneLine() + "]", Description: oneLine(),
			Run: func(ctx context.Context, h sdk.Host, _ sdk.CommandRequest) (sdk.CommandResponse, error) {
				_, _ = h.Confirm(ctx, oneLine(), hostile)
				_, _ = h.Select(ctx, oneLine(), strings.Split(strings.TrimSpace(hostile), "\n"))
				_, _ = h.Input(ctx, oneLine(), oneLine())
				return sdk.CommandResponse{Output: hostile}, nil
			}},
		{Name: "nag", Description: "asks again each time it is dismissed",
			Run: func(ctx context.Context, h sdk.Host, _ sdk.CommandRequest) (sdk.CommandResponse, error) {
				for ctx.Err() == nil {
					if yes, err := h.Confirm(ctx, "Now?", "asked again until yes"); err == nil && yes {
						break
					}
				}
				return sdk.CommandResponse{Output: "nag: done"}, nil
			}},
		{Name: "many", Description: "asks a thousand questions at once",
			Run: func(ctx context.Context, h sdk.Host, _ sdk.CommandRequest) (sdk.CommandResponse, error) {
				var wg sync.WaitGroup
				for i := range 1000 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, _ = h.Confirm(ctx, fmt.Sprintf("Question %d?", i), "one of a thousand")
					}()
				}
				wg.Wait()
				return sdk.CommandResponse{Output: "many: done"}, nil
			}},
	}
}

func main() {
	e := &ext{modes: map[string]bool{}}
	for _, m := range strings.Split(os.Getenv("PANTO_UIHOSTILE"), ",") {
		e.modes[strings.TrimSpace(m)] = true
	}
	if err := sdk.Serve(e); err != nil {
		log.Fatal(err)
	}
}
