package main

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The guard example asks before a risky bash command: these run the real
// panto with the real guard and tools extensions on the echo provider.

// guardArgs load the tools and the guard extension.
func guardArgs(h *harness, extra ...string) []string {
	return echoTools(h, append([]string{"--extension", filepath.Join(pluginDir, "guard")}, extra...)...)
}

const rmVictim = `tool:bash {"command":"rm -rf victim"}`

func (h *harness) victim() string {
	p := filepath.Join(h.project, "victim")
	h.write(filepath.Join(p, "f"), "x")
	return p
}

// With nobody to ask (print mode), the guard blocks: the command does
// not run, the model reads why, the user is told, and nothing waited.
func TestGuardBlocksWithNobodyToAsk(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	victim := h.victim()
	start := time.Now()
	r := h.run("", guardArgs(h, "-p", rmVictim)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Less(t, time.Since(start), 30*time.Second, "nothing waits on a user who is not there")
	require.DirExists(t, victim, "the command did not run")
	require.Contains(t, lastResult(t, h), "guard blocked this command: there is nobody to ask")
	require.Contains(t, r.stderr, "panto: guard: warning: blocked: rm -rf victim")
	require.NotContains(t, r.stderr, "disabled")
}

// confirm_default = "yes" answers the guard's confirm in print mode.
func TestGuardConfirmDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ value, want string }{{"yes", "ran"}, {"no", "blocked"}} {
		t.Run(tc.value, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			victim := h.victim()
			h.write(filepath.Join(h.userDir(), "config.toml"), "confirm_default = \""+tc.value+"\"\n")
			r := h.run("", guardArgs(h, "-p", rmVictim)...)
			require.Equal(t, 0, r.code, r.stderr)
			if tc.want == "ran" {
				require.NoDirExists(t, victim)
				return
			}
			require.DirExists(t, victim)
			require.Contains(t, lastResult(t, h), "the user declined it")
		})
	}
}

// --mode json has nobody to ask either; the notice and the status
// segment are lines naming the guard.
func TestGuardInJSONMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	victim := h.victim()
	r := h.run("", guardArgs(h, "--mode", "json", "-p", rmVictim)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.DirExists(t, victim)
	var notice, status map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		switch m["type"] {
		case "notice":
			notice = m
		case "status":
			status = m
		case "question":
			t.Fatalf("a question reached the JSON stream: %s", l)
		}
	}
	require.Equal(t, map[string]any{"version": 1.0, "type": "notice", "level": "warning", "text": "blocked: rm -rf victim", "by": "guard"}, notice)
	require.Equal(t, map[string]any{"version": 1.0, "type": "status", "by": "guard", "key": "guard", "text": "guard: 1 asked, 1 blocked"}, status)
}

// lineLoop runs panto's line loop in-process, as on a terminal, with
// the harness's machine and stdin; it returns stdout and stderr.
func (h *harness) lineLoop(stdin io.Reader, args ...string) (string, string) {
	h.t.Helper()
	var out, errb syncBuffer
	e := &env{
		stdin: stdin, stdout: &out, stderr: &errb,
		getenv:   func(k string) string { return h.env[k] },
		environ:  h.environ,
		cwd:      h.project,
		terminal: true,
	}
	code := run(context.Background(), e, args)
	require.Equal(h.t, 0, code, errb.String())
	return out.String(), errb.String()
}

// The line loop asks: "yes" runs the command, "n" blocks it.
func TestGuardAsksInTheLineLoop(t *testing.T) {
	t.Parallel()
	for _, answer := range []string{"yes", "n"} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			victim := h.victim()
			out, _ := h.lineLoopAnswering(rmVictim, answer, guardArgs(h)...)
			require.Contains(t, out, "? guard asks: Run this command?\n  rm -rf victim\n")
			require.Contains(t, out, "type yes to confirm")
			if answer == "yes" {
				require.NoDirExists(t, victim)
				return
			}
			require.DirExists(t, victim)
			require.Contains(t, lastResult(t, h), "the user declined it")
		})
	}
}

// A user who takes longer than hook_timeout to answer does not get the
// guard disabled: the hook's clock stops while it waits on the user.
func TestGuardQuestionOutlastsTheHookDeadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	victim := h.victim()
	h.write(filepath.Join(h.userDir(), "config.toml"), "hook_timeout = \"300ms\"\n")
	in, typed := io.Pipe()
	go func() {
		io.WriteString(typed, rmVictim+"\n")
		time.Sleep(time.Second) // three hook deadlines
		io.WriteString(typed, "yes\n")
		typed.Close()
	}()
	out, errs := h.lineLoop(in, guardArgs(h)...)
	require.Contains(t, out, "type yes to confirm")
	require.NoDirExists(t, victim, "the answer came through")
	require.NotContains(t, errs, "disabled")
}

// lastResult is the text of the session's last tool result.
func lastResult(t *testing.T, h *harness) string {
	t.Helper()
	res := toolResults(t, h.sessionFiles()[0])
	require.NotEmpty(t, res)
	return res[len(res)-1]["text"].(string)
}
