package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// A scripted ACP client for panto acp's end-to-end tests: it runs the
// real binary on pipes, and checks every line panto writes to stdout —
// that it is one JSON-RPC message, and that the message validates
// against the protocol's official JSON Schema (the one
// @agentclientprotocol/sdk ships; .ci/run installs it), as a whole and as
// the very type its method says it is.

// acpClientDir holds the npm packages of the ACP tests (acpx, the
// schema), installed by .ci/run.
const acpClientDir = "testdata/acpclient"

var (
	acpSchemaOnce sync.Once
	acpCompiler   *jsonschema.Compiler
	acpSchemas    = map[string]*jsonschema.Schema{}
	acpSchemaMu   sync.Mutex
	acpSchemaErr  error
)

const acpSchemaURL = "https://panto.invalid/acp/v1/schema.json"

// acpSchema is the compiled schema of the definition name ("" the
// whole message); the test skips without the npm package (fails under
// CI, where .ci/run installs it).
func acpSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	acpSchemaOnce.Do(func() {
		path := filepath.Join(acpClientDir, "node_modules", "@agentclientprotocol", "sdk", "schema", "v1", "schema.json")
		data, err := os.ReadFile(path)
		if err != nil {
			acpSchemaErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			acpSchemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		acpSchemaErr = c.AddResource(acpSchemaURL, doc)
		acpCompiler = c
	})
	if acpSchemaErr != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("the ACP schema is not installed (npm ci --prefix cmd/panto/%s): %v", acpClientDir, acpSchemaErr)
		}
		require.NoError(t, acpSchemaErr, "the ACP schema (npm ci --prefix cmd/panto/%s)", acpClientDir)
	}
	acpSchemaMu.Lock()
	defer acpSchemaMu.Unlock()
	if s, ok := acpSchemas[name]; ok {
		return s
	}
	ref := acpSchemaURL
	if name != "" {
		ref += "#/$defs/" + name
	}
	s, err := acpCompiler.Compile(ref)
	require.NoError(t, err, "compile %s", ref)
	acpSchemas[name] = s
	return s
}

// The definitions of the responses to the client's requests, and of
// what panto sends of its own.
var (
	acpResponseDefs = map[string]string{
		"initialize": "InitializeResponse", "session/new": "NewSessionResponse", "session/load": "LoadSessionResponse",
		"session/list": "ListSessionsResponse", "session/prompt": "PromptResponse", "session/close": "CloseSessionResponse",
		"session/set_config_option": "SetSessionConfigOptionResponse",
	}
	acpAgentDefs = map[string]string{
		"session/update": "SessionNotification", "session/request_permission": "RequestPermissionRequest",
		"fs/read_text_file": "ReadTextFileRequest", "fs/write_text_file": "WriteTextFileRequest",
		"terminal/create": "CreateTerminalRequest", "terminal/wait_for_exit": "WaitForTerminalExitRequest",
		"terminal/output": "TerminalOutputRequest", "terminal/kill": "KillTerminalRequest", "terminal/release": "ReleaseTerminalRequest",
		"elicitation/create": "CreateElicitationRequest", "$/cancel_request": "CancelRequestNotification",
	}
)

// acpFrame is one message panto wrote.
type acpFrame struct {
	ID     *json.RawMessage `json:"id"`
	Method string           `json:"method"`
	Params json.RawMessage  `json:"params"`
	Result json.RawMessage  `json:"result"`
	Error  *acpError        `json:"error"`
	raw    []byte
}

type acpError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (f acpFrame) isResponse() bool { return f.ID != nil && f.Method == "" }

// update is a session/update's params, decoded loosely.
func (f acpFrame) update() (session string, u map[string]any) {
	var p struct {
		SessionID string         `json:"sessionId"`
		Update    map[string]any `json:"update"`
	}
	_ = json.Unmarshal(f.Params, &p)
	return p.SessionID, p.Update
}

type acpClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer

	mu      sync.Mutex
	next    int
	methods map[int]string
	waiting map[int]chan acpFrame
	frames  []acpFrame
	changed chan struct{}
	// answer answers panto's requests (a permission); nil answers an
	// error.
	answer func(method string, params json.RawMessage) (any, *acpError)
	done   chan struct{}
}

