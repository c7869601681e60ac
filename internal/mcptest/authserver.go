package mcptest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// AuthServer is an OAuth authorization server and an MCP server it
// protects, in one httptest server: discovery (RFC 9728, RFC 8414),
// dynamic client registration, the authorization endpoint (which
// approves at once, as a person who signs in would), the token endpoint
// with PKCE, and /mcp, which takes only the tokens it issued.
type AuthServer struct {
	// URL is the server's root; its MCP endpoint is URL + "/mcp".
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	clients  map[string]string // client id → redirect URI
	codes    map[string]string // code → PKCE challenge
	tokens   map[string]bool
	n        int
	register int // registrations
}

func NewAuthServer(t testing.TB) *AuthServer {
	t.Helper()
	a := &AuthServer{clients: map[string]string{}, codes: map[string]string{}, tokens: map[string]bool{}}
	mux := http.NewServeMux()
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	base := a.srv.URL
	a.URL = base
	mux.Handle("/.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: base + "/mcp", AuthorizationServers: []string{base}}))
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		a.mu.Lock()
		a.n++
		a.register++
		id := fmt.Sprintf("client-%d", a.n)
		a.clients[id] = m.RedirectURIs[0]
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a.mu.Lock()
		redirect, ok := a.clients[q.Get("client_id")]
		a.n++
		code := fmt.Sprintf("code-%d", a.n)
		a.codes[code] = q.Get("code_challenge")
		a.mu.Unlock()
		if !ok || redirect != q.Get("redirect_uri") || q.Get("code_challenge_method") != "S256" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, redirect+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a.mu.Lock()
		defer a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if _, ok := a.clients[r.Form.Get("client_id")]; !ok {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		challenge, ok := a.codes[r.Form.Get("code")]
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_grant"}`)
			return
		}
		delete(a.codes, r.Form.Get("code"))
		a.n++
		tok := fmt.Sprintf("token-%d", a.n)
		a.tokens[tok] = true
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	})
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "protected", Version: "1"}, nil)
	s.AddTool(&mcpsdk.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "pong"}}}, nil
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if !a.tokens[tok] {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: base + "/.well-known/oauth-protected-resource"})(
		mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s }, nil)))
	return a
}

// Forget makes the authorization server forget every client and token.
func (a *AuthServer) Forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clients, a.tokens = map[string]string{}, map[string]bool{}
}

// Registrations is how many clients registered.
func (a *AuthServer) Registrations() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.register
}
