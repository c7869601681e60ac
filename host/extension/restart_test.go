package extension

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Restarted is told to the fake session as a notice line.
func (r *recorder) Restarted(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.told = append(r.told, "restarted:"+name)
}

func (r *recorder) Told() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.told...)
}

// An extension whose process is killed while the session runs is
// restarted once: the next call is answered (by the new process), its
// tools and section are back and its tool_call hook checks calls again.
// Killed a second time it is stopped for the session: calls are blocked,
// in plain words that say what to do, its section and tools are gone; the
// user's /extensions disable lets calls through again.
func TestKilledExtensionRestartsOnceThenStops(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("restart")...)
	require.Equal(t, []string{"restart"}, h.m.Names(), h.errs.String())
	h.sessionStart()
	require.Equal(t, []Section{{Key: "state", Text: "watching tool calls"}}, h.rec.Sections("restart"))
	require.Equal(t, []string{"whoami"}, toolNamesOf(h.m))
	first := callTool(h.m, "whoami", `{}`)
	require.False(t, first.IsError, first.ResultText())
	pid1 := h.ext(t, "restart").startedPID()
	require.Equal(t, first.ResultText(), itoa(pid1))

	// Killed: the very next call is answered, by the restarted process.
	killPid(t, pid1)
	res := callTool(h.m, "whoami", `{}`)
	require.False(t, res.IsError, res.ResultText())
	waitFor(t, 10*time.Second, "the restart notice", func() bool {
		return strings.Contains(h.errs.String(), "the restart extension stopped (signal: killed); restarted it")
	})
	require.Equal(t, 1, strings.Count(h.errs.String(), "restarted it"), h.errs.String())
	pid2 := h.ext(t, "restart").startedPID()
	require.NotEqual(t, pid1, pid2)
	res = callTool(h.m, "whoami", `{}`)
	require.False(t, res.IsError, res.ResultText())
	require.Equal(t, itoa(pid2), res.ResultText(), "the new process answers")
	require.Equal(t, []string{"whoami"}, toolNamesOf(h.m), "its tools are offered again")
	require.Equal(t, []string{"restart"}, h.m.Names())
	require.Contains(t, h.rec.Told(), "restarted:restart", "the session is told, to record its tools and guidance")
	waitFor(t, 5*time.Second, "session_start told again", func() bool {
		return len(h.rec.Sections("restart")) == 1
	})
	require.Equal(t, []Section{{Key: "state", Text: "watching tool calls"}}, h.rec.Sections("restart"), "its section is there")
	require.Len(t, editsBy(h.rec.Edits(), "restart"), 1, "the section re-asserted unchanged records nothing")
	blocked := callTool(h.m, "whoami", `{"x":"block"}`)
	require.True(t, blocked.IsError)
	require.Equal(t, "blocked by the restart extension: asked to", blocked.ResultText(), "it checks calls again")

	// Killed again: stopped for the session.
	killPid(t, pid2)
	waitFor(t, 10*time.Second, "the stop notice", func() bool {
		return strings.Contains(h.errs.String(), "stopped again")
	})
	msg := h.errs.String()
	require.Contains(t, msg, "the restart extension stopped again (signal: killed); it had been restarted once already, so panto stopped it for this session")
	require.Contains(t, msg, "as it checks tool calls, panto runs none until it is back")
	require.Contains(t, msg, "/reload starts them again")
	require.Contains(t, msg, "/extensions disable restart goes on without it for this session")
	require.Equal(t, 1, strings.Count(msg, "restarted it"), "no second restart")
	require.Empty(t, h.m.Names())
	require.Empty(t, h.m.Tools(), "its tools are not offered")
	require.Empty(t, h.rec.Sections("restart"), "its section left the prompt")
	res = callTool(h.m, "whoami", `{}`)
	require.True(t, res.IsError)
	text := res.ResultText()
	require.Contains(t, text, "blocked: the restart extension checks tool calls and is stopped for this session (it crashed or exited (signal: killed))")
	require.Contains(t, text, "/reload")
	require.Contains(t, text, "/extensions disable restart")
	require.NotContains(t, text, "transport")
	states := h.m.States()
	require.Len(t, states, 1)
	require.False(t, states[0].Running)
	require.Contains(t, states[0].String(), "stopped for this session; checks tool calls, so no tool call runs until it is back")

	// The user goes on without it: it no longer blocks.
	require.NoError(t, h.m.DisableForSession("restart"))
	res = callTool(h.m, "whoami", `{}`)
	require.True(t, res.IsError)
	require.NotContains(t, res.ResultText(), "blocked")
	require.Contains(t, res.ResultText(), `tool "whoami" is unavailable`)
	require.Contains(t, h.m.States()[0].String(), "disabled for this session by /extensions disable")
	require.ErrorIs(t, h.m.DisableForSession("nosuch"), ErrNoExtension)
}

func itoa(n int) string { return strconv.Itoa(n) }

// A required extension that did not start blocks every call until the
// user goes on without it for the session (/extensions disable), as the
// block's text says.
func TestDisableForSessionLetsCallsPastAMissingRequiredOne(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, Spec{Path: pluginPath("initcrash"), Source: "user layer", Required: true}, specs("tools")[0])
	require.Equal(t, []string{"tools"}, h.m.Names(), h.errs.String())
	res := callTool(h.m, "echo", `{}`)
	require.True(t, res.IsError)
	require.Contains(t, res.ResultText(), "is a required safeguard and is not running")
	require.Contains(t, res.ResultText(), "/extensions disable initcrash to go on without it for this session")
	require.Contains(t, h.m.States()[1].String(), "initcrash: stopped — did not start")

	require.NoError(t, h.m.DisableForSession("initcrash"))
	res = callTool(h.m, "echo", `{}`)
	require.False(t, res.IsError, res.ResultText())
	require.Equal(t, "tools: {}", res.ResultText())
}

// A restarted extension's commands run again, in the new process.
func TestKilledExtensionsCommandsComeBack(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("happy")...)
	require.Equal(t, []string{"happy"}, h.m.Names(), h.errs.String())
	pid := h.ext(t, "happy").startedPID()
	killPid(t, pid)
	waitFor(t, 10*time.Second, "the restart", func() bool { return strings.Contains(h.errs.String(), "restarted it") })
	out, err := h.m.RunCommand(context.Background(), "greet", "Ada")
	require.NoError(t, err, h.errs.String())
	require.Equal(t, "hello Ada", out)
	require.NotEqual(t, pid, h.ext(t, "happy").startedPID())
	require.Equal(t, []Command{{Extension: "happy", Name: "greet", Description: "greets and records it", Usage: "NAME"}}, h.m.Commands())
	require.Contains(t, h.errs.String(), "the happy extension stopped (signal: killed); restarted it")
}

// killPid kills process pid at once (SIGKILL where there are signals).
func killPid(t *testing.T, pid int) {
	t.Helper()
	p, err := os.FindProcess(pid)
	require.NoError(t, err)
	require.NoError(t, p.Kill())
}
