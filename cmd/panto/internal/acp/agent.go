package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
)

// Options are what panto acp was started with.
type Options struct {
	// Env is the process's, as every front end takes it; its CWD is the
	// one a session gets when the client gives none it can use, and its
	// Notify is replaced per session.
	Env app.Env
	// Flags are the root flags (provider, model, extensions, prompt);
	// their Log is chosen per session.
	Flags app.Flags
	// Stderr is told what the client is not: warnings of panto's own.
	Stderr io.Writer
	// Logger gets the connection's diagnostics (malformed messages);
	// nil: Stderr.
	Logger *slog.Logger
}

// Serve speaks ACP on in and out until the client closes in (or ctx is
// done), then closes every session, their logs complete. It returns nil
// then: an editor ending its agent is no failure.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	a := newAgent(o, out)
	conn := acpsdk.NewAgentSideConnection(a, a.wire, &peek{r: in, seen: a.peeked, answer: a.wire.answer})
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	conn.SetLogger(logger)
	a.conn = conn
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	a.closeAll(ctx)
	// The requests under way answer (a prompt cut short by the close
	// answers too), and their responses go out before panto ends.
	time.Sleep(10 * time.Millisecond) // a request just read starts its handler
	a.handlers.Wait()
	wait, stop := context.WithTimeout(context.Background(), answerWait)
	defer stop()
	a.wire.answeredAtLeast(int(a.requests.Load()), wait.Done())
	return nil
}

// answerWait bounds how long panto waits, as it ends, for the responses
// of the requests under way to be written.
const answerWait = 5 * time.Second

// handle counts a request's handler in; call the function it returns
// when the handler returns.
func (a *agent) handle() func() {
	a.requests.Add(1)
	a.handlers.Add(1)
	return a.handlers.Done
}

// agent is panto as an ACP agent: the sessions the client opened, each
// a session of the app layer's.
type agent struct {
	o    Options
	conn *acpsdk.AgentSideConnection
	wire *wire

	// The client's capabilities, from initialize.
	caps    acpsdk.ClientCapabilities
	notices atomic.Bool

	mu       sync.Mutex
	sessions map[string]*session
	closing  bool

	// requests counts the requests handled, handlers those under way.
	requests atomic.Int64
	handlers sync.WaitGroup
}

func newAgent(o Options, out io.Writer) *agent {
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return &agent{o: o, wire: newWire(out), sessions: map[string]*session{}}
}

var (
	_ acpsdk.Agent       = (*agent)(nil)
	_ acpsdk.AgentLoader = (*agent)(nil)
)

// peeked is told the messages peek looks at, before the SDK dispatches
// them: initialize's session capabilities (whether the client shows
// notices), and what a session/cancel or a second session/prompt will
// make the SDK do to the session's running prompt.
func (a *agent) peeked(method string, params json.RawMessage) {
	switch method {
	case acpsdk.AgentMethodInitialize:
		var p struct {
			ClientCapabilities struct {
				Session *struct {
					Notices *json.RawMessage `json:"notices"`
				} `json:"session"`
			} `json:"clientCapabilities"`
		}
		if json.Unmarshal(params, &p) == nil && p.ClientCapabilities.Session != nil {
			n := p.ClientCapabilities.Session.Notices
			a.notices.Store(n != nil && string(*n) != "null")
		}
	case acpsdk.AgentMethodSessionCancel, acpsdk.AgentMethodSessionPrompt:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		s := a.session(p.SessionID)
		if s == nil {
			return
		}
		if t := s.running(); t != nil {
			if method == acpsdk.AgentMethodSessionCancel {
				t.cancelled.Store(true)
			} else {
				t.superseded.Store(true)
			}
		}
	}
}

// Initialize answers with protocol version 1 and what panto does.
func (a *agent) Initialize(_ context.Context, p acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	defer a.handle()()
	a.mu.Lock()
	a.caps = p.ClientCapabilities
	a.mu.Unlock()
	version := acpsdk.ProtocolVersion(acpsdk.ProtocolVersionNumber)
	if p.ProtocolVersion < version && p.ProtocolVersion >= 1 {
		version = p.ProtocolVersion
	}
	title := "panto"
	return acpsdk.InitializeResponse{
		ProtocolVersion: version,
		AgentInfo:       &acpsdk.Implementation{Name: "panto", Title: &title, Version: a.o.Env.Version},
		AuthMethods:     []acpsdk.AuthMethod{},
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: acpsdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:    acpsdk.McpCapabilities{Http: true},
			SessionCapabilities: acpsdk.SessionCapabilities{
				List:  &acpsdk.SessionListCapabilities{},
				Close: &acpsdk.SessionCloseCapabilities{},
			},
		},
	}, nil
}

