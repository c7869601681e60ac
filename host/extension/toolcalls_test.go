package extension

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/sdk"
)

// A result over the protocol's 64 MiB cannot be carried: the call ran,
// and its result says so, with the size; the extension stays.
func TestToolResultOverTheMessageLimit(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("tools")...)
	require.Equal(t, []string{"tools"}, h.m.Names(), h.errs.String())
	res := callTool(h.m, "big", `{"bytes":70000000}`)
	require.True(t, res.IsError)
	t.Log(res.ResultText())
	require.NotContains(t, res.ResultText(), "not run")
	require.Contains(t, res.ResultText(), "big ran, but its result is too large to carry")
	require.Contains(t, res.ResultText(), "70000")
	require.NoError(t, h.ext(t, "tools").Disabled())
	res = callTool(h.m, "big", `{"bytes":10}`)
	require.False(t, res.IsError, res.ResultText())
}

// requiredSpec is the named test plugin, required as a safeguard the user
// installed is.
func requiredSpec(name string) Spec {
	return Spec{Path: pluginPath(name), Source: "user layer", Required: true}
}

// A required extension that did not start (here: it never answers Init,
// so the start times out) blocks every tool call, with a result that
// names it, says why and how to go on; the tool does not run. Not
// required, the same failure leaves the tools working.
func TestMissingRequiredExtensionBlocksToolCalls(t *testing.T) {
	t.Parallel()
	for _, required := range []bool{true, false} {
		t.Run(fmt.Sprint("required=", required), func(t *testing.T) {
			t.Parallel()
			slow := requiredSpec("initsleep")
			slow.Required = required
			h := startHarness(t, func(o *Options) { o.StartTimeout = 500 * time.Millisecond }, slow, specs("tools")[0])
			require.Equal(t, []string{"tools"}, h.m.Names())
			res := callTool(h.m, "echo", `{"x":1}`)
			if !required {
				require.False(t, res.IsError, res.ResultText())
				require.Empty(t, h.m.Missing())
				return
			}
			require.True(t, res.IsError)
			text := res.ResultText()
			for _, want := range []string{
				"blocked: the extension initsleep (" + pluginPath("initsleep") + ", installed in the user layer) is a required safeguard and is not running",
				"did not answer Init within 500ms",
				"restart panto",
				`add "initsleep" to disabled_extensions`,
			} {
				require.Contains(t, text, want)
			}
			require.NotContains(t, text, "tools: {", "the tool did not run")
			require.Contains(t, h.errs.String(), "it is required (installed in the user layer), so panto blocks every tool call until it runs")
			require.Len(t, h.m.Missing(), 1)
		})
	}
}

// Disabling a missing required extension in the config is the user's
// choice: tools run again.
func TestDisabledMissingRequiredExtensionIsNotMissing(t *testing.T) {
	t.Parallel()
	h := startHarness(t, func(o *Options) { o.StartTimeout = 500 * time.Millisecond }, requiredSpec("initcrash"), specs("tools")[0])
	require.True(t, callTool(h.m, "echo", `{}`).IsError)
	h.m.Disable([]string{"initcrash"})
	res := callTool(h.m, "echo", `{}`)
	require.False(t, res.IsError, res.ResultText())
}

// A required extension that lost its name to one loaded before it is
// not running either: that other one is not the safeguard installed.
func TestRequiredExtensionShadowedByNameIsMissing(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("tools")[0], requiredSpec("tools"))
	require.Equal(t, []string{"tools"}, h.m.Names())
	res := callTool(h.m, "echo", `{}`)
	require.True(t, res.IsError)
	require.Contains(t, res.ResultText(), "another extension already has that name")
	h.m.Disable([]string{"tools"})
	require.Empty(t, h.m.Missing())
}

// The user interrupting a call of an extension built on the SDK: the
// call is cancelled through tool_cancel and what the tool answers is its
// result — not a guess of "interrupted". A tool that ignores the cancel
// is given up on after toolCancelGrace, and the result says that what
// it did is not known.
func TestInterruptedCallRecordsTheToolsOwnAnswer(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("tools")...)
	require.Contains(t, h.ext(t, "tools").Info().Events, "tool_cancel", "an SDK extension with tools takes tool_cancel")
	for _, tc := range []struct {
		input, want string
		isErr       bool
		took        time.Duration
	}{
		{`{}`, "slept until: " + sdk.ErrCallCancelled.Error(), false, toolCancelGrace},
		{`{"ignore":true}`, "interrupted by the user while running; the tools extension did not answer within 3s of the interrupt, so whether sleep had any effect is not known", true, time.Minute},
	} {
		t.Run(tc.input, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			start := time.Now()
			res := h.m.RunTool(ctx, conversation.ToolUse("call_"+tc.input, "sleep", json.RawMessage(tc.input)))
			require.Equal(t, tc.want, res.ResultText())
			require.Equal(t, tc.isErr, res.IsError)
			require.Less(t, time.Since(start), tc.took+200*time.Millisecond+5*time.Second)
			require.NoError(t, h.ext(t, "tools").Disabled())
		})
	}
}

// A call the user interrupts that gives no answer of its own keeps the
// output it sent as progress: that is its result, marked interrupted,
// not a bare "interrupted". The progress reached the session as it
// came, for the call it belongs to; one for a call not running is
// dropped.
func TestInterruptedCallKeepsItsProgress(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("tools")...)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	res := h.m.RunTool(ctx, conversation.ToolUse("call_p", "sleep", json.RawMessage(`{"ignore":true,"progress":"starting\n"}`)))
	require.True(t, res.IsError)
	text := res.ResultText()
	require.Regexp(t, `^starting\n\[interrupted by the user after [0-9.]+m?s, while running; this is its output until then; `+
		`the tools extension did not answer within 3s of the interrupt, so whether sleep had any effect is not known\]$`, text)
	h.rec.mu.Lock()
	told := append([]string(nil), h.rec.told...)
	h.rec.mu.Unlock()
	require.Equal(t, []string{"tools:progress:call_p=starting\n"}, told)
	require.NoError(t, h.ext(t, "tools").Disabled())

	// Sent for a call that is not running: nothing reaches the session.
	res = h.m.RunTool(context.Background(), conversation.ToolUse("call_q", "echo", json.RawMessage(`{}`)))
	require.False(t, res.IsError)
	_, err := (&hostServer{ext: h.ext(t, "tools"), rec: h.rec}).ToolProgress(context.Background(), &pb.ToolProgressRequest{ToolCallId: "call_q", Text: "late"})
	require.NoError(t, err)
	h.rec.mu.Lock()
	require.Len(t, h.rec.told, 1)
	h.rec.mu.Unlock()
}

// An extension that dies as the user interrupts its call cannot answer
// it: the output it sent before is still the call's result, kept by
// panto, marked interrupted.
func TestInterruptedCallOfADeadExtensionKeepsItsProgress(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("tools")...)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	res := h.m.RunTool(ctx, conversation.ToolUse("call_d", "sleep", json.RawMessage(`{"die":true,"progress":"starting\n"}`)))
	require.True(t, res.IsError)
	require.Regexp(t, `^starting\n\[interrupted by the user after [0-9.]+m?s, while running; this is its output until then; `+
		`its extension tools stopped working \(.+\) before it answered, so whether sleep had any effect is not known\]$`, res.ResultText())
	require.NoError(t, h.ext(t, "tools").Disabled(), "a dead extension is restarted (once)")
	require.Contains(t, h.errs.String(), "the tools extension stopped (")
	require.Contains(t, h.errs.String(), "restarted it")
}
