package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sandbox"
	"github.com/panto-dev/panto/sdk/sdktest"
)

// harness starts the extension in the sdk's test harness, with a fetch
// capped at timeout and config as panto would hand it over.
func harness(t *testing.T, timeout time.Duration, config string) *sdktest.Harness {
	t.Helper()
	h := sdktest.New(t, &ext{f: newFetcher(nil, timeout)})
	var raw json.RawMessage
	if config != "" {
		raw = json.RawMessage(config)
	}
	if err := h.Init(raw); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return h
}

func call(t *testing.T, h *sdktest.Harness, tool string, input any) sdk.ToolResult {
	t.Helper()
	b, _ := json.Marshal(input)
	res, err := h.CallTool(tool, b)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// callIn runs a tool as panto does when the call carries a sandbox.
func callIn(t *testing.T, h *sdktest.Harness, tool string, input any, sb *sdk.Sandbox) sdk.ToolResult {
	t.Helper()
	b, _ := json.Marshal(input)
	for _, tl := range h.Tools() {
		if tl.Name == tool {
			res, err := tl.Run(t.Context(), h.Host(), sdk.ToolCall{ID: "c1", Name: tool, Input: b, Sandbox: sb})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", tool)
	return sdk.ToolResult{}
}

func TestToolsOffered(t *testing.T) {
	h := harness(t, time.Second, "")
	if names := toolNames(h); names != "fetch" {
		t.Errorf("without config the tools are %q, want only fetch (search is off by default)", names)
	}
	h = harness(t, time.Second, `{"search":{"endpoint":"https://api.search.brave.com/res/v1/web/search","key":"k"}}`)
	if names := toolNames(h); names != "fetch,search" {
		t.Errorf("with search configured the tools are %q, want fetch,search", names)
	}
	if h.Info().Name != "web" {
		t.Errorf("the extension's name is %q, want web", h.Info().Name)
	}
}

func toolNames(h *sdktest.Harness) string {
	var names []string
	for _, t := range h.Tools() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ",")
}

func TestFetchHTMLAsMarkdown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("method %s, want GET", r.Method)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Docs</title><script>track()</script></head>
<body><h1>Install</h1><p>Run <code>make install</code>, then see <a href="/next">the next page</a>.</p></body></html>`)
	}))
	defer srv.Close()
	res := call(t, harness(t, 5*time.Second, ""), "fetch", map[string]any{"url": srv.URL + "/docs"})
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	for _, want := range []string{
		"URL: " + srv.URL + "/docs\n",
		"Content-Type: text/html; charset=utf-8\n",
		"Title: Docs\n",
		"# Install\n\nRun `make install`, then see [the next page](" + srv.URL + "/next).",
	} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("missing %q in\n%s", want, res.Content)
		}
	}
	if strings.Contains(res.Content, "track()") {
		t.Errorf("the script is in the result:\n%s", res.Content)
	}
}

func TestFetchTextKeptAndLatin1Decoded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"name": "panto", "tags": ["<b>", "*x*"]}`)
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9\n"))
		}
	}))
	defer srv.Close()
	h := harness(t, 5*time.Second, "")
	res := call(t, h, "fetch", map[string]any{"url": srv.URL + "/json"})
	if res.IsError || !strings.HasSuffix(res.Content, "\n\n"+`{"name": "panto", "tags": ["<b>", "*x*"]}`) {
		t.Errorf("JSON not kept as it is:\n%s", res.Content)
	}
	res = call(t, h, "fetch", map[string]any{"url": srv.URL + "/latin1"})
	if res.IsError || !strings.Contains(res.Content, "café") {
		t.Errorf("Latin-1 not decoded:\n%s", res.Content)
	}
}

func TestFetchRedirects(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/b", http.StatusFound) })
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/a", http.StatusMovedPermanently) })
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/new", http.StatusFound) })
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "moved here") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	h := harness(t, 5*time.Second, "")

	res := call(t, h, "fetch", map[string]any{"url": srv.URL + "/old"})
	if res.IsError || !strings.Contains(res.Content, "URL: "+srv.URL+"/new\n") || !strings.Contains(res.Content, "moved here") {
		t.Errorf("one redirect not followed to the final URL:\n%s", res.Content)
	}

	res = call(t, h, "fetch", map[string]any{"url": srv.URL + "/a"})
	if !res.IsError {
		t.Fatalf("a redirect loop is not an error:\n%s", res.Content)
	}
	for _, want := range []string{"a redirect loop", srv.URL + "/a -> " + srv.URL + "/b -> " + srv.URL + "/a"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("the loop's error lacks %q:\n%s", want, res.Content)
		}
	}
	if n := strings.Count(res.Content, " -> "); n != maxRedirects {
		t.Errorf("the chain has %d hops, want %d:\n%s", n, maxRedirects, res.Content)
	}
}

