package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/panto-dev/panto/host/extension"
)

// The client's workspace: when it offers its file system
// (fs.readTextFile and fs.writeTextFile) the tools read and write
// through it — what the model reads is the editor's buffer, unsaved
// changes included, and what it writes lands in the editor — and when it
// offers a terminal, bash runs there (terminal/create … terminal/release),
// shown with its tool call. The tools extension does the rest as it does
// with the machine's files (its limits, its results).

// workspace is a session's, for its extensions (extension.Workspace).
type workspace struct {
	s *session
	// files and terminal are what the client offers.
	files, terminal bool
	// ready is set once the session has an id: before, nothing is
	// offered (a call while the session opens uses the machine's).
	ready atomic.Bool

	// seen are, by call, the first text read and the last written of
	// each file through the client: an edit's exact diff.
	mu   sync.Mutex
	seen map[string]map[string]*seenFile
}

// seenFile is a file a call read and wrote through the client.
type seenFile struct {
	before, after string
	read, written bool
}

// saw records what call read (write false) or wrote of path.
func (w *workspace) saw(call, path, text string, write bool) {
	if call == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]map[string]*seenFile{}
	}
	if w.seen[call] == nil {
		w.seen[call] = map[string]*seenFile{}
	}
	f := w.seen[call][path]
	if f == nil {
		f = &seenFile{}
		w.seen[call][path] = f
	}
	switch {
	case write:
		f.after, f.written = text, true
	case !f.read:
		f.before, f.read = text, true
	}
}

// diffs are the diffs of the files call wrote through the client, as it
// read them first and as it wrote them last; old is the text of a file
// it wrote without reading it (nil: none known). It forgets the call.
func (w *workspace) diffs(call string, old func(path string) (string, bool)) []acpsdk.ToolCallContent {
	w.mu.Lock()
	files := w.seen[call]
	delete(w.seen, call)
	w.mu.Unlock()
	var out []acpsdk.ToolCallContent
	for path, f := range files {
		if !f.written {
			continue
		}
		before, ok := f.before, f.read
		if !ok {
			before, ok = old(path)
		}
		if ok {
			out = append(out, acpsdk.ToolDiffContent(path, f.after, before))
		} else {
			out = append(out, acpsdk.ToolDiffContent(path, f.after))
		}
	}
	return out
}

var _ extension.Workspace = (*workspace)(nil)

// newWorkspace is what the client's capabilities offer; nil when
// nothing.
func newWorkspace(s *session, caps acpsdk.ClientCapabilities) *workspace {
	w := &workspace{s: s, files: caps.Fs.ReadTextFile && caps.Fs.WriteTextFile, terminal: caps.Terminal}
	if !w.files && !w.terminal {
		return nil
	}
	return w
}

func (w *workspace) Offers() (files, terminal bool) { return w.files, w.terminal }

func (w *workspace) id() (acpsdk.SessionId, error) {
	if !w.ready.Load() {
		return "", extension.ErrUnavailable
	}
	return acpsdk.SessionId(w.s.id), nil
}

// clientErr names the client in an error of its.
func clientErr(op string, err error) error {
	var re *acpsdk.RequestError
	if !errors.As(err, &re) {
		return fmt.Errorf("the editor could not %s: %w", op, err)
	}
	msg := re.Message
	if d, ok := re.Data.(map[string]any); ok {
		for _, k := range []string{"details", "error", "message"} {
			if v, ok := d[k].(string); ok && v != "" {
				msg = v
				break
			}
		}
	}
	if strings.Contains(strings.ToLower(msg), "permission denied") || strings.Contains(strings.ToLower(msg), "denied") {
		return fmt.Errorf("the editor's user declined it (%s); do not retry it, ask the user how to proceed", msg)
	}
	return fmt.Errorf("the editor could not %s: %s", op, msg)
}