// acpStart runs panto acp with args in the harness's project.
func (h *harness) acpStart(args ...string) *acpClient {
	h.t.Helper()
	t := h.t.(*testing.T)
	acpSchema(t, "") // skip early without the schema
	cmd := exec.Command(pantoBin, append([]string{"acp"}, args...)...)
	cmd.Dir = h.project
	cmd.Env = h.environ()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	c := &acpClient{t: t, cmd: cmd, stdin: stdin, stderr: &syncBuffer{}, methods: map[int]string{}, waiting: map[int]chan acpFrame{},
		changed: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = c.stderr
	require.NoError(t, cmd.Start())
	go c.read(stdout)
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-c.done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
		_ = cmd.Wait() // a second Wait (after close) fails: nothing to do
	})
	return c
}

// close closes panto's stdin, as an editor that quits does, and waits
// for panto to end; it returns panto's exit status.
func (c *acpClient) close() int {
	c.t.Helper()
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.t.Fatalf("panto did not end within 30s of its stdin closing; stderr:\n%s", c.stderr.String())
	}
	err := c.cmd.Wait()
	if err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode()
		}
		c.t.Fatal(err)
	}
	return 0
}

// read checks and records every line panto writes.
func (c *acpClient) read(r io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			c.frame(line)
		}
		if err != nil {
			return
		}
	}
}

func (c *acpClient) frame(line []byte) {
	t := c.t
	var f acpFrame
	if err := json.Unmarshal(line, &f); err != nil {
		t.Errorf("stdout carried a line that is not JSON-RPC: %q (%v)", line, err)
		return
	}
	f.raw = bytes.Clone(line)
	c.validate(f)
	c.mu.Lock()
	c.frames = append(c.frames, f)
	close(c.changed)
	c.changed = make(chan struct{})
	var ch chan acpFrame
	if f.isResponse() {
		var id int
		_ = json.Unmarshal(*f.ID, &id)
		ch = c.waiting[id]
		delete(c.waiting, id)
	}
	answer := c.answer
	c.mu.Unlock()
	if ch != nil {
		ch <- f
	}
	if f.ID != nil && f.Method != "" {
		// panto asks: answer on the side, as a client does.
		go func() {
			var result any
			var e *acpError
			if answer != nil {
				result, e = answer(f.Method, f.Params)
			} else {
				e = &acpError{Code: -32601, Message: "the test client has no " + f.Method}
			}
			msg := map[string]any{"jsonrpc": "2.0", "id": f.ID}
			if e != nil {
				msg["error"] = e
			} else {
				msg["result"] = result
			}
			c.write(msg)
		}()
	}
}

// validate checks f against the schema: as a message of the agent's,
// and as its own type.
func (c *acpClient) validate(f acpFrame) {
	t := c.t
	check := func(name string, raw []byte) {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		if err := acpSchema(t, name).Validate(v); err != nil {
			t.Errorf("panto sent a message that is not a valid %s:\n%s\n%v", orWhole(name), raw, err)
		}
	}
	check("", f.raw)
	switch {
	case f.isResponse() && f.Error != nil:
		b, _ := json.Marshal(f.Error)
		check("Error", b)
	case f.isResponse():
		var id int
		_ = json.Unmarshal(*f.ID, &id)
		c.mu.Lock()
		method := c.methods[id]
		c.mu.Unlock()
		if def := acpResponseDefs[method]; def != "" {
			check(def, f.Result)
		}
	default:
		def := acpAgentDefs[f.Method]
		if def == "" {
			t.Errorf("panto sent a %s, which the tests do not expect", f.Method)
			return
		}
		check(def, f.Params)
	}
}

func orWhole(name string) string {
	if name == "" {
		return "ACP message"
	}
	return name
}

