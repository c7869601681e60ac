package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// webServer is a local site: an HTML page, a redirect loop, a PNG and a
// search API in the Brave shape (key "k1" only).
func webServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>Release notes</title><script>spy()</script></head><body>
<nav>Home</nav><h1>panto 1.2</h1><p>Adds a <a href="/web">web extension</a>.</p><ul><li>fetch</li><li>search</li></ul></body></html>`)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop2", http.StatusFound) })
	mux.HandleFunc("/loop2", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/logo.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "k1" {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"web":{"results":[{"title":"panto","url":"https://panto.example/","description":"about %s"}]}}`, r.URL.Query().Get("q"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// inLog reports whether the session log at path holds text in a string
// (as JSON writes it).
func inLog(t *testing.T, path, text string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(text))
	return strings.Contains(string(data), strings.Trim(strings.TrimSpace(b.String()), `"`))
}

// anyLog reports whether one of h's session logs holds text.
func anyLog(t *testing.T, h *harness, text string) bool {
	t.Helper()
	for _, l := range h.sessionFiles() {
		if inLog(t, l, text) {
			return true
		}
	}
	return false
}

// The web extension, run by the real panto with the echo provider: fetch
// turns a local page into Markdown, refuses a redirect loop and a PNG,
// is refused while the sandbox's network is off, and search is offered
// only once [web.search] names an API.
func TestWebExtensionFetchAndSearch(t *testing.T) {
	t.Parallel()
	srv := webServer(t)
	h := newHarness(t)
	web := []string{"--provider", "echo", "--extension", filepath.Join(pluginDir, "web")}

	// The sandbox is on by default, its network off: nothing is fetched.
	r := h.ok(append([]string{"-p", `tool:fetch {"url": "` + srv.URL + `/page"}`}, web...)...)
	require.Contains(t, r.stdout, "fetch (error, 1 line(s)): fetch "+srv.URL+"/page: blocked by the sandbox", r.stdout)
	require.True(t, anyLog(t, h, "fetch "+srv.URL+"/page: blocked by the sandbox: network is off (sandbox.network = false); nothing was fetched"), "the refusal in the log")

	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nnetwork = true\n")
	prompt := `tool:fetch {"url": "` + srv.URL + `/page"}` + "\n" +
		`tool:fetch {"url": "` + srv.URL + `/loop"}` + "\n" +
		`tool:fetch {"url": "` + srv.URL + `/logo.png"}` + "\n" +
		`tool:search {"query": "x"}`
	r = h.ok(append([]string{"-p", prompt}, web...)...)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 6, r.stdout)
	require.Equal(t, "  fetch (ok, 10 line(s)): URL: "+srv.URL+"/page", lines[2])
	require.Contains(t, lines[3], "fetch (error, 1 line(s)): fetch "+srv.URL+"/loop: too many redirects", lines[3])
	require.Contains(t, lines[4], "fetch (error, 1 line(s)): fetch "+srv.URL+"/logo.png: the content type", lines[4])
	require.True(t, anyLog(t, h, "fetch "+srv.URL+"/loop: too many redirects: a redirect loop: "+srv.URL+"/loop -> "+srv.URL+"/loop2 -> "+srv.URL+"/loop -> "))
	require.True(t, anyLog(t, h, "fetch "+srv.URL+"/logo.png: the content type is image/png, which is not text; fetch returns text and HTML only"))
	require.Contains(t, lines[5], `search (error, 1 line(s)): unknown tool "search"`, "search is off by default")
	logs := h.sessionFiles()
	require.NotEmpty(t, logs)
	var log string
	for _, l := range logs {
		if inLog(t, l, "Title: Release notes") {
			log = l
		}
	}
	require.NotEmpty(t, log, "no log holds the fetched page")
	require.True(t, inLog(t, log, "# panto 1.2\n\nAdds a [web extension]("+srv.URL+"/web).\n\n- fetch\n- search\n"), "the page as Markdown in %s", log)
	require.False(t, inLog(t, log, "spy()"), "the page's script reached the model")

	// [web.search] turns search on, with the key from key_env.
	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nnetwork = true\n\n[web.search]\nendpoint = \""+srv.URL+"/search\"\nkey_env = \"WEB_TEST_KEY\"\n")
	h.env["WEB_TEST_KEY"] = "k1"
	r = h.ok(append([]string{"-p", `tool:search {"query": "release"}`}, web...)...)
	require.Contains(t, r.stdout, `search (ok, 5 line(s)): Results for "release":`, r.stdout)
}