func (w *workspace) ReadTextFile(ctx context.Context, call, path string, line, limit int) (string, error) {
	id, err := w.id()
	if err != nil {
		return "", err
	}
	req := acpsdk.ReadTextFileRequest{SessionId: id, Path: path}
	if line > 0 {
		req.Line = acpsdk.Ptr(line)
	}
	if limit > 0 {
		req.Limit = acpsdk.Ptr(limit)
	}
	resp, err := w.s.a.conn.ReadTextFile(ctx, req)
	if err != nil {
		return "", clientErr("read the file", err)
	}
	if line <= 1 && limit == 0 {
		w.saw(call, path, resp.Content, false)
	}
	return resp.Content, nil
}

func (w *workspace) WriteTextFile(ctx context.Context, call, path, content string) error {
	id, err := w.id()
	if err != nil {
		return err
	}
	if _, err := w.s.a.conn.WriteTextFile(ctx, acpsdk.WriteTextFileRequest{SessionId: id, Path: path, Content: content}); err != nil {
		return clientErr("write the file", err)
	}
	w.saw(call, path, content, true)
	return nil
}

// startWait bounds how long a terminal waits for its call's tool_call to
// have gone out (the session's events are sent by the pump).
const startWait = 5 * time.Second

// RunInTerminal runs c in a terminal of the client's, shown with the
// call; the terminal is released once the call's last update has gone
// out (or at once for a command of no call).
func (w *workspace) RunInTerminal(ctx context.Context, call string, c extension.TerminalCommand) (extension.TerminalResult, error) {
	id, err := w.id()
	if err != nil {
		return extension.TerminalResult{}, err
	}
	conn := w.s.a.conn
	if call != "" {
		select {
		case <-w.s.callStarted(call):
		case <-ctx.Done():
			return extension.TerminalResult{}, context.Cause(ctx)
		case <-time.After(startWait):
		}
	}
	req := acpsdk.CreateTerminalRequest{SessionId: id, Command: "bash", Args: []string{"-c", c.Command}}
	if c.Dir != "" {
		req.Cwd = acpsdk.Ptr(c.Dir)
	}
	if c.OutputLimit > 0 {
		req.OutputByteLimit = acpsdk.Ptr(c.OutputLimit)
	}
	term, err := conn.CreateTerminal(ctx, req)
	if err != nil {
		return extension.TerminalResult{}, clientErr("open a terminal", err)
	}
	tid := term.TerminalId
	if call != "" {
		w.s.terminalOf(call, tid)
		w.s.update(acpsdk.UpdateToolCall(acpsdk.ToolCallId(call), acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolTerminalRef(tid)})))
	} else {
		defer w.s.releaseTerminal(tid)
	}
	// Wait for the exit, the timeout or the call's end; kill on the last
	// two, then read what it wrote.
	exited := make(chan error, 1)
	bg := context.WithoutCancel(ctx)
	go func() {
		_, err := conn.WaitForTerminalExit(bg, acpsdk.WaitForTerminalExitRequest{SessionId: id, TerminalId: tid})
		exited <- err
	}()
	var timeout <-chan time.Time
	if c.Timeout > 0 {
		t := time.NewTimer(c.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	timedOut := false
	select {
	case err = <-exited:
	case <-timeout:
		timedOut = true
	case <-ctx.Done():
	}
	if err != nil {
		return extension.TerminalResult{}, clientErr("wait for the command", err)
	}
	if timedOut || ctx.Err() != nil {
		if _, err := conn.KillTerminal(bg, acpsdk.KillTerminalRequest{SessionId: id, TerminalId: tid}); err != nil {
			return extension.TerminalResult{}, clientErr("kill the command", err)
		}
		select {
		case <-exited:
		case <-time.After(startWait):
		}
	}
	out, err := conn.TerminalOutput(bg, acpsdk.TerminalOutputRequest{SessionId: id, TerminalId: tid})
	if err != nil {
		return extension.TerminalResult{}, clientErr("read the command's output", err)
	}
	r := extension.TerminalResult{Output: out.Output, Truncated: out.Truncated, TimedOut: timedOut}
	if st := out.ExitStatus; st != nil {
		if st.ExitCode != nil {
			r.ExitCode = *st.ExitCode
		}
		if st.Signal != nil {
			r.Signal = *st.Signal
		}
	}
	return r, nil
}