// Authenticate: panto takes the provider's key from its environment; the
// client has nothing to authenticate.
func (a *agent) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	defer a.handle()()
	return acpsdk.AuthenticateResponse{}, nil
}

// Logout: nothing to log out of (see Authenticate).
func (a *agent) Logout(context.Context, acpsdk.LogoutRequest) (acpsdk.LogoutResponse, error) {
	defer a.handle()()
	return acpsdk.LogoutResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodLogout)
}

// NewSession opens a new panto session in the client's cwd.
func (a *agent) NewSession(ctx context.Context, p acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	defer a.handle()()
	prompt, err := givenPrompt(p.Meta)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	s, err := a.open(ctx, p.Cwd, p.McpServers, prompt, app.Pick{})
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	// Nothing of the session's goes out before this response has.
	s.release(a.wire.gate(s.id))
	return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(s.id), ConfigOptions: s.configOptions()}, nil
}

// LoadSession opens the panto session of that id in cwd and replays its
// active branch, before it answers.
func (a *agent) LoadSession(ctx context.Context, p acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	defer a.handle()()
	prompt, err := givenPrompt(p.Meta)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	if id == "" {
		return acpsdk.LoadSessionResponse{}, invalidParams("sessionId is required")
	}
	if a.session(id) != nil {
		return acpsdk.LoadSessionResponse{}, invalidParams(fmt.Sprintf("session %s is open already", id))
	}
	s, err := a.open(ctx, p.Cwd, p.McpServers, prompt, app.Pick{Resume: id, Exact: true})
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	if err := s.replay(ctx); err != nil {
		a.forget(s)
		s.close(context.WithoutCancel(ctx))
		return acpsdk.LoadSessionResponse{}, err
	}
	done := make(chan struct{})
	close(done)
	s.release(done)
	return acpsdk.LoadSessionResponse{ConfigOptions: s.configOptions()}, nil
}

// open opens a session of the app layer for the client: its own App,
// loaded for cwd (the layers, the project's trust and sessions are
// cwd's), with the client's MCP servers and prompt.
func (a *agent) open(ctx context.Context, cwd string, servers []acpsdk.McpServer, prompt *promptMeta, pick app.Pick) (*session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams(fmt.Sprintf("cwd %q: want an absolute path", cwd))
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		// Else the session would start, and every extension fail to
		// start in a directory that is not there.
		return nil, invalidParams(fmt.Sprintf("cwd %q: not a directory panto can work in", cwd))
	}
	mcp, err := mcpServers(servers)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	closing := a.closing
	a.mu.Unlock()
	if closing {
		return nil, errors.New("panto is closing")
	}
	s := newSession(a)
	env := a.o.Env
	env.CWD = filepath.Clean(cwd)
	env.Notify = s.notice
	f := a.o.Flags
	f.Log = pick
	f.Given = prompt.given()
	f.MCPServers = mcp
	a.mu.Lock()
	caps := a.caps
	a.mu.Unlock()
	if ws := newWorkspace(s, caps); ws != nil {
		s.ws, f.Workspace = ws, ws
	}
	ap, err := app.Load(env, f)
	if err != nil {
		return nil, openErr(err, pick)
	}
	if err := ap.Prepare(true); err != nil {
		ap.Close()
		return nil, openErr(err, pick)
	}
	if err := s.start(ctx, ap); err != nil {
		ap.Close()
		return nil, openErr(err, pick)
	}
	a.mu.Lock()
	if a.closing {
		a.mu.Unlock()
		s.close(context.WithoutCancel(ctx))
		return nil, errors.New("panto is closing")
	}
	a.sessions[s.id] = s
	a.mu.Unlock()
	return s, nil
}

// openErr is the JSON-RPC error of a session that did not open: an id
// that names no session of the directory is resource-not-found.
func openErr(err error, pick app.Pick) error {
	if pick.Resume != "" && errors.Is(err, app.ErrNoSession) {
		return notFound(fmt.Sprintf("no session %s in this directory or any other (session/list lists them)", pick.Resume))
	}
	if errors.Is(err, app.ErrUsage) {
		return invalidParams(err.Error())
	}
	return &acpsdk.RequestError{Code: -32603, Message: err.Error()}
}

