package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The states of a server, as /mcp and panto mcp list show them.
const (
	stateStarting  = "starting"
	stateReady     = "ready"
	stateFailed    = "failed"
	stateNeedsAuth = "needs auth"
)

// server is one configured MCP server and its connection.
type server struct {
	cfg     Server
	version string // panto's, as the client's version
	logger  hclog.Logger
	// changed is called when the server's tools changed after the start
	// (notifications/tools/list_changed, a restart).
	changed func(s *server, reason string)
	// notify tells the user something about the server.
	notify func(level, text string)

	mu       sync.Mutex
	state    string
	err      error
	session  *mcp.ClientSession
	tools    []*mcp.Tool // offered, after enabled_tools and disabled_tools
	stderr   *tail
	restarts int
	closing  bool
	// reinitMu makes one call at a time initialise a new session.
	reinitMu sync.Mutex
	// auth is a server at a url's OAuth (nil for a stdio one).
	auth *serverAuth
}

func newServer(cfg Server, version string, logger hclog.Logger, store *authStore) *server {
	s := &server{cfg: cfg, version: version, logger: logger.Named(cfg.Name), state: stateStarting, stderr: newTail(2048)}
	if cfg.URL != "" && store != nil {
		s.auth = newServerAuth(store, cfg.URL, nil)
	}
	return s
}

// start connects and lists the tools, within the startup timeout.
func (s *server) start(ctx context.Context) error {
	return s.startWithin(ctx, s.cfg.Startup())
}

func (s *server) startWithin(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	err := s.connect(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(err, errNeedsAuth) {
		s.state, s.err = stateNeedsAuth, fmt.Errorf("%w: run /mcp auth %s (or panto mcp auth %s) to authorize it", errNeedsAuth, s.cfg.Name, s.cfg.Name)
		return s.err
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("it did not start within %s", limit)
			if limit == s.cfg.Startup() {
				err = fmt.Errorf("%w (startup_timeout)", err)
			}
		}
		if t := s.stderr.String(); t != "" {
			err = fmt.Errorf("%w; the end of its stderr:\n%s", err, indent(t))
		}
		s.state, s.err = stateFailed, err
		return err
	}
	s.state, s.err = stateReady, nil
	return nil
}

func (s *server) connect(ctx context.Context) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "panto", Version: s.version}, &mcp.ClientOptions{
		// No roots, no sampling, no elicitation: panto offers tools.
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { go s.relist("its tools changed") },
	})
	var transport mcp.Transport
	if s.cfg.URL != "" {
		t := &mcp.StreamableClientTransport{
			Endpoint:   s.cfg.URL,
			HTTPClient: &http.Client{Transport: headerTransport{headers: s.cfg.Headers}},
			MaxRetries: 2,
		}
		if s.auth != nil {
			t.OAuthHandler = s.auth
		}
		transport = t
	} else {
		cmd, err := serverCommand(s.cfg.Command, s.cfg.Args)
		if err != nil {
			return err
		}
		cmd.Dir = s.cfg.Cwd
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		for k, v := range s.cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		// Never the terminal: panto's log, and the tail for a failure.
		cmd.Stderr = io.MultiWriter(s.stderr, logLines{s.logger})
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	}
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	tools, err := s.list(ctx, cs)
	if err != nil {
		_ = cs.Close()
		return fmt.Errorf("list its tools: %w", err)
	}
	s.mu.Lock()
	s.session, s.tools = cs, tools
	s.mu.Unlock()
	go s.watch(cs)
	return nil
}

