package extension

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
)

func toolNamesOf(m *Manager) []string {
	var out []string
	for _, t := range m.Tools() {
		out = append(out, t.Name)
	}
	return out
}

func callTool(m *Manager, name, input string) conversation.Block {
	return m.RunTool(context.Background(), conversation.ToolUse("call_1", name, json.RawMessage(input)))
}

// An extension that declares a tool a provider would refuse does not
// start; the others run and their tools work.
func TestInvalidToolFailsStart(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"badtool-name":  `tool "bad name": the name must be 1 to 64 letters, digits, _ or -`,
		"badtool-long":  `tool "` + strings.Repeat("x", 65) + `": the name must be 1 to 64 letters, digits, _ or -`,
		"badtool-empty": `tool "": the name must be 1 to 64 letters, digits, _ or -`,
		"badtool-json":  `tool "bad": the parameters are not valid JSON`,
		"badtool-array": `tool "bad": the parameters are not a JSON object schema`,
		"badtool-type":  `tool "bad": the parameters have "type": "string"; a tool's input schema must have "type": "object"`,
		"badtool-dup":   `tool "fine" is declared twice`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := startHarness(t, nil, specs(name, "tools")...)
			require.Equal(t, []string{"tools"}, h.m.Names(), "the extension with a bad tool is left out")
			msg := h.errs.String()
			require.Equal(t, 1, strings.Count(msg, "panto: "), "reported once: %s", msg)
			require.Contains(t, msg, ErrStart.Error())
			require.Contains(t, msg, pluginPath(name))
			require.Contains(t, msg, "extension "+name+": "+want)
			require.Equal(t, []string{"echo", "panic", "exit", "big", "sleep"}, toolNamesOf(h.m))
			res := callTool(h.m, "echo", `{"a":1}`)
			require.False(t, res.IsError, res.ResultText())
			require.Equal(t, `tools: {"a":1}`, res.ResultText())
		})
	}
}

func TestCheckTool(t *testing.T) {
	t.Parallel()
	for _, params := range []string{``, `{"type":"object"}`, ` {"type":"object","properties":{"a":{"type":"string"}}} `} {
		require.NoError(t, checkTools(toolsFor("ok_name-1", params)), params)
	}
	// The Anthropic API requires "type": "object": without it, every
	// request of the session would fail.
	for _, params := range []string{`{}`, `{"properties":{"a":{"type":"string"}}}`} {
		require.ErrorContains(t, checkTools(toolsFor("ok_name-1", params)), `no "type"`, params)
	}
	require.NoError(t, checkTools(toolsFor(strings.Repeat("a", 64), "")))
	for _, params := range []string{` `, `null`, `"object"`, `{"type":["object"]}`, `{"type":"object"`} {
		require.Error(t, checkTools(toolsFor("x", params)), params)
	}
	for _, name := range []string{"a.b", "a/b", "é", "a b", strings.Repeat("a", 65)} {
		require.Error(t, checkTools(toolsFor(name, "")), name)
	}
}

// Two extensions offering one tool name: the first in load order owns
// it, and the clash is reported once.
func TestDuplicateToolAcrossExtensions(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("tools", "tools-b")...)
	require.Equal(t, []string{"tools", "tools-b"}, h.m.Names(), h.errs.String())
	require.Equal(t, []string{"echo", "panic", "exit", "big", "sleep"}, toolNamesOf(h.m))
	require.Equal(t, []string{"echo", "panic", "exit", "big", "sleep"}, toolNamesOf(h.m))
	res := callTool(h.m, "echo", `{}`)
	require.Equal(t, "tools: {}", res.ResultText())
	msg := h.errs.String()
	require.Equal(t, 1, strings.Count(msg, `tool "echo" is also offered by extension tools, loaded first, which owns it`), msg)
	require.Equal(t, 5, strings.Count(msg, "panto: "), "one line per clashing tool: %s", msg)
}

func toolsFor(name, params string) []*pb.Tool {
	t := &pb.Tool{Name: name}
	if params != "" {
		t.Parameters = []byte(params)
	}
	return []*pb.Tool{t}
}

// A tool whose extension crashes mid-call answers the model with an
// error result; the extension is restarted once, and its tools answer
// again. When it crashes a second time it is stopped for the session, told
// once, and its tools are no longer offered.
func TestToolOwnerCrashesMidCall(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"panic", "exit"} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			h := startHarness(t, nil, specs("tools")...)
			require.Equal(t, []string{"tools"}, h.m.Names(), h.errs.String())
			res := callTool(h.m, tool, `{}`)
			require.Equal(t, conversation.TypeToolResult, res.Type)
			require.Equal(t, "call_1", res.ToolUseID)
			require.True(t, res.IsError)
			require.Contains(t, res.ResultText(), tool+" failed: its extension tools stopped working (it crashed or exited (exit status")
			require.Contains(t, h.errs.String(), "the tools extension stopped (exit status")
			require.Contains(t, h.errs.String(), "restarted it")
			require.NoError(t, h.ext(t, "tools").Disabled(), "the restarted one runs")
			require.Equal(t, "tools: {}", callTool(h.m, "echo", `{}`).ResultText())

			res = callTool(h.m, tool, `{}`)
			require.True(t, res.IsError)
			err := h.ext(t, "tools").Disabled()
			require.Error(t, err)
			require.Contains(t, err.Error(), "crashed or exited")
			msg := h.errs.String()
			require.Equal(t, 1, strings.Count(msg, "stopped again"), msg)
			require.Empty(t, h.m.Tools(), "a stopped extension's tools are not offered")

			res = callTool(h.m, "echo", `{}`)
			require.True(t, res.IsError)
			require.Contains(t, res.ResultText(), `tool "echo" is unavailable: its extension tools is stopped for this session`)
			require.Equal(t, msg, h.errs.String(), "the error is shown once")
		})
	}
}

