package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// OAuth for a server at a url, with the SDK's authorization-code handler
// and a device for a terminal: no browser is opened. A session's start
// never waits on a person: a server that answers 401 without a token
// panto holds is "needs auth", and /mcp auth NAME (or panto mcp auth
// NAME) starts the flow — it listens on a loopback port for the
// redirect, shows the authorization URL to open, and, once the
// authorization server redirects there, takes the token. The token, the
// client id the server's authorization server registered (dynamic client
// registration) and where they came from are kept per server URL under
// the user's state directory, mode 0600; a refreshed token is written
// back. A stored client the authorization server no longer knows
// (invalid_client) is forgotten and a new one registered.

// errNeedsAuth: the server wants authorization and there is no token.
var errNeedsAuth = errors.New("it needs authorization")

// authFlowTimeout bounds an authorization: the person opens the URL and
// signs in.
const authFlowTimeout = 5 * time.Minute

// authRecord is what panto keeps of one server URL's authorization: the
// token and the client it was issued to (a refresh names the client).
type authRecord struct {
	ServerURL    string        `json:"server_url"`
	ClientID     string        `json:"client_id,omitempty"`
	ClientSecret string        `json:"client_secret,omitempty"`
	RedirectURL  string        `json:"redirect_url,omitempty"`
	AuthURL      string        `json:"auth_url,omitempty"`
	TokenURL     string        `json:"token_url,omitempty"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token,omitempty"`
}

func (r *authRecord) config() *oauth2.Config {
	return &oauth2.Config{ClientID: r.ClientID, ClientSecret: r.ClientSecret, RedirectURL: r.RedirectURL, Scopes: r.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: r.AuthURL, TokenURL: r.TokenURL, AuthStyle: oauth2.AuthStyle(r.AuthStyle)}}
}

// authStore keeps the records in dir, one file per server URL.
type authStore struct {
	dir string
	mu  sync.Mutex
}

func (st *authStore) path(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return filepath.Join(st.dir, hex.EncodeToString(sum[:12])+".json")
}

// load returns the record of serverURL; a missing or unreadable one is
// an empty record.
func (st *authStore) load(serverURL string) authRecord {
	st.mu.Lock()
	defer st.mu.Unlock()
	r := authRecord{ServerURL: serverURL}
	if st.dir == "" {
		return r
	}
	b, err := os.ReadFile(st.path(serverURL))
	if err != nil || json.Unmarshal(b, &r) != nil || r.ServerURL != serverURL {
		return authRecord{ServerURL: serverURL}
	}
	return r
}

