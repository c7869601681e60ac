package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk/sandbox"
)

// runTools runs panto -p prompt --mode json with the echo provider
// and the real tools extension, and returns each tool call's result by
// call id ("echo_1", ...), with stderr.
func runTools(t *testing.T, h *harness, prompt string, args ...string) (map[string]string, result) {
	t.Helper()
	r := h.ok(append([]string{"-p", prompt, "--provider", "echo", "--mode", "json", "--extension", filepath.Join(pluginDir, "tools")}, args...)...)
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Type   string `json:"type"`
			ID     string `json:"id"`
			Result string `json:"result"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), sc.Text())
		if ev.Type == "tool_end" {
			out[ev.ID] = ev.Result
		}
	}
	return out, r
}

// permHarness is a harness whose permission mode is the config's.
func permHarness(t *testing.T) *harness {
	h := newHarness(t)
	delete(h.env, "PANTO_PERMISSION_MODE")
	return h
}

// In print mode nobody can answer: what the mode asks about is denied,
// saying how to allow it, and nothing runs; --allow and the config's
// rules allow it; a deny rule holds even in bypass mode.
func TestPrintModeAsksAreDenials(t *testing.T) {
	t.Parallel()
	h := permHarness(t)
	marker := filepath.Join(h.project, "ran")
	res, _ := runTools(t, h, "tool:bash {\"command\": \"touch ran\"}")
	require.Contains(t, res["echo_1"], "not run: bash: touch ran: bash is asked about (permission mode default), and there is nobody to ask here (print mode)")
	require.Contains(t, res["echo_1"], "--allow 'bash(touch ran)'")
	require.NoFileExists(t, marker)

	res, _ = runTools(t, h, "tool:bash {\"command\": \"touch ran\"}", "--allow", "bash(touch *)")
	require.NotContains(t, res["echo_1"], "not run", "allowed by --allow")
	require.FileExists(t, marker)

	h.write(filepath.Join(h.userDir(), "config.toml"), "[permissions]\nallow = [\"bash(touch *)\"]\ndeny = [\"bash(rm *)\"]\n")
	res, _ = runTools(t, h, "tool:bash {\"command\": \"touch ran2 && rm ran\"}", "--permission-mode", "bypass")
	require.Contains(t, res["echo_1"], "not run: denied by the permission rule bash(rm *) denies rm ran (config "+filepath.Join(h.userDir(), "config.toml")+")")
	require.FileExists(t, marker, "the rm did not run")
	require.NoFileExists(t, filepath.Join(h.project, "ran2"), "nor anything else of the line")

	r := h.run("", "-p", "hi", "--provider", "echo", "--permission-mode", "yolo")
	require.Equal(t, 2, r.code, "a usage error")
	require.Contains(t, r.stderr, `--permission-mode: permission mode "yolo": want default, accept-edits, plan or bypass`)
	r = h.run("", "-p", "hi", "--provider", "echo", "--allow", "bash(")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `--allow "bash("`)
}

// The sandbox of the real tools extension, end to end: bash writes the
// project and its TMPDIR, not the home or /tmp; the network is off; the
// file tools keep to the same roots. The session's TMPDIR goes when
// panto exits.
func TestSandboxEndToEnd(t *testing.T) {
	t.Parallel()
	if sup := sandbox.Probe(); !sup.OK() {
		if os.Getenv("PANTO_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("the sandbox is required here: %s", sup.Reason)
		}
		t.Skip(sup.Reason)
	}
	h := newHarness(t) // bypass: the sandbox alone decides
	outside := filepath.Join(h.home, "outside")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	prompt := strings.Join([]string{
		`tool:bash {"command": "echo in > inside && echo $TMPDIR > tmpdir && echo x > $TMPDIR/t && git init -q . && git add inside && git -c user.email=a@b -c user.name=n commit -qm one && echo committed"}`,
		`tool:bash {"command": "echo out > ` + outside + `"}`,
		`tool:bash {"command": "exec 3<>/dev/tcp/127.0.0.1/` + itoa(port) + `"}`,
		`tool:write {"path": "` + outside + `2", "content": "x"}`,
	}, "\n")
	res, r := runTools(t, h, prompt)
	require.Contains(t, res["echo_1"], "committed", r.stderr)
	require.FileExists(t, filepath.Join(h.project, "inside"))
	require.Contains(t, res["echo_2"], "Permission denied")
	require.NoFileExists(t, outside)
	require.Contains(t, res["echo_3"], "blocked by the sandbox: network is off (sandbox.network = false)")
	require.Contains(t, res["echo_4"], "blocked by the sandbox")
	require.NoFileExists(t, outside+"2")
	tmp, err := os.ReadFile(filepath.Join(h.project, "tmpdir"))
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(string(tmp)))
	require.NoDirExists(t, strings.TrimSpace(string(tmp)), "the session's TMPDIR is removed as panto exits")

	// The network, once the user turns it on.
	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nnetwork = true\n")
	res, _ = runTools(t, h, `tool:bash {"command": "exec 3<>/dev/tcp/127.0.0.1/`+itoa(port)+` && echo connected"}`)
	require.Contains(t, res["echo_1"], "connected")
}

// Where the kernel cannot sandbox, panto says so once at start and runs
// bash unsandboxed — or, with sandbox.required, refuses it.
func TestSandboxUnsupportedRequiredBothWays(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("bash runs under the reaper on unix only")
	}
	h := newHarness(t)
	h.env[sandbox.UnsupportedEnv] = "simulated: no Landlock here"
	res, r := runTools(t, h, `tool:bash {"command": "touch ran"}`)
	require.Contains(t, r.stderr, "warning: bash runs without a sandbox: simulated: no Landlock here")
	require.Equal(t, 1, strings.Count(r.stderr, "without a sandbox"), "said once")
	require.NotContains(t, res["echo_1"], "refused")
	require.FileExists(t, filepath.Join(h.project, "ran"))

	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nrequired = true\n")
	res, r = runTools(t, h, `tool:bash {"command": "touch ran2"}`)
	require.Contains(t, r.stderr, "warning: bash will not run: sandbox.required = true, and simulated: no Landlock here")
	require.Contains(t, res["echo_1"], "the sandbox is required (sandbox.required = true)")
	require.NoFileExists(t, filepath.Join(h.project, "ran2"))
}

// In ACP, panto's own permission question is the client's permission
// dialog (session/request_permission) about the very call, each choice
// an option of its kind; "allow for this session" runs the call and the
// same command again without asking.
func TestACPPermissionRequest(t *testing.T) {
	t.Parallel()
	h := permHarness(t)
	c := h.acpStart("--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"))
	asked := make(chan map[string]any, 4)
	c.answer = func(method string, params json.RawMessage) (any, *acpError) {
		require.Equal(t, "session/request_permission", method)
		var p map[string]any
		require.NoError(t, json.Unmarshal(params, &p))
		asked <- p
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "1"}}, nil
	}
	c.initialize(map[string]any{})
	id := c.newSession(h.project, nil)
	call := `tool:bash {"command": "touch acp-ran"}`
	resp, updates := c.prompt(id, call)
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	var p map[string]any
	select {
	case p = <-asked:
	default:
		t.Fatalf("no permission request; updates %v", kinds(updates))
	}
	var names, kindsOf []string
	for _, o := range p["options"].([]any) {
		names = append(names, o.(map[string]any)["name"].(string))
		kindsOf = append(kindsOf, o.(map[string]any)["kind"].(string))
	}
	require.Equal(t, []string{"allow_once", "allow_always", "allow_always", "reject_once", "reject_once"}, kindsOf)
	require.Equal(t, "Allow for this session: bash(touch acp-ran)", names[1])
	calls := ofKind(updates, "tool_call")
	require.Len(t, calls, 1)
	require.Equal(t, calls[0]["toolCallId"], p["toolCall"].(map[string]any)["toolCallId"], "the request is about the call")
	require.Contains(t, dump(p["toolCall"]), "touch acp-ran")
	require.FileExists(t, filepath.Join(h.project, "acp-ran"))

	require.NoError(t, os.Remove(filepath.Join(h.project, "acp-ran")))
	c.prompt(id, call)
	require.Empty(t, asked, "not asked again")
	require.FileExists(t, filepath.Join(h.project, "acp-ran"))
}

// panto prompt --permissions shows the policy the next run's calls run
// under, and with --at the one recorded as of an entry: a branch runs
// under the policy it had.
func TestPromptShowsThePermissions(t *testing.T) {
	t.Parallel()
	h := permHarness(t)
	h.write(filepath.Join(h.userDir(), "config.toml"), "[permissions]\ndeny = [\"bash(rm *)\"]\n")
	r := h.ok("prompt", "--permissions", "--allow", "bash(go test *)", "--permission-mode", "accept-edits")
	require.Contains(t, r.stdout, "permission mode: accept-edits")
	require.Contains(t, r.stdout, "deny   bash(rm *)")
	require.Contains(t, r.stdout, "config "+filepath.Join(h.userDir(), "config.toml"))
	require.Contains(t, r.stdout, "allow  bash(go test *)               --allow")
	require.Contains(t, r.stdout, "sandbox: workspace-write, network off")

	h.ok("-p", "one", "--provider", "echo", "--permission-mode", "plan")
	h.ok("-p", "two", "--provider", "echo", "-c", "--permission-mode", "bypass")
	r = h.ok("prompt", "--permissions", "-c", "--at", "2")
	require.Contains(t, r.stdout, "permission mode: plan", "as of the second message: the first run's")
	r = h.ok("prompt", "--permissions", "-c", "--at", "4")
	require.Contains(t, r.stdout, "permission mode: bypass")
	require.Contains(t, r.stdout, "only the sandbox holds")
	r = h.ok("prompt", "--permissions", "-c", "--at", "4", "--json")
	var st struct {
		Mode  string `json:"mode"`
		Rules []struct{ Verdict, Rule, Source string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	require.Equal(t, "bypass", st.Mode)
	require.Len(t, st.Rules, 1)
}
