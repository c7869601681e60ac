package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Live tool output end to end: the model runs `echo starting; sleep 60`
// with bash. While it runs, --mode json shows a tool_progress line with
// "starting" (before the call's tool_end: the command is still
// sleeping). Ctrl-C then interrupts it: the session log records the
// output so far as the call's result, marked interrupted, and the next
// turn sends the model that result. Before, nothing showed until the
// call ended, and the result said only that it was cancelled.
func TestBashOutputStreamsAndSurvivesAnInterrupt(t *testing.T) {
	t.Parallel()
	h, _, args := toolHarness(t,
		anthropicTools(toolCall{"t1", "bash", `{"command":"echo starting; sleep 60"}`}),
		anthropicText("never sent"),
	)
	cmd := h.command("", append([]string{"-p", "run it", "--mode", "json"}, args...)...)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), `"type":"tool_progress"`) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no tool_progress while bash runs:\n%s\n%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NotContains(t, out.String(), `"type":"tool_end"`, "the progress came while the command ran")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 130, waitExit(t, cmd, 15*time.Second), errb.String())

	evs := decodeJSONStream(t, out.String())
	var progress *jToolProgress
	var end *jToolEnd
	for _, ev := range evs {
		switch ev := ev.(type) {
		case *jToolProgress:
			require.Nil(t, end, "tool_progress after tool_end")
			if progress == nil {
				progress = ev
			}
		case *jToolEnd:
			end = ev
		}
	}
	require.NotNil(t, progress)
	require.Equal(t, "t1", progress.ID)
	require.Equal(t, "bash", progress.Name)
	require.Equal(t, "starting\n", progress.Text)
	require.GreaterOrEqual(t, progress.ElapsedMS, int64(0))
	require.NotNil(t, end)
	require.True(t, end.IsError)
	require.Regexp(t, `^starting\n\[interrupted by the user after [0-9.]+m?s: the command and its process group were killed\]$`, end.Result)

	res := toolResults(t, h.sessionFiles()[0])
	require.Len(t, res, 1)
	require.Equal(t, end.Result, res[0]["text"], "the log records what tool_end showed")
	require.True(t, res[0]["is_error"].(bool))

	// The next turn: the model reads the output it was interrupted in.
	fake := newFake(t, anthropicText("I see it started"))
	r := h.ok("-p", "what happened?", "-c", "--provider", "anthropic", "--base-url", fake.srv.URL, "--extension", args[len(args)-1])
	require.Contains(t, r.stdout, "I see it started")
	body := string(fake.request(t, 0).body)
	require.Contains(t, body, `starting\n[interrupted by the user after `)
}