// save writes r whole, through a temporary file, mode 0600.
func (st *authStore) save(r authRecord) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.dir == "" {
		return errors.New("no folder to keep tokens in")
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return fmt.Errorf("keep the token: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := st.path(r.ServerURL)
	f, err := os.CreateTemp(st.dir, ".token-*")
	if err != nil {
		return fmt.Errorf("keep the token: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("keep the token: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("keep the token %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("keep the token %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}

// forgetClient drops the stored client and token: the authorization
// server no longer knows the client.
func (st *authStore) forgetClient(serverURL string) {
	r := st.load(serverURL)
	_ = st.save(authRecord{ServerURL: r.ServerURL})
}

// savingSource writes each new token back to the store.
type savingSource struct {
	mu    sync.Mutex
	src   oauth2.TokenSource
	store *authStore
	rec   authRecord
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, err := s.src.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_client" || re.ErrorCode == "invalid_grant") {
			s.store.forgetClient(s.rec.ServerURL)
			return nil, fmt.Errorf("%w: the authorization server refused the stored token (%s)", errNeedsAuth, re.ErrorCode)
		}
		return nil, err
	}
	if s.rec.Token == nil || tok.AccessToken != s.rec.Token.AccessToken {
		s.rec.Token = tok
		_ = s.store.save(s.rec)
	}
	return tok, nil
}

// serverAuth is a server's OAuthHandler: the stored token, and, only
// while a person runs /mcp auth, the authorization-code flow.
type serverAuth struct {
	store     *authStore
	serverURL string
	http      *http.Client

	mu     sync.Mutex
	source oauth2.TokenSource // nil: no token
	flow   *authFlow          // set while /mcp auth runs
}

func newServerAuth(store *authStore, serverURL string, client *http.Client) *serverAuth {
	a := &serverAuth{store: store, serverURL: serverURL, http: client}
	if r := store.load(serverURL); r.Token != nil && r.TokenURL != "" {
		a.source = &savingSource{src: r.config().TokenSource(context.Background(), r.Token), store: store, rec: r}
	}
	return a
}

func (a *serverAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.source == nil {
		return nil, nil
	}
	return a.source, nil
}

// Authorize runs the flow when a person started one; otherwise the
// server needs authorization.
func (a *serverAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	a.mu.Lock()
	flow := a.flow
	a.mu.Unlock()
	if flow == nil {
		resp.Body.Close()
		return errNeedsAuth
	}
	if err := flow.handler.Authorize(ctx, req, resp); err != nil {
		return err
	}
	src, err := flow.handler.TokenSource(ctx)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.source = src
	a.mu.Unlock()
	return nil
}

// authFlow is one authorization a person runs: the loopback listener the
// authorization server redirects to, and the SDK's handler.
type authFlow struct {
	handler  *auth.AuthorizationCodeHandler
	listener net.Listener
	url      chan string // the authorization URL, once known
}

// begin prepares a flow: a new loopback port for the redirect, and a
// new client registered for it with the authorization server (dynamic
// client registration), whose id is kept with the token: a refresh needs
// it. A flow never reuses a stored client, so one the authorization
// server no longer knows (invalid_client) is simply replaced.
func (a *serverAuth) begin() (*authFlow, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the authorization's redirect: %w", err)
	}
	redirect := "http://" + l.Addr().String() + "/callback"
	f := &authFlow{listener: l, url: make(chan string, 1)}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "panto", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		}},
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: f.fetch,
		RequestRefreshToken:      true,
		Client:                   a.http,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			r := authRecord{ServerURL: a.serverURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret, RedirectURL: c.RedirectURL,
				AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle), Scopes: c.Scopes, Token: tok}
			if err := a.store.save(r); err != nil {
				return nil, err
			}
			return &savingSource{src: c.TokenSource(context.WithoutCancel(ctx), tok), store: a.store, rec: r}, nil
		},
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		l.Close()
		return nil, err
	}
	f.handler = h
	a.mu.Lock()
	a.flow = f
	a.mu.Unlock()
	return f, nil
}

// redirect is where the current flow waits for the redirect.
func (a *serverAuth) redirect() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.flow == nil {
		return "a loopback port"
	}
	return "http://" + a.flow.listener.Addr().String() + "/callback"
}

// end closes the flow's listener.
func (a *serverAuth) end(f *authFlow) {
	f.listener.Close()
	a.mu.Lock()
	if a.flow == f {
		a.flow = nil
	}
	a.mu.Unlock()
}

// fetch shows the URL (through f.url) and waits for the redirect.
func (f *authFlow) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	select {
	case f.url <- args.URL:
	default:
	}
	got := make(chan *auth.AuthorizationResult, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			fmt.Fprintf(w, "panto: the authorization failed: %s. You may close this page.\n", e)
			select {
			case got <- &auth.AuthorizationResult{}:
			default:
			}
			return
		}
		fmt.Fprintln(w, "panto: authorized. You may close this page and go back to panto.")
		select {
		case got <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}:
		default:
		}
	})}
	go func() { _ = srv.Serve(f.listener) }()
	defer func() {
		// Shutdown, not Close: the page that says "authorized" is still
		// being written when the code arrives (Close cut it: EOF).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	select {
	case res := <-got:
		if res.Code == "" {
			return nil, errors.New("the authorization server refused the authorization")
		}
		return res, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("no authorization within %s: %w", authFlowTimeout, context.Cause(ctx))
	}
}
