// Command sdkplug is a test extension built on sdk.Serve. What it does is
// chosen by the name it is run under (os.Args[0]'s base name up to the
// first "-"), so one binary serves every test through symlinks; the full
// base name is its extension name.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/panto-dev/panto/sdk"
)

type ext struct {
	sdk.Base
	behaviour string
	name      string // the whole base name: the extension's name
}

func (e *ext) Describe() sdk.Info {
	return sdk.Info{Version: "0.0.1", Description: "test extension (" + e.behaviour + ")"}
}

func (e *ext) SessionStart(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	switch e.behaviour {
	case "happy":
		for _, f := range []func() error{
			func() error { return h.AddSystemMessage(ctx, "one") },
			func() error { return h.AddSystemMessage(ctx, "two") },
			func() error { return h.ReplaceSystemMessage(ctx, "three") },
		} {
			if err := f(); err != nil {
				return sdk.SessionStartResponse{}, err
			}
		}
	case "barereplace":
		if err := h.ReplaceSystemMessage(ctx, "kept sections"); err != nil {
			return sdk.SessionStartResponse{}, err
		}
		return sdk.SessionStartResponse{}, h.ReplaceSystemMessage(ctx, "bare", sdk.Bare())
	case "panic", "sigkill", "exit", "hang":
		crash(e.behaviour)
	case "stdouthook":
		fmt.Println("PRINTED-IN-HOOK")
		return sdk.SessionStartResponse{}, h.AddSystemMessage(ctx, "still here")
	case "bg":
		go func() {
			for i := range 5 {
				time.Sleep(20 * time.Millisecond)
				if err := h.AddSystemMessage(context.Background(), fmt.Sprintf("bg %d", i)); err != nil {
					h.Logger().Error("background edit", "error", err)
				}
			}
		}()
	case "bgspam":
		// Edits from the background until the host stops answering.
		go func() {
			for i := 0; ; i++ {
				if err := h.AddSystemMessage(context.Background(), fmt.Sprintf("spam %d", i)); err != nil {
					return
				}
			}
		}()
	case "pid":
		return sdk.SessionStartResponse{}, h.AppendData(ctx, map[string]int{"pid": os.Getpid()})
	case "stdin":
		return sdk.SessionStartResponse{}, h.AppendData(ctx, readStdin())
	case "bench":
		return sdk.SessionStartResponse{}, h.AddSystemMessage(ctx, "x")
	}
	return sdk.SessionStartResponse{}, nil
}

func (e *ext) BeforeTurn(context.Context, sdk.Host, sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	switch e.behaviour {
	case "panic", "sigkill", "exit", "hang":
		crash(e.behaviour)
	}
	return sdk.BeforeTurnResponse{}, nil
}

func (e *ext) Commands() []sdk.Command {
	if e.behaviour != "happy" {
		return nil
	}
	return []sdk.Command{{
		Name:        "greet",
		Description: "greets and records it",
		Usage:       "NAME",
		Run: func(ctx context.Context, h sdk.Host, req sdk.CommandRequest) (sdk.CommandResponse, error) {
			if err := h.AddSystemMessage(ctx, "greeted "+req.Args); err != nil {
				return sdk.CommandResponse{}, err
			}
			return sdk.CommandResponse{Output: "hello " + req.Args}, nil
		},
	}}
}