func (c *acpClient) write(msg any) {
	b, err := json.Marshal(msg)
	require.NoError(c.t, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.stdin.Write(append(b, '\n'))
}

// send sends a request and returns its id and where its response comes.
func (c *acpClient) send(method string, params any) (int, chan acpFrame) {
	c.mu.Lock()
	c.next++
	id := c.next
	c.methods[id] = method
	ch := make(chan acpFrame, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return id, ch
}

// call sends a request and waits for its response.
func (c *acpClient) call(method string, params any) acpFrame {
	c.t.Helper()
	_, ch := c.send(method, params)
	return c.wait(method, ch)
}

func (c *acpClient) wait(method string, ch chan acpFrame) acpFrame {
	c.t.Helper()
	select {
	case f := <-ch:
		return f
	case <-time.After(60 * time.Second):
		c.t.Fatalf("no response to %s in 60s; stderr:\n%s", method, c.stderr.String())
	case <-c.done:
		select {
		case f := <-ch:
			return f
		default:
		}
		c.t.Fatalf("panto ended before it answered %s; stderr:\n%s", method, c.stderr.String())
	}
	return acpFrame{}
}

// ok calls and requires a result, decoded into out (nil: ignored).
func (c *acpClient) ok(method string, params, out any) acpFrame {
	c.t.Helper()
	f := c.call(method, params)
	require.Nil(c.t, f.Error, "%s: %s", method, f.raw)
	if out != nil {
		require.NoError(c.t, json.Unmarshal(f.Result, out))
	}
	return f
}

// notify sends a notification.
func (c *acpClient) notify(method string, params any) {
	c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// snapshot returns the frames so far.
func (c *acpClient) snapshot() []acpFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acpFrame(nil), c.frames...)
}

// waitFor waits until a frame matches, and returns it.
func (c *acpClient) waitFor(what string, match func(acpFrame) bool) acpFrame {
	c.t.Helper()
	deadline := time.After(60 * time.Second)
	seen := 0
	for {
		c.mu.Lock()
		frames, changed := c.frames[seen:], c.changed
		seen = len(c.frames)
		c.mu.Unlock()
		for _, f := range frames {
			if match(f) {
				return f
			}
		}
		select {
		case <-changed:
		case <-deadline:
			c.t.Fatalf("no %s in 60s; stderr:\n%s", what, c.stderr.String())
		}
	}
}

// initialize runs the handshake with the capabilities caps.
func (c *acpClient) initialize(caps map[string]any) map[string]any {
	c.t.Helper()
	var out map[string]any
	c.ok("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps,
		"clientInfo": map[string]any{"name": "panto-test", "version": "1"}}, &out)
	return out
}

// newSession opens a session in dir.
func (c *acpClient) newSession(dir string, meta map[string]any) string {
	c.t.Helper()
	params := map[string]any{"cwd": dir, "mcpServers": []any{}}
	if meta != nil {
		params["_meta"] = meta
	}
	var out struct {
		SessionID string `json:"sessionId"`
	}
	c.ok("session/new", params, &out)
	require.NotEmpty(c.t, out.SessionID)
	return out.SessionID
}

// prompt sends text and returns the response, with the updates of the
// session that came before it.
func (c *acpClient) prompt(session, text string) (acpFrame, []map[string]any) {
	c.t.Helper()
	before := len(c.snapshot())
	f := c.call("session/prompt", map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	return f, c.updatesIn(session, before, f)
}

// updatesIn are the session's updates from frame index from up to the
// frame until (exclusive).
func (c *acpClient) updatesIn(session string, from int, until acpFrame) []map[string]any {
	var out []map[string]any
	for _, f := range c.snapshot()[from:] {
		if bytes.Equal(f.raw, until.raw) {
			break
		}
		if f.Method == "session/update" {
			if id, u := f.update(); id == session {
				out = append(out, u)
			}
		}
	}
	return out
}

// stopReason is a prompt response's stop reason.
func stopReasonOf(t *testing.T, f acpFrame) string {
	t.Helper()
	require.Nil(t, f.Error, "%s", f.raw)
	var r struct {
		StopReason string `json:"stopReason"`
	}
	require.NoError(t, json.Unmarshal(f.Result, &r))
	return r.StopReason
}

// kinds are the sessionUpdate kinds of updates, in order.
func kinds(updates []map[string]any) []string {
	out := make([]string, len(updates))
	for i, u := range updates {
		out[i], _ = u["sessionUpdate"].(string)
	}
	return out
}

// textOf joins the text of the updates of kind.
func textOf(updates []map[string]any, kind string) string {
	var b strings.Builder
	for _, u := range updates {
		if u["sessionUpdate"] != kind {
			continue
		}
		if c, ok := u["content"].(map[string]any); ok {
			s, _ := c["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// ofKind are the updates of kind.
func ofKind(updates []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, u := range updates {
		if u["sessionUpdate"] == kind {
			out = append(out, u)
		}
	}
	return out
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return fmt.Sprint(string(b))
}