// list lists the server's tools, every page, and keeps those configured.
func (s *server) list(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if s.wanted(t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (s *server) wanted(tool string) bool {
	if len(s.cfg.EnabledTools) > 0 && !slices.Contains(s.cfg.EnabledTools, tool) {
		return false
	}
	return !slices.Contains(s.cfg.DisabledTools, tool)
}

// relist lists the tools again after the server said they changed.
func (s *server) relist(reason string) {
	s.mu.Lock()
	cs := s.session
	s.mu.Unlock()
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Startup())
	defer cancel()
	tools, err := s.list(ctx, cs)
	if err != nil {
		s.logger.Warn("list the tools again", "error", err)
		return
	}
	s.mu.Lock()
	same := sameTools(s.tools, tools)
	s.tools = tools
	changed := s.changed
	s.mu.Unlock()
	if !same && changed != nil {
		changed(s, reason)
	}
}

func sameTools(a, b []*mcp.Tool) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// watch waits for the connection to end. A server that ends while panto
// runs is started again, once, with a notice.
func (s *server) watch(cs *mcp.ClientSession) {
	err := cs.Wait()
	s.mu.Lock()
	if s.closing || s.session != cs {
		s.mu.Unlock()
		return
	}
	s.session, s.tools = nil, nil
	s.restarts++
	again := s.restarts == 1
	s.state, s.err = stateFailed, fmt.Errorf("it exited (%v)", err)
	if t := s.stderr.String(); t != "" {
		s.err = fmt.Errorf("%w; the end of its stderr:\n%s", s.err, indent(t))
	}
	why := s.err
	notify, changed := s.notify, s.changed
	s.mu.Unlock()
	if !again {
		if notify != nil {
			notify("error", fmt.Sprintf("mcp server %s stopped again and is not restarted: %v", s.cfg.Name, why))
		}
		if changed != nil {
			changed(s, "it stopped")
		}
		return
	}
	if notify != nil {
		notify("warning", fmt.Sprintf("mcp server %s stopped; starting it again: %v", s.cfg.Name, why))
	}
	s.stderr.Reset()
	err = s.start(context.Background())
	if err != nil && notify != nil {
		notify("error", fmt.Sprintf("mcp server %s did not start again: %v", s.cfg.Name, err))
	}
	if changed != nil {
		changed(s, "it was restarted")
	}
}

// authorize starts the authorization of a server at a url and returns
// the URL the person opens; the flow goes on in the background, and the
// server starts once it is done (its tools are offered from the next
// turn; done is told how it ended). A command has the hook deadline to
// answer: a URL that takes longer than urlWait to come is given to late
// instead.
func (s *server) authorize(done func(error), late func(url string)) (string, error) {
	if s.auth == nil {
		return "", fmt.Errorf("mcp server %s is not at a url: there is nothing to authorize", s.cfg.Name)
	}
	flow, err := s.auth.begin()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if s.session != nil {
		old := s.session
		s.session = nil // a new session follows, authorized
		s.mu.Unlock()
		_ = old.Close()
	} else {
		s.mu.Unlock()
	}
	ended := make(chan error, 1)
	go func() {
		err := s.startWithin(context.Background(), authFlowTimeout)
		s.auth.end(flow)
		ended <- err
		done(err)
	}()
	select {
	case u := <-flow.url:
		return u, nil
	case err := <-ended:
		if err == nil {
			return "", nil // authorized without a person: a stored token did
		}
		return "", err
	case <-time.After(urlWait):
		go func() {
			select {
			case u := <-flow.url:
				late(u)
			case <-time.After(authFlowTimeout):
			}
		}()
		return "", errURLLate
	}
}

// urlWait is how long /mcp auth waits for the authorization URL before
// it answers (well inside the hook deadline).
const urlWait = 2 * time.Second

// errURLLate: the flow runs, and its URL comes as a notice.
var errURLLate = errors.New("the authorization URL comes as a notice")

// snap is a server's state, why it failed and its tools, at one moment.
type snap struct {
	state string
	err   error
	tools []*mcp.Tool
}

func (s *server) snapshot() snap {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snap{s.state, s.err, slices.Clone(s.tools)}
}

// call runs one tool call under the server's tool timeout. A call cut
// by the timeout, or cancelled, is cancelled at the server too
// (notifications/cancelled; the SDK sends it when ctx ends).
func (s *server) call(ctx context.Context, tool string, input json.RawMessage, timeout time.Duration) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	cs := s.session
	state, why := s.state, s.err
	s.mu.Unlock()
	if cs == nil {
		if why != nil {
			return nil, fmt.Errorf("mcp server %s is %s: %v", s.cfg.Name, state, why)
		}
		return nil, fmt.Errorf("mcp server %s is %s", s.cfg.Name, state)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errToolTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: input})
	if errors.Is(err, mcp.ErrSessionMissing) {
		// The server forgot the session (a Streamable HTTP server that
		// restarted, or expired it: 404): initialise a new one and call
		// again, once.
		if cs, err = s.reinit(ctx, cs); err == nil {
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: input})
		}
	}
	if err == nil {
		return res, nil
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errToolTimeout):
		return nil, fmt.Errorf("mcp server %s: %s did not finish within %s (tool_timeout); the server was told to stop it", s.cfg.Name, tool, timeout)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("mcp server %s: %s was interrupted (%v); the server was told to stop it, and what it did is not known", s.cfg.Name, tool, cause)
	}
	return nil, fmt.Errorf("mcp server %s: %s failed: %w", s.cfg.Name, tool, err)
}

var errToolTimeout = errors.New("tool_timeout")

// reinit replaces the session old, which the server no longer knows,
// with a new one (unless another call did already).
func (s *server) reinit(ctx context.Context, old *mcp.ClientSession) (*mcp.ClientSession, error) {
	s.reinitMu.Lock()
	defer s.reinitMu.Unlock()
	s.mu.Lock()
	if s.session != old && s.session != nil {
		cs := s.session
		s.mu.Unlock()
		return cs, nil
	}
	s.session = nil // watch leaves it alone: not a server that exited
	s.mu.Unlock()
	_ = old.Close()
	s.logger.Info("the server no longer knows the session; initialising a new one")
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Startup())
	defer cancel()
	if err := s.connect(ctx); err != nil {
		s.mu.Lock()
		s.state, s.err = stateFailed, fmt.Errorf("its session expired and a new one could not be initialised: %w", err)
		s.mu.Unlock()
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.err = stateReady, nil
	return s.session, nil
}

// close ends the connection: stdin closed, then SIGTERM, then the
// reaper's group killed.
func (s *server) close() {
	s.mu.Lock()
	s.closing = true
	cs := s.session
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct{ headers map[string]string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "\uFFFD"))
}

func (t *tail) Reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}

// logLines writes a server's stderr to panto's log, a line at a time.
type logLines struct{ logger hclog.Logger }

func (l logLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			l.logger.Info(line, "stream", "stderr")
		}
	}
	return len(p), nil
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
