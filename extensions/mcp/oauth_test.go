package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/mcptest"
	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

func authHarness(t *testing.T, a *mcptest.AuthServer, dir string) (*sdktest.Harness, *ext) {
	t.Helper()
	e := &ext{}
	h := sdktest.New(t, e)
	t.Cleanup(e.closeAll)
	b, err := json.Marshal(Config{Servers: []Server{{Name: "web", Source: "test", URL: a.URL + "/mcp"}}, AuthDir: dir})
	require.NoError(t, err)
	require.NoError(t, h.Init(b))
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	return h, e
}

func notices(h *sdktest.Harness) string {
	var out []string
	for _, n := range h.Notices() {
		out = append(out, n.Text)
	}
	return strings.Join(out, "\n")
}

// authorizeAsAPerson runs /mcp auth web and opens the URL it shows, as a
// person would in a browser; it returns the command's output.
func authorizeAsAPerson(t *testing.T, h *sdktest.Harness) string {
	t.Helper()
	out, err := h.Command("mcp", "auth web")
	require.NoError(t, err)
	var u string
	for _, line := range strings.Split(out.Output, "\n") {
		if s := strings.TrimSpace(line); strings.HasPrefix(s, "http") {
			u = s
		}
	}
	require.NotEmpty(t, u, "the URL to open: %s", out.Output)
	resp, err := http.Get(u) // follows the redirect to panto's loopback port
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(body), "panto: authorized")
	return out.Output
}

func TestOAuth(t *testing.T) {
	a := mcptest.NewAuthServer(t)
	dir := t.TempDir()

	// No token: the start does not wait on a person.
	h, _ := authHarness(t, a, dir)
	assert.Empty(t, h.Tools())
	assert.Contains(t, notices(h), "mcp server web (test) it needs authorization: run /mcp auth web (or panto mcp auth web) to authorize it")
	out, err := h.Command("mcp", "")
	require.NoError(t, err)
	assert.Contains(t, out.Output, "web (http, test): needs auth")

	shown := authorizeAsAPerson(t, h)
	assert.Contains(t, shown, "To authorize mcp server web, open this URL in a browser")
	assert.Contains(t, shown, "http://127.0.0.1:", "the loopback redirect")
	require.Eventually(t, func() bool { return len(h.Tools()) == 1 }, 20*time.Second, 20*time.Millisecond, "notices: %s", notices(h))
	res, err := h.CallTool("mcp__web__ping", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, "pong", res.Content)
	assert.Contains(t, notices(h), "mcp server web is authorized and ready")

	// The token and the client id are kept, mode 0600.
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	require.Len(t, files, 1)
	st, err := os.Stat(files[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	var rec authRecord
	b, _ := os.ReadFile(files[0])
	require.NoError(t, json.Unmarshal(b, &rec))
	assert.Equal(t, "client-1", rec.ClientID)
	require.NotNil(t, rec.Token)

	// The next session starts with the kept token: no person needed.
	h2, _ := authHarness(t, a, dir)
	require.Len(t, h2.Tools(), 1, "notices: %s", notices(h2))
	assert.Equal(t, 1, a.Registrations(), "no new client")

	// The authorization server forgot the client and its token: the
	// server needs authorization again, and a new client is registered.
	a.Forget()
	h3, _ := authHarness(t, a, dir)
	assert.Empty(t, h3.Tools())
	assert.Contains(t, notices(h3), "needs authorization")
	authorizeAsAPerson(t, h3)
	require.Eventually(t, func() bool { return len(h3.Tools()) == 1 }, 20*time.Second, 20*time.Millisecond, "notices: %s", notices(h3))
	assert.Equal(t, 2, a.Registrations(), "registered again")
}
