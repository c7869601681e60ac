package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sdk"
)

// Tools returns the extension's tools: what it declared (New and Init
// checked them as panto would offer them: a valid and unique name, a Run
// function, and Parameters, when set, a JSON object schema), or the last
// set it gave Host.SetTools.
func (h *Harness) Tools() []sdk.Tool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tools
}

// Init starts the extension as panto does: when it is an sdk.Initializer,
// its Init runs with config as Host.Info().Config (nil: none), under the
// hook deadline, and its tools are read again afterwards. The error is
// Init's, as panto would show it.
func (h *Harness) Init(config json.RawMessage) error {
	h.mu.Lock()
	h.config = config
	h.mu.Unlock()
	if x, ok := h.ext.(sdk.Initializer); ok {
		if err := h.hook("Init", func(ctx context.Context) error { return x.Init(ctx, h.host) }); err != nil {
			return err
		}
	}
	if tp, ok := h.ext.(sdk.ToolProvider); ok {
		tools := checkTools(h.t, tp.Tools())
		h.mu.Lock()
		h.tools = tools
		h.mu.Unlock()
	}
	return nil
}

// ToolSet is one call of Host.SetTools: the tools given and why.
type ToolSet struct {
	Tools  []sdk.Tool
	Reason string
}

// ToolSets returns the extension's Host.SetTools calls, in order. The
// harness applies each at once (Tools returns it); panto applies one at
// the next turn boundary.
func (h *Harness) ToolSets() []ToolSet {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ToolSet(nil), h.toolSets...)
}

func (f *fakeHost) SetTools(ctx context.Context, tools []sdk.Tool, reason string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := toolsErr(tools); err != nil {
		return fmt.Errorf("panto host: set tools: %w", err)
	}
	h := f.h
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tools = append([]sdk.Tool(nil), tools...)
	h.toolSets = append(h.toolSets, ToolSet{Tools: h.tools, Reason: reason})
	return nil
}

// toolsErr is why panto would refuse tools, or nil.
func toolsErr(tools []sdk.Tool) error {
	seen := map[string]bool{}
	for _, tool := range tools {
		if err := rules.CheckTool(tool.Name, tool.Parameters); err != nil {
			return fmt.Errorf("tool %q: %w", tool.Name, err)
		}
		if seen[tool.Name] {
			return fmt.Errorf("tool %q is offered twice", tool.Name)
		}
		if tool.Run == nil {
			return fmt.Errorf("tool %q has no Run", tool.Name)
		}
		seen[tool.Name] = true
	}
	return nil
}

func checkTools(t testing.TB, tools []sdk.Tool) []sdk.Tool {
	t.Helper()
	seen := map[string]bool{}
	for _, tool := range tools {
		// The rules panto applies when the extension starts.
		if err := rules.CheckTool(tool.Name, tool.Parameters); err != nil {
			t.Fatalf("sdktest: tool %q: %v; panto would refuse to load the extension", tool.Name, err)
		}
		switch {
		case seen[tool.Name]:
			t.Fatalf("sdktest: tool %q is offered twice", tool.Name)
		case tool.Run == nil:
			t.Fatalf("sdktest: tool %q has no Run", tool.Name)
		}
		seen[tool.Name] = true
	}
	return tools
}

// ToolTimeout is the deadline CallTool runs a tool under: panto's default
// tool_timeout.
const ToolTimeout = 15 * time.Minute

// CallTool runs the named tool with input under ToolTimeout, as panto
// does; a returned error becomes an is_error result, as the model would
// see it. An unknown name is an error. What the tool sends with
// sdk.Progress meanwhile is kept (Progress).
func (h *Harness) CallTool(name string, input json.RawMessage) (sdk.ToolResult, error) {
	for _, t := range h.Tools() {
		if t.Name != name {
			continue
		}
		var res sdk.ToolResult
		err := h.hookWithin(ToolTimeout, "tool "+name, "tool_timeout; panto would answer the model with an error", func(ctx context.Context) error {
			ctx = sdk.WithProgress(ctx, func(text string) {
				h.mu.Lock()
				defer h.mu.Unlock()
				h.progress = append(h.progress, Progress{Tool: name, Text: text})
			})
			r, err := t.Run(ctx, h.host, sdk.ToolCall{ID: "sdktest_call", Name: name, Input: input})
			if err != nil {
				r = sdk.ToolResult{Content: err.Error(), IsError: true}
			}
			res = r
			return nil
		})
		return res, err
	}
	return sdk.ToolResult{}, fmt.Errorf("sdktest: unknown tool %q", name)
}

// Progress is one piece of a tool call's output the tool sent with
// sdk.Progress while it ran.
type Progress struct {
	// Tool is the tool's name.
	Tool string
	Text string
}

// Progress returns every piece of progress the tools sent in CallTool,
// in order, one per sdk.Progress call (panto gathers them into fewer
// sends, and shows the last lines while the call runs).
func (h *Harness) Progress() []Progress {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Progress(nil), h.progress...)
}

// ToolCall delivers the tool_call event; a zero decision when the
// extension does not watch tool calls.
func (h *Harness) ToolCall(call sdk.ToolCall) (sdk.ToolCallDecision, error) {
	var d sdk.ToolCallDecision
	x, ok := h.ext.(sdk.ToolCallWatcher)
	if !ok {
		return d, nil
	}
	err := h.hook("ToolCall", func(ctx context.Context) error {
		var err error
		d, err = x.ToolCall(ctx, h.host, call)
		return err
	})
	return d, err
}

// ToolResult delivers the tool_result event.
func (h *Harness) ToolResult(ev sdk.ToolResultEvent) (sdk.ToolResultChange, error) {
	var c sdk.ToolResultChange
	x, ok := h.ext.(sdk.ToolResultWatcher)
	if !ok {
		return c, nil
	}
	err := h.hook("ToolResult", func(ctx context.Context) error {
		var err error
		c, err = x.ToolResult(ctx, h.host, ev)
		return err
	})
	return c, err
}

// BeforeRequest delivers the before_request event.
func (h *Harness) BeforeRequest(ev sdk.BeforeRequestEvent) (sdk.BeforeRequestResponse, error) {
	var r sdk.BeforeRequestResponse
	x, ok := h.ext.(sdk.BeforeRequester)
	if !ok {
		return r, nil
	}
	err := h.hook("BeforeRequest", func(ctx context.Context) error {
		var err error
		r, err = x.BeforeRequest(ctx, h.host, ev)
		return err
	})
	return r, err
}

// The workspace calls: sdktest's panto offers no workspace (HostInfo's
// Workspace is empty), so each answers sdk.ErrUnavailable, as panto does
// outside an editor.

func (f *fakeHost) ReadTextFile(context.Context, string, int, int) (string, error) {
	return "", sdk.ErrUnavailable
}

func (f *fakeHost) WriteTextFile(context.Context, string, string) error { return sdk.ErrUnavailable }

func (f *fakeHost) RunInTerminal(context.Context, sdk.TerminalCommand) (sdk.TerminalResult, error) {
	return sdk.TerminalResult{}, sdk.ErrUnavailable
}
