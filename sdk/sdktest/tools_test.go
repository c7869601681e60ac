package sdktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

type toolExt struct{ sdk.Base }

func (*toolExt) Tools() []sdk.Tool {
	return []sdk.Tool{{
		Name:       "shout",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Run: func(_ context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(call.Input, &in); err != nil || in.Text == "" {
				return sdk.ToolResult{}, errors.New("text is required")
			}
			return sdk.ToolResult{Content: in.Text + "!"}, nil
		},
	}}
}

func (*toolExt) ToolCall(_ context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolCallDecision, error) {
	return sdk.ToolCallDecision{Block: call.Name == "rm", Reason: "no"}, nil
}

func (*toolExt) BeforeRequest(_ context.Context, _ sdk.Host, ev sdk.BeforeRequestEvent) (sdk.BeforeRequestResponse, error) {
	return sdk.BeforeRequestResponse{Narrow: ev.Step > 1, Tools: []string{"shout"}}, nil
}

func TestTools(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &toolExt{})
	require.Len(t, h.Tools(), 1)
	res, err := h.CallTool("shout", json.RawMessage(`{"text":"hi"}`))
	require.NoError(t, err)
	require.Equal(t, sdk.ToolResult{Content: "hi!"}, res)
	res, err = h.CallTool("shout", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Equal(t, sdk.ToolResult{Content: "text is required", IsError: true}, res, "an error is a result the model reads")
	_, err = h.CallTool("nope", nil)
	require.ErrorContains(t, err, `unknown tool "nope"`)

	d, err := h.ToolCall(sdk.ToolCall{Name: "rm"})
	require.NoError(t, err)
	require.Equal(t, sdk.ToolCallDecision{Block: true, Reason: "no"}, d)
	r, err := h.BeforeRequest(sdk.BeforeRequestEvent{Tools: []string{"shout", "read"}, Step: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"shout"}, r.Tools)
	c, err := h.ToolResult(sdk.ToolResultEvent{})
	require.NoError(t, err)
	require.False(t, c.Amend, "not a tool_result watcher: no change")
}

type progressExt struct{ sdk.Base }

func (*progressExt) Tools() []sdk.Tool {
	return []sdk.Tool{{
		Name: "build",
		Run: func(ctx context.Context, _ sdk.Host, _ sdk.ToolCall) (sdk.ToolResult, error) {
			sdk.Progress(ctx, "compiling\n")
			sdk.Progress(ctx, "linking\n")
			return sdk.ToolResult{Content: "compiling\nlinking\nbuilt"}, nil
		},
	}}
}

// The harness shows the progress a tool sent while it ran, piece by
// piece.
func TestToolProgress(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &progressExt{})
	require.Empty(t, h.Progress())
	res, err := h.CallTool("build", nil)
	require.NoError(t, err)
	require.Equal(t, "compiling\nlinking\nbuilt", res.Content)
	require.Equal(t, []sdktest.Progress{{Tool: "build", Text: "compiling\n"}, {Tool: "build", Text: "linking\n"}}, h.Progress())
}