// fetch goes through the permission rules like any tool: asked about
// in the default mode (and so denied in print mode), run with --allow,
// refused by a deny rule; a rule may name the URL's host.
func TestWebFetchPermissions(t *testing.T) {
	t.Parallel()
	srv := webServer(t)
	h := newHarness(t)
	h.env["PANTO_PERMISSION_MODE"] = "default"
	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nnetwork = true\n")
	web := []string{"--provider", "echo", "--extension", filepath.Join(pluginDir, "web")}
	fetch := `tool:fetch {"url": "` + srv.URL + `/page"}`

	r := h.ok(append([]string{"-p", fetch}, web...)...)
	require.Contains(t, r.stdout, "fetch (error, 1 line(s)): not run: fetch", r.stdout)
	require.True(t, anyLog(t, h, "fetch is asked about (permission mode default), and there is nobody to ask here (print mode)"), "the denial in the log")

	r = h.ok(append([]string{"-p", fetch, "--allow", "fetch"}, web...)...)
	require.Contains(t, r.stdout, "fetch (ok, 10 line(s)): URL: "+srv.URL+"/page", r.stdout)

	// A rule names the URL's host.
	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nnetwork = true\n[permissions]\nallow = [\"fetch(127.0.0.1)\"]\n")
	r = h.ok(append([]string{"-p", fetch}, web...)...)
	require.Contains(t, r.stdout, "fetch (ok, 10 line(s)): URL: "+srv.URL+"/page", r.stdout)
	r = h.ok(append([]string{"-p", strings.Replace(fetch, "127.0.0.1", "localhost", 1)}, web...)...)
	require.Contains(t, r.stdout, "fetch (error, 1 line(s)): not run: fetch", "another host is asked about: %s", r.stdout)

	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nnetwork = true\n[permissions]\ndeny = [\"fetch(127.0.0.1)\"]\n")
	r = h.ok(append([]string{"-p", fetch, "--allow", "fetch"}, web...)...)
	require.True(t, anyLog(t, h, "not run: denied by the permission rule fetch(127.0.0.1) denies 127.0.0.1"), "the host rule's denial in the log")

	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nnetwork = true\n[permissions]\ndeny = [\"fetch\"]\n")
	r = h.ok(append([]string{"-p", fetch, "--allow", "fetch"}, web...)...)
	require.Contains(t, r.stdout, "fetch (error, 1 line(s)): not run: denied by the permission rule fetch", r.stdout)
	require.True(t, anyLog(t, h, "not run: denied by the permission rule fetch denies every fetch call"), "the denial in the log")
}

// PANTO_WEB_TEST_TIMEOUT shortens the 30 s cap of a fetch, for tests: a
// server that never answers is given up on, and the call says so.
func TestWebFetchTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	h := newHarness(t)
	h.write(filepath.Join(h.userDir(), "config.toml"), "[sandbox]\nnetwork = true\n")
	h.env["PANTO_WEB_TEST_TIMEOUT"] = "300ms"
	r := h.ok("-p", `tool:fetch {"url": "`+srv.URL+`/slow"}`, "--provider", "echo", "--extension", filepath.Join(pluginDir, "web"))
	require.Contains(t, r.stdout, "fetch (error, 1 line(s)): fetch "+srv.URL+"/slow: timed out after 300ms", r.stdout)
}
