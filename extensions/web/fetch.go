package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sandbox"
	"golang.org/x/net/html/charset"
)

// The caps of one fetch.
const (
	// maxBody is the most of a response body fetch reads.
	maxBody = 10 << 20
	// fetchTimeout bounds a whole fetch: connecting, redirects, reading.
	fetchTimeout = 30 * time.Second
	// maxRedirects is how many redirects fetch follows.
	maxRedirects = 10
	// defaultLength and maxLength bound what the model is given, in
	// bytes of the converted text.
	defaultLength = 50 * 1024
	maxLength     = 200 * 1024
)

// fetchParams is fetch's input schema.
const fetchParams = `{"type":"object","properties":{
"url":{"type":"string","description":"The http or https URL to fetch (GET)."},
"max_length":{"type":"integer","description":"The most bytes of text to return (default 51200, max 204800); the rest is cut with a note."},
"start":{"type":"integer","description":"The byte offset of the converted text to start at, to read on after a cut (default 0)."}},
"required":["url"],"additionalProperties":false}`

type fetchInput struct {
	URL       string `json:"url"`
	MaxLength int    `json:"max_length"`
	Start     int    `json:"start"`
}

// fetcher fetches pages: client is the HTTP client (its redirect policy
// set by newFetcher), timeout the cap of one fetch.
type fetcher struct {
	client  *http.Client
	timeout time.Duration
}

// newFetcher is a fetcher with the given transport (nil: the default)
// and timeout.
func newFetcher(rt http.RoundTripper, timeout time.Duration) *fetcher {
	if rt == nil {
		// The fetch's context holds the timeout, for the whole fetch.
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &fetcher{timeout: timeout, client: &http.Client{Transport: rt, CheckRedirect: checkRedirect}}
}

// errRedirects is the error of too many redirects; its text is built
// by checkRedirect.
var errRedirects = errors.New("too many redirects")

// checkRedirect follows at most maxRedirects redirects, to http and
// https only and on the same host, and names the chain when it stops. A
// redirect to another host is not followed: fetch returns it (see
// fetch), so that a permission rule about a host holds for what is
// fetched.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return fmt.Errorf("redirected to %s: only http and https URLs are fetched", req.URL.Redacted())
	}
	if len(via) > 0 && !strings.EqualFold(req.URL.Hostname(), via[0].URL.Hostname()) {
		// Another host: fetch answers with the redirect, and the model
		// fetches it, so the permission rules see that host.
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		chain := make([]string, 0, len(via)+1)
		loop := false
		for _, r := range via {
			chain = append(chain, r.URL.Redacted())
			loop = loop || r.URL.String() == req.URL.String()
		}
		chain = append(chain, req.URL.Redacted())
		what := fmt.Sprintf("more than %d redirects", maxRedirects)
		if loop {
			what = "a redirect loop"
		}
		return fmt.Errorf("%w: %s: %s", errRedirects, what, strings.Join(chain, " -> "))
	}
	return nil
}

// networkOff is the sandbox's refusal of a fetch, or nil when the call
// may use the network: the sandbox is off (nil) or lets the network on.
// fetch is Go code in this process, not a sandboxed program, so it
// honours the switch itself, on every system.
func networkOff(sb *sdk.Sandbox, what string) *sdk.ToolResult {
	if sb == nil || sb.Network {
		return nil
	}
	return &sdk.ToolResult{
		Content:        what + ": blocked by the sandbox: " + sandbox.NetworkBlocked + "; nothing was fetched. Set sandbox.network = true to let the web tools reach the network (docs/permissions.md)",
		IsError:        true,
		SandboxBlocked: sandbox.NetworkBlocked,
	}
}

// checkURL parses a URL the model gave: absolute, http or https, a host.
func checkURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid input: field \"url\": %v", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return nil, fmt.Errorf("invalid input: field \"url\": %q is not an absolute URL; give one such as https://example.com/page", raw)
	default:
		return nil, fmt.Errorf("invalid input: field \"url\": %s: only http and https URLs are fetched, not %s", u.Redacted(), u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid input: field \"url\": %s has no host", u.Redacted())
	}
	return u, nil
}

// page is a fetched page, its content as text.
type page struct {
	url, contentType, title, text string
	status                        int
}

