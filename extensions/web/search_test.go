package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSearchBrave(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("X-Subscription-Token"); got != "secret-key" {
			http.Error(w, "bad key "+got, http.StatusUnauthorized)
			return
		}
		if q, n := r.URL.Query().Get("q"), r.URL.Query().Get("count"); q != "go errors" || n != "2" {
			t.Errorf("q=%q count=%q", q, n)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type":"search","web":{"results":[
{"title":"Errors are values","url":"https://go.dev/blog/errors-are-values","description":"How to <strong>handle</strong> errors &amp; more."},
{"title":"errors package","url":"https://pkg.go.dev/errors","description":"Package errors."},
{"title":"third","url":"https://x.example/3","description":"cut by count"}]}}`)
	}))
	defer srv.Close()
	h := harness(t, 5*time.Second, `{"search":{"endpoint":"`+srv.URL+`/res/v1/web/search","key":"secret-key"}}`)
	res := call(t, h, "search", map[string]any{"query": "go errors", "count": 2})
	if res.IsError {
		t.Fatal(res.Content)
	}
	want := `Results for "go errors":

1. Errors are values
   https://go.dev/blog/errors-are-values
   How to handle errors & more.

2. errors package
   https://pkg.go.dev/errors
   Package errors.
`
	if res.Content != want {
		t.Errorf("got\n%s\nwant\n%s", res.Content, want)
	}
}

func TestSearchSearXNG(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") != "json" {
			t.Errorf("format=%q, want json", r.URL.Query().Get("format"))
		}
		fmt.Fprint(w, `{"query":"q","results":[{"title":"A","url":"https://a.example/","content":"about a"}]}`)
	}))
	defer srv.Close()
	h := harness(t, 5*time.Second, `{"search":{"endpoint":"`+srv.URL+`/search","api":"searxng"}}`)
	res := call(t, h, "search", map[string]any{"query": "q"})
	if res.IsError || !strings.Contains(res.Content, "1. A\n   https://a.example/\n   about a\n") {
		t.Errorf("got %+v", res)
	}
}

func TestSearchErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "html" {
			fmt.Fprint(w, "<html>not json</html>")
			return
		}
		http.Error(w, `{"error":"rate limited"}`, http.StatusTooManyRequests)
	}))
	defer srv.Close()
	h := harness(t, 5*time.Second, `{"search":{"endpoint":"`+srv.URL+`/s?token=hidden","key":"k"}}`)
	res := call(t, h, "search", map[string]any{"query": "x"})
	if !res.IsError || !strings.Contains(res.Content, "HTTP 429 Too Many Requests") || strings.Contains(res.Content, "hidden") {
		t.Errorf("a 429: %s", res.Content)
	}
	res = call(t, h, "search", map[string]any{"query": "html"})
	if !res.IsError || !strings.Contains(res.Content, "not the JSON of the brave API") {
		t.Errorf("not JSON: %s", res.Content)
	}
	if res := call(t, h, "search", map[string]any{"query": " "}); !res.IsError || !strings.Contains(res.Content, `"query" is empty`) {
		t.Errorf("empty query: %s", res.Content)
	}
}

func TestSearchConfigErrors(t *testing.T) {
	for cfg, want := range map[string]string{
		`{"search":{"endpoint":"ftp://x"}}`:                  `search.endpoint "ftp://x": want an http or https URL`,
		`{"search":{"endpoint":"https://x","api":"google"}}`: `search.api "google": want "brave" or "searxng"`,
		`{"search":{"endpoint":"https://x","keys":"typo"}}`:  `unknown field "keys"`,
		`{"fetch":{}}`: `unknown field "fetch"`,
	} {
		_, err := parseConfig([]byte(cfg))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", cfg, err, want)
		}
	}
	if c, err := parseConfig([]byte(`{"search":{"endpoint":""}}`)); err != nil || c.Search != nil {
		t.Errorf("an empty endpoint leaves search off: %+v %v", c, err)
	}
}