func (a *agent) session(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

func (a *agent) forget(s *session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions[s.id] == s {
		delete(a.sessions, s.id)
	}
}

// known returns the open session of id, or the resource-not-found error.
func (a *agent) known(id acpsdk.SessionId) (*session, error) {
	if s := a.session(string(id)); s != nil {
		return s, nil
	}
	return nil, notFound(fmt.Sprintf("no open session %q: open it with session/new or session/load", string(id)))
}

// Prompt runs one turn of the session.
func (a *agent) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	defer a.handle()()
	s, err := a.known(p.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	text, images, err := promptContent(p.Prompt)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	return s.prompt(ctx, text, images)
}

// Cancel stops the session's turn, as Ctrl-C does.
func (a *agent) Cancel(_ context.Context, p acpsdk.CancelNotification) error {
	if s := a.session(string(p.SessionId)); s != nil {
		s.cancel()
	}
	return nil
}

// CloseSession closes a session: its turn stopped, its log complete.
func (a *agent) CloseSession(ctx context.Context, p acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	defer a.handle()()
	s, err := a.known(p.SessionId)
	if err != nil {
		return acpsdk.CloseSessionResponse{}, err
	}
	a.forget(s)
	s.close(context.WithoutCancel(ctx))
	return acpsdk.CloseSessionResponse{}, nil
}

// pageSize is how many sessions session/list gives at once.
const pageSize = 50

// ListSessions lists the sessions of cwd (the process's when the client
// names none), newest first, pageSize at a time.
func (a *agent) ListSessions(_ context.Context, p acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	defer a.handle()()
	cwd := a.o.Env.CWD
	if p.Cwd != nil && *p.Cwd != "" {
		cwd = *p.Cwd
	}
	if !filepath.IsAbs(cwd) {
		return acpsdk.ListSessionsResponse{}, invalidParams(fmt.Sprintf("cwd %q: want an absolute path", cwd))
	}
	cwd = filepath.Clean(cwd)
	start := 0
	if p.Cursor != nil && *p.Cursor != "" {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 {
			return acpsdk.ListSessionsResponse{}, invalidParams(fmt.Sprintf("cursor %q: not one session/list gave", *p.Cursor))
		}
		start = n
	}
	items, err := app.SessionsOf(a.o.Env.Getenv, cwd)
	if err != nil {
		return acpsdk.ListSessionsResponse{}, &acpsdk.RequestError{Code: -32603, Message: err.Error()}
	}
	out := acpsdk.ListSessionsResponse{Sessions: []acpsdk.SessionInfo{}}
	if start > len(items) {
		start = len(items)
	}
	end := min(start+pageSize, len(items))
	for _, it := range items[start:end] {
		info := acpsdk.SessionInfo{SessionId: acpsdk.SessionId(it.ID), Cwd: cwd}
		if t := title(it.First); t != "" {
			info.Title = &t
		}
		if !it.Updated.IsZero() {
			u := it.Updated.UTC().Format(time.RFC3339)
			info.UpdatedAt = &u
		}
		out.Sessions = append(out.Sessions, info)
	}
	if end < len(items) {
		next := strconv.Itoa(end)
		out.NextCursor = &next
	}
	return out, nil
}

// ResumeSession is not offered (session/load is).
func (a *agent) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	defer a.handle()()
	return acpsdk.ResumeSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionResume)
}

// SetSessionConfigOption sets the model (configId "model").
func (a *agent) SetSessionConfigOption(_ context.Context, p acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	defer a.handle()()
	v := p.ValueId
	if v == nil {
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams("panto's options take a value (the model's name)")
	}
	s, err := a.known(v.SessionId)
	if err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	if v.ConfigId != modelOption {
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams(fmt.Sprintf("unknown config option %q: panto has %q", string(v.ConfigId), modelOption))
	}
	if err := s.setModel(string(v.Value)); err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	return acpsdk.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions()}, nil
}

// SetSessionMode: panto has no modes (its model is a config option).
func (a *agent) SetSessionMode(context.Context, acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	defer a.handle()()
	return acpsdk.SetSessionModeResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionSetMode)
}

// closeAll closes every session: the client has gone.
func (a *agent) closeAll(ctx context.Context) {
	a.mu.Lock()
	a.closing = true
	all := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		all = append(all, s)
	}
	a.sessions = map[string]*session{}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(func() {
			s.cancel()
			s.close(context.WithoutCancel(ctx))
		})
	}
	wg.Wait()
}

func invalidParams(msg string) error {
	return &acpsdk.RequestError{Code: -32602, Message: "Invalid params: " + msg, Data: map[string]any{"error": msg}}
}

func notFound(msg string) error {
	return &acpsdk.RequestError{Code: -32002, Message: "Resource not found: " + msg, Data: map[string]any{"error": msg}}
}