// Tools offers, for "tools", a tool per way to end a call: echo answers
// with the extension's name and the input, panic and exit crash the
// process, sleep waits for the call's deadline. For "badtool", a valid
// tool and one made invalid the way the name's suffix says.
func (e *ext) Tools() []sdk.Tool {
	switch e.behaviour {
	case "tools":
		return []sdk.Tool{
			{Name: "echo", Description: "echoes its input", Parameters: json.RawMessage(`{"type":"object"}`),
				Run: func(_ context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
					return sdk.ToolResult{Content: e.name + ": " + string(call.Input)}, nil
				}},
			{Name: "panic", Description: "panics", Run: func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) {
				crash("panic")
				return sdk.ToolResult{}, nil
			}},
			{Name: "exit", Description: "exits", Run: func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) {
				crash("exit")
				return sdk.ToolResult{}, nil
			}},
			{Name: "big", Description: "answers input.bytes bytes", Parameters: json.RawMessage(`{"type":"object"}`),
				Run: func(_ context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
					var in struct{ Bytes int }
					if err := json.Unmarshal(call.Input, &in); err != nil {
						return sdk.ToolResult{}, err
					}
					return sdk.ToolResult{Content: strings.Repeat("x", in.Bytes)}, nil
				}},
			{Name: "sleep", Description: "waits for its deadline (input.ignore: ignores its cancel; input.progress: sends it as progress first; input.die: is SIGKILLed by its cancel)", Run: func(ctx context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
				var in struct {
					Ignore   bool
					Progress string
					Die      bool
				}
				_ = json.Unmarshal(call.Input, &in)
				sdk.Progress(ctx, in.Progress)
				done := ctx.Done()
				if in.Ignore {
					done = nil
				}
				select {
				case <-done:
					if in.Die {
						crash("sigkill")
					}
					return sdk.ToolResult{Content: "slept until: " + context.Cause(ctx).Error()}, nil
				case <-time.After(time.Minute):
				}
				return sdk.ToolResult{Content: "slept"}, nil
			}},
		}
	case "badtool":
		run := func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) { return sdk.ToolResult{}, nil }
		tools := []sdk.Tool{{Name: "fine", Description: "a valid tool", Run: run}}
		bad := sdk.Tool{Name: "bad", Description: "an invalid tool", Run: run}
		switch _, variant, _ := strings.Cut(e.name, "-"); variant {
		case "name":
			bad.Name = "bad name"
		case "long":
			bad.Name = strings.Repeat("x", 65)
		case "empty":
			bad.Name = ""
		case "json":
			bad.Parameters = json.RawMessage(`{"type":`)
		case "array":
			bad.Parameters = json.RawMessage(`[{"type":"object"}]`)
		case "type":
			bad.Parameters = json.RawMessage(`{"type":"string"}`)
		case "dup":
			bad.Name = "fine"
		}
		return append(tools, bad)
	}
	return nil
}

func crash(how string) {
	switch how {
	case "panic":
		panic("test extension panics on purpose")
	case "sigkill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	case "exit":
		os.Exit(3)
	case "hang":
		time.Sleep(10 * time.Second)
	}
}

// stdinResult is what the stdin behaviour reports through AppendData.
type stdinResult struct {
	Read string `json:"read"`
	EOF  bool   `json:"eof"`
	Err  string `json:"err,omitempty"`
}

func readStdin() stdinResult {
	ch := make(chan stdinResult, 1)
	go func() {
		b, err := io.ReadAll(os.Stdin)
		r := stdinResult{Read: string(b), EOF: err == nil}
		if err != nil {
			r.Err = err.Error()
		}
		ch <- r
	}()
	select {
	case r := <-ch:
		return r
	case <-time.After(time.Second):
		return stdinResult{Err: "blocked: stdin did not reach EOF"}
	}
}

// watcher records each system_prompt_changed event it is told of as an
// extension_data entry, in the order it was told.
type watcher struct{ sdk.Base }

func (watcher) SystemPromptChanged(ctx context.Context, h sdk.Host, ev sdk.SystemPromptChangedEvent) (sdk.SystemPromptChangedResponse, error) {
	return sdk.SystemPromptChangedResponse{}, h.AppendData(ctx, map[string]string{"by": ev.By, "text": ev.Text})
}

// restarter is a tool_call watcher that sets a section at session_start
// and offers a tool, whoami, answering with its pid: what a restart must
// bring back. It blocks a call whose input holds "block".
type restarter struct{ sdk.Base }

func (restarter) SessionStart(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	return sdk.SessionStartResponse{}, h.SetSection(ctx, "state", "watching tool calls")
}

func (restarter) ToolCall(_ context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolCallDecision, error) {
	if strings.Contains(string(call.Input), "block") {
		return sdk.ToolCallDecision{Block: true, Reason: "asked to"}, nil
	}
	return sdk.ToolCallDecision{}, nil
}

func (restarter) Tools() []sdk.Tool {
	return []sdk.Tool{{Name: "whoami", Description: "answers with its pid", Guidance: "Call whoami to learn the pid.",
		Run: func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) {
			return sdk.ToolResult{Content: strconv.Itoa(os.Getpid())}, nil
		}}}
}

func main() {
	name := filepath.Base(os.Args[0])
	behaviour, _, _ := strings.Cut(name, "-")
	if f := os.Getenv("PANTO_TEST_PIDFILE"); f != "" {
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, errors.New("write pid file: "+err.Error()))
			os.Exit(1)
		}
	}
	if behaviour == "stdoutearly" {
		fmt.Println("hello from main, before the handshake")
	}
	if behaviour == "restart" {
		if err := sdk.Serve(&restarter{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	if behaviour == "watch" {
		if err := sdk.Serve(&watcher{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := sdk.Serve(&ext{behaviour: behaviour, name: name}); err != nil {
		log.Fatal(err)
	}
}
