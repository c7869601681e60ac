package extension

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sdk/pb"
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
			require.Equal(t, []string{"echo", "panic", "exit", "sleep"}, toolNamesOf(h.m))
			res := callTool(h.m, "echo", `{"a":1}`)
			require.False(t, res.IsError, res.ResultText())
			require.Equal(t, `tools: {"a":1}`, res.ResultText())
		})
	}
}

func TestCheckTool(t *testing.T) {
	t.Parallel()
	for _, params := range []string{``, `{}`, `{"type":"object"}`, ` {"properties":{"a":{"type":"string"}}} `} {
		require.NoError(t, checkTools(toolsFor("ok_name-1", params)), params)
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
	require.Equal(t, []string{"echo", "panic", "exit", "sleep"}, toolNamesOf(h.m))
	require.Equal(t, []string{"echo", "panic", "exit", "sleep"}, toolNamesOf(h.m))
	res := callTool(h.m, "echo", `{}`)
	require.Equal(t, "tools: {}", res.ResultText())
	msg := h.errs.String()
	require.Equal(t, 1, strings.Count(msg, `tool "echo" is also offered by extension tools, loaded first, which owns it`), msg)
	require.Equal(t, 4, strings.Count(msg, "panto: "), "one line per clashing tool: %s", msg)
}

func toolsFor(name, params string) []*pb.Tool {
	t := &pb.Tool{Name: name}
	if params != "" {
		t.Parameters = []byte(params)
	}
	return []*pb.Tool{t}
}