// fetch GETs u, following redirects, and returns its content as text:
// HTML as Markdown, other text as it is. Binary content, a body over
// maxBody and an HTTP error status are errors.
func (f *fetcher) fetch(ctx context.Context, u *url.URL) (page, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return page{}, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", "panto-web/1.0 (+https://github.com/panto-dev/panto)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return page{}, f.describe(ctx, u, err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
		to, err := final.Parse(loc)
		if err != nil {
			return page{}, fmt.Errorf("fetch %s: HTTP %s to %q, which is not a URL", final.Redacted(), resp.Status, loc)
		}
		return page{url: final.String(), status: resp.StatusCode,
			text: fmt.Sprintf("Redirected (HTTP %s) to another host: %s\nfetch does not follow a redirect to another host; call fetch with that URL to read it.\n", resp.Status, to.Redacted())}, nil
	}
	ct := resp.Header.Get("Content-Type")
	kind, err := classify(ct)
	if err != nil {
		return page{}, fmt.Errorf("fetch %s: %w", final.Redacted(), err)
	}
	if resp.ContentLength > maxBody {
		return page{}, fmt.Errorf("fetch %s: the body is %s (Content-Length), over the 10 MB cap; nothing was read", final.Redacted(), size(resp.ContentLength))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return page{}, f.describe(ctx, final, err)
	}
	if len(body) > maxBody {
		return page{}, fmt.Errorf("fetch %s: the body is over the 10 MB cap (more than %s were sent); nothing is returned", final.Redacted(), size(maxBody))
	}
	if resp.StatusCode >= 400 {
		shown := body
		if kind == kindHTML {
			// The error page's words, not its markup.
			if _, md, err := toMarkdown(bytes.NewReader(body[:min(len(body), 64<<10)]), final); err == nil {
				shown = []byte(md)
			}
		}
		return page{}, fmt.Errorf("fetch %s: HTTP %s%s", final.Redacted(), resp.Status, snippet(shown))
	}
	if kind == kindText && looksBinary(body) {
		return page{}, fmt.Errorf("fetch %s: the body is binary (a NUL byte), though its content type is %q; fetch returns text only", final.Redacted(), ct)
	}
	p := page{url: final.String(), contentType: ct, status: resp.StatusCode}
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err != nil {
		r = bytes.NewReader(body)
	}
	switch kind {
	case kindHTML:
		title, md, err := toMarkdown(r, final)
		if err != nil {
			return page{}, fmt.Errorf("fetch %s: read the HTML: %w", final.Redacted(), err)
		}
		p.title, p.text = title, md
	default:
		b, err := io.ReadAll(r)
		if err != nil {
			return page{}, fmt.Errorf("fetch %s: decode the text: %w", final.Redacted(), err)
		}
		p.text = string(b)
	}
	p.text = strings.ToValidUTF8(p.text, "\uFFFD")
	return p, nil
}

// describe says why a request failed: the timeout, a redirect loop, or
// the transport's error.
func (f *fetcher) describe(ctx context.Context, u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && errors.Is(ue.Err, errRedirects) {
		return fmt.Errorf("fetch %s: %w", u.Redacted(), ue.Err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("fetch %s: timed out after %s (the cap of one fetch); nothing is returned", u.Redacted(), f.timeout)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("fetch %s: cancelled", u.Redacted())
	}
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("fetch %s: %w", u.Redacted(), err)
}

// kind is how fetch treats a content type.
type kind int

const (
	kindHTML kind = iota
	kindText
)

// classify says how a Content-Type is read: HTML is converted, text is
// kept (text/*, JSON, XML, JavaScript, YAML, TOML, a form, anything
// +json or +xml), and anything else is refused as binary. A missing
// type is taken as text (the body is checked for NUL bytes).
func classify(ct string) (kind, error) {
	if strings.TrimSpace(ct) == "" {
		return kindText, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return kindHTML, nil
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), strings.HasSuffix(mt, "+yaml"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/ecmascript", mt == "application/x-javascript", mt == "application/yaml",
		mt == "application/x-yaml", mt == "application/toml", mt == "application/x-ndjson",
		mt == "application/x-www-form-urlencoded", mt == "application/graphql", mt == "application/sql",
		mt == "image/svg+xml":
		return kindText, nil
	}
	return 0, fmt.Errorf("the content type is %s, which is not text; fetch returns text and HTML only (nothing was read)", mt)
}

// looksBinary reports a NUL byte in the first 8,000 bytes, git's test.
func looksBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// snippet is the start of an error page's body, for the error.
func snippet(body []byte) string {
	s := strings.ToValidUTF8(strings.Join(strings.Fields(string(body[:min(len(body), 2048)])), " "), "")
	if s == "" {
		return ""
	}
	if len(s) > 200 {
		s = s[:runeCut(s, 200)] + "…"
	}
	return ": " + s
}

// size says n bytes for people: "12.3 MB".
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// runeCut is the largest i <= n at which s can be cut between
// characters.
func runeCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for i := n; i > 0 && i > n-4; i-- {
		if s[i]&0xC0 != 0x80 {
			return i
		}
	}
	return n
}

// render is what the model reads of a page: a header (the final URL,
// the content type, the title), then the text from start, cut at
// length bytes with a note saying how much was left out and how to read
// on.
func render(p page, start, length int) (string, error) {
	total := len(p.text)
	if start > total {
		return "", fmt.Errorf("invalid input: field \"start\" is %d, past the end of the text (%d bytes)", start, total)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", p.url)
	if p.contentType != "" {
		fmt.Fprintf(&b, "Content-Type: %s\n", p.contentType)
	}
	if p.title != "" {
		fmt.Fprintf(&b, "Title: %s\n", p.title)
	}
	b.WriteByte('\n')
	start = runeCut(p.text, start)
	text := p.text[start:]
	if text == "" && total == 0 {
		b.WriteString("(the page has no text)\n")
		return b.String(), nil
	}
	cut := false
	if len(text) > length {
		end := runeCut(text, length)
		if nl := strings.LastIndexByte(text[:end], '\n'); nl > end/2 {
			end = nl + 1
		}
		text, cut = text[:end], true
	}
	b.WriteString(text)
	if cut {
		next := start + len(text)
		fmt.Fprintf(&b, "\n[Cut at %s: showing bytes %d-%d of %d; %d more bytes not shown. Call fetch with start=%d to read on.]\n",
			size(int64(length)), start, next, total, total-next, next)
	}
	return b.String(), nil
}
