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

// Tools returns the extension's tools. New checked them as panto would
// offer them: a valid and unique name, a Run function, and Parameters
// (when set) a JSON object schema.
func (h *Harness) Tools() []sdk.Tool { return h.tools }

func checkTools(t testing.TB, ext sdk.Extension) []sdk.Tool {
	t.Helper()
	tp, ok := ext.(sdk.ToolProvider)
	if !ok {
		return nil
	}
	tools := tp.Tools()
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
// see it. An unknown name is an error.
func (h *Harness) CallTool(name string, input json.RawMessage) (sdk.ToolResult, error) {
	for _, t := range h.Tools() {
		if t.Name != name {
			continue
		}
		var res sdk.ToolResult
		err := h.hookWithin(ToolTimeout, "tool "+name, "tool_timeout; panto would answer the model with an error", func(ctx context.Context) error {
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