func TestFetchOversize(t *testing.T) {
	chunk := strings.Repeat("x", 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Path == "/declared" {
			w.Header().Set("Content-Length", fmt.Sprint(12<<20))
		}
		for range 12 {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	h := harness(t, 10*time.Second, "")
	res := call(t, h, "fetch", map[string]any{"url": srv.URL + "/declared"})
	if !res.IsError || !strings.Contains(res.Content, "the body is 12.0 MB (Content-Length), over the 10 MB cap") {
		t.Errorf("a declared 12 MB body:\n%.300s", res.Content)
	}
	res = call(t, h, "fetch", map[string]any{"url": srv.URL + "/chunked"})
	if !res.IsError || !strings.Contains(res.Content, "over the 10 MB cap (more than 10.0 MB were sent)") {
		t.Errorf("a streamed 12 MB body:\n%.300s", res.Content)
	}
}

func TestFetchBinaryRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/png":
			w.Header().Set("Content-Type", "image/png")
		case "/zip":
			w.Header().Set("Content-Type", "application/zip")
		case "/nul":
			w.Header().Set("Content-Type", "text/plain")
		}
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00"))
	}))
	defer srv.Close()
	h := harness(t, 5*time.Second, "")
	for path, want := range map[string]string{
		"/png": "the content type is image/png, which is not text",
		"/zip": "the content type is application/zip, which is not text",
		"/nul": `the body is binary (a NUL byte), though its content type is "text/plain"`,
	} {
		res := call(t, h, "fetch", map[string]any{"url": srv.URL + path})
		if !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s: want an error saying %q, got:\n%s", path, want, res.Content)
		}
	}
}

func TestFetchNetworkOff(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	h := harness(t, 5*time.Second, `{"search":{"endpoint":"`+srv.URL+`","api":"searxng"}}`)
	off := &sdk.Sandbox{Mode: sdk.SandboxWorkspaceWrite, Network: false}
	res := callIn(t, h, "fetch", map[string]any{"url": srv.URL}, off)
	if !res.IsError || res.SandboxBlocked != sandbox.NetworkBlocked || !strings.Contains(res.Content, "blocked by the sandbox: network is off (sandbox.network = false); nothing was fetched") {
		t.Errorf("fetch with the network off: %+v", res)
	}
	res = callIn(t, h, "search", map[string]any{"query": "x"}, off)
	if !res.IsError || res.SandboxBlocked != sandbox.NetworkBlocked {
		t.Errorf("search with the network off: %+v", res)
	}
	if hits != 0 {
		t.Errorf("the server was reached %d times with the network off", hits)
	}
	on := &sdk.Sandbox{Mode: sdk.SandboxWorkspaceWrite, Network: true}
	if res := callIn(t, h, "fetch", map[string]any{"url": srv.URL}, on); res.IsError || hits != 1 {
		t.Errorf("fetch with the network on: %+v (hits %d)", res, hits)
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	res := call(t, harness(t, 200*time.Millisecond, ""), "fetch", map[string]any{"url": srv.URL})
	if !res.IsError || !strings.Contains(res.Content, "timed out after 200ms") {
		t.Errorf("a server that never answers: %s", res.Content)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %s", d)
	}
}

func TestFetchHTTPErrorAndBadInput(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/html" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "<html><head><title>Oops</title></head><body><h1>Server error</h1><p>Try later.</p></body></html>")
			return
		}
		http.Error(w, "no such page", http.StatusNotFound)
	}))
	defer srv.Close()
	h := harness(t, 5*time.Second, "")
	for _, tc := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"url": srv.URL + "/gone"}, "HTTP 404 Not Found: no such page"},
		{map[string]any{"url": srv.URL + "/html"}, "HTTP 500 Internal Server Error: # Server error Try later."},
		{map[string]any{"url": "file:///etc/passwd"}, "only http and https URLs are fetched, not file"},
		{map[string]any{"url": "example.com"}, `"example.com" is not an absolute URL`},
		{map[string]any{}, `missing required field "url"`},
		{map[string]any{"url": srv.URL, "method": "POST"}, `unknown field "method"`},
		{map[string]any{"url": srv.URL, "max_length": 1 << 30}, `field "max_length" must be between 1 and 204800`},
	} {
		res := call(t, h, "fetch", tc.in)
		if !res.IsError || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%v: want an error with %q, got %q", tc.in, tc.want, res.Content)
		}
	}
}

func TestFetchCutAndReadOn(t *testing.T) {
	var body strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&body, "line %04d\n", i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, body.String())
	}))
	defer srv.Close()
	h := harness(t, 5*time.Second, "")
	res := call(t, h, "fetch", map[string]any{"url": srv.URL, "max_length": 1000})
	if res.IsError || !strings.Contains(res.Content, "line 0099\n") || strings.Contains(res.Content, "line 0100") {
		t.Fatalf("the first 1000 bytes, cut at a line end:\n%s", res.Content)
	}
	if !strings.Contains(res.Content, "[Cut at 1000 bytes: showing bytes 0-1000 of 20000; 19000 more bytes not shown. Call fetch with start=1000 to read on.]") {
		t.Errorf("the cut's note:\n%s", res.Content)
	}
	res = call(t, h, "fetch", map[string]any{"url": srv.URL, "max_length": 1000, "start": 1000})
	if res.IsError || !strings.Contains(res.Content, "\n\nline 0100\n") {
		t.Errorf("reading on from start=1000:\n%s", res.Content)
	}
}

// A redirect to another host is not followed: the model is told where
// it leads, and fetching that is a call of its own, which the
// permission rules see.
func TestFetchRedirectToAnotherHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other host was fetched: %s", r.URL)
	}))
	defer other.Close()
	// The same server under another name: localhost, not 127.0.0.1.
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/there"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusMovedPermanently)
	}))
	defer srv.Close()
	res := call(t, harness(t, 5*time.Second, ""), "fetch", map[string]any{"url": srv.URL + "/here"})
	if res.IsError || !strings.Contains(res.Content, "Redirected (HTTP 301 Moved Permanently) to another host: "+target+"\nfetch does not follow a redirect to another host; call fetch with that URL to read it.") {
		t.Errorf("got:\n%s", res.Content)
	}
}