// A call past tool_timeout answers with an error result naming the
// deadline; the extension stays.
func TestToolTimeout(t *testing.T) {
	t.Parallel()
	h := startHarness(t, func(o *Options) { o.ToolTimeout = 300 * time.Millisecond }, specs("tools")...)
	require.Equal(t, []string{"tools"}, h.m.Names(), h.errs.String())
	t0 := time.Now()
	res := callTool(h.m, "sleep", `{}`)
	require.Less(t, time.Since(t0), 5*time.Second)
	require.True(t, res.IsError)
	require.Equal(t, "sleep did not finish within 300ms", res.ResultText())
	require.NoError(t, h.ext(t, "tools").Disabled(), "a slow tool is not a broken extension")
	res = callTool(h.m, "echo", `{}`)
	require.False(t, res.IsError, res.ResultText())
	require.Empty(t, h.errs.String())
}

// An input that is not a JSON object is refused by the host: the model
// reads why, and the extension is not called.
func TestToolInputNotAnObject(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("tools")...)
	require.Equal(t, []string{"tools"}, h.m.Names(), h.errs.String())
	calls := countCalls(h.ext(t, "tools"))
	for _, input := range []string{`[1,2]`, `"text"`, `42`, `null`, `{"a":`} {
		res := callTool(h.m, "echo", input)
		require.True(t, res.IsError, input)
		require.Equal(t, "invalid arguments for echo: the input is not a JSON object", res.ResultText(), input)
	}
	require.Zero(t, calls.tools.Load(), "no call reached the extension")
	res := callTool(h.m, "echo", `{"a":1}`)
	require.False(t, res.IsError, res.ResultText())
	require.Equal(t, int32(1), calls.tools.Load())
	require.NoError(t, h.ext(t, "tools").Disabled())
	require.Empty(t, h.errs.String())
}

// When the owner of a tool name is disabled, a second extension offering
// that name owns it: it is offered, and calls reach it.
func TestToolOwnerFallsBackWhenDisabled(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("tools", "tools-b")...)
	require.Equal(t, []string{"tools", "tools-b"}, h.m.Names(), h.errs.String())
	require.Equal(t, "tools: {}", callTool(h.m, "echo", `{}`).ResultText())

	res := callTool(h.m, "exit", `{}`)
	require.True(t, res.IsError)
	require.Contains(t, res.ResultText(), "exit failed: its extension tools stopped working")
	require.NoError(t, h.ext(t, "tools").Disabled(), "restarted once")
	res = callTool(h.m, "exit", `{}`)
	require.True(t, res.IsError)
	require.Error(t, h.ext(t, "tools").Disabled(), "stopped after the second crash")

	require.Equal(t, []string{"echo", "panic", "exit", "big", "sleep"}, toolNamesOf(h.m), "tools-b's tools are offered now")
	res = callTool(h.m, "echo", `{"x":1}`)
	require.False(t, res.IsError, res.ResultText())
	require.Equal(t, `tools-b: {"x":1}`, res.ResultText())
	require.Equal(t, 1, strings.Count(h.errs.String(), "stopped it for this session"), h.errs.String())
}

// GetMessages gives an API v1 extension messages in the shape its SDK
// reads (System blocks), and a v2 one the session log's one shape.
func TestGetMessagesShapeByAPIVersion(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	require.NoError(t, rec.EditSystem("x", Edit{Mode: conversation.ModeAppend, Text: "seed"}))
	for _, tc := range []struct {
		version int
		want    string
	}{
		{1, `[{"role":"system","content":[{"type":"system","text":"seed","mode":"append"}]}]`},
		{2, `[{"role":"system","mode":"append","content":[{"type":"text","text":"seed"}]}]`},
	} {
		x := &Ext{desc: Info{Name: "x", APIVersion: tc.version}}
		x.ready.Store(true)
		resp, err := (&hostServer{ext: x, rec: rec}).GetMessages(context.Background(), nil)
		require.NoError(t, err)
		require.JSONEq(t, tc.want, string(resp.GetMessages()), "API v%d", tc.version)
	}
}

// The guidance of a tool another extension owns (it loaded first, and
// the model is offered that one) is not recorded: the prompt describes
// only the tools offered.
func TestGuidanceOfShadowedToolsIsLeftOut(t *testing.T) {
	t.Parallel()
	ext := func(name string, tools ...*pb.Tool) *Ext {
		return &Ext{info: &pb.InitResponse{Name: name, Tools: tools}}
	}
	first := ext("first", &pb.Tool{Name: "x", Guidance: "first's x"})
	second := ext("second", &pb.Tool{Name: "x", Guidance: "second's x"}, &pb.Tool{Name: "y", Guidance: "second's y"})
	m := &Manager{exts: []*Ext{first, second}}
	rec := newRecorder()
	m.RecordGuidance(rec)
	prompt := strings.Join(conversation.Texts(rec.EffectiveSystem()), "\n")
	require.Contains(t, prompt, "first's x")
	require.Contains(t, prompt, "second's y")
	require.NotContains(t, prompt, "second's x")
}
