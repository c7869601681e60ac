// Command web is panto's first-party web extension: a fetch tool that
// GETs an http or https URL and gives the model its text (HTML turned
// into Markdown), and a search tool that asks a search API, offered
// only when config names one ([web.search]: an endpoint and a key).
//
// Both obey the sandbox's network switch: with the sandbox on and
// sandbox.network = false a call is refused before any connection, with
// SandboxBlocked set so panto can offer to turn the network on. Which
// calls run at all is panto's permission rules' to say (a fetch rule can
// name a host); nothing here decides it.
//
// A fetch is capped: 10 MB of body, 30 s in all, 10 redirects, GET only,
// text only (binary content is refused, naming its type), and the text
// the model reads is cut at max_length with a note.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/panto-dev/panto/sdk"
)

// timeoutEnv, for tests only, replaces the 30 s cap of a fetch with a
// duration ("200ms"); panto never sets it.
const timeoutEnv = "PANTO_WEB_TEST_TIMEOUT"

// ext is the extension.
type ext struct {
	sdk.Base
	f      *fetcher
	search *searcher // nil: search is off
}

var (
	_ sdk.ToolProvider = (*ext)(nil)
	_ sdk.Describer    = (*ext)(nil)
	_ sdk.Initializer  = (*ext)(nil)
)

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "web", Version: "1.0.0", Description: "fetch web pages as text, and search the web when configured"}
}

// Init reads the config panto hands over: [web.search] turns search on.
func (e *ext) Init(_ context.Context, h sdk.Host) error {
	cfg, err := parseConfig(h.Info().Config)
	if err != nil {
		return err
	}
	if cfg.Search != nil {
		e.search = &searcher{cfg: *cfg.Search, f: e.f}
	}
	return nil
}

// Tools are fetch, and search when it is configured.
func (e *ext) Tools() []sdk.Tool {
	tools := []sdk.Tool{{
		Name: "fetch",
		Description: "Fetch a web page or file over http(s) with GET and return its text: HTML as Markdown, other text as is. " +
			"Binary content is refused. Long text is cut at max_length; read on with start.",
		Parameters: json.RawMessage(fetchParams),
		Guidance: "Use fetch to read a web page or a text file online (documentation, an API's JSON, a README) when the user gives a URL " +
			"or the answer needs the current text of one. It cannot log in, run JavaScript or send forms; it returns the page's text as Markdown.",
		Run: e.runFetch,
	}}
	if e.search != nil {
		tools = append(tools, sdk.Tool{
			Name:        "search",
			Description: "Search the web. Returns numbered results, each a title, a URL and a snippet; fetch a result's URL to read it.",
			Parameters:  json.RawMessage(searchParams),
			Guidance:    "Use search to find pages when you do not know the URL; then fetch the most relevant results to read them.",
			Run:         e.runSearch,
		})
	}
	return tools
}

func (e *ext) runFetch(ctx context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
	var in fetchInput
	if err := decode(call.Input, &in); err != nil {
		return errResult(err), nil
	}
	if in.URL == "" {
		return errResult(fmt.Errorf("invalid input: missing required field \"url\"")), nil
	}
	u, err := checkURL(in.URL)
	if err != nil {
		return errResult(err), nil
	}
	length := in.MaxLength
	switch {
	case length == 0:
		length = defaultLength
	case length < 1 || length > maxLength:
		return errResult(fmt.Errorf("invalid input: field \"max_length\" must be between 1 and %d, not %d", maxLength, length)), nil
	}
	if in.Start < 0 {
		return errResult(fmt.Errorf("invalid input: field \"start\" must be 0 or more, not %d", in.Start)), nil
	}
	if res := networkOff(call.Sandbox, "fetch "+u.Redacted()); res != nil {
		return *res, nil
	}
	p, err := e.f.fetch(ctx, u)
	if err != nil {
		return errResult(err), nil
	}
	out, err := render(p, in.Start, length)
	if err != nil {
		return errResult(err), nil
	}
	return sdk.ToolResult{Content: out}, nil
}

func (e *ext) runSearch(ctx context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
	var in searchInput
	if err := decode(call.Input, &in); err != nil {
		return errResult(err), nil
	}
	in.Query = strings.TrimSpace(in.Query)
	if in.Query == "" {
		return errResult(fmt.Errorf("invalid input: field \"query\" is empty")), nil
	}
	switch {
	case in.Count == 0:
		in.Count = 10
	case in.Count < 1 || in.Count > 20:
		return errResult(fmt.Errorf("invalid input: field \"count\" must be between 1 and 20, not %d", in.Count)), nil
	}
	if res := networkOff(call.Sandbox, "search"); res != nil {
		return *res, nil
	}
	res, err := e.search.search(ctx, in.Query, in.Count)
	if err != nil {
		return errResult(err), nil
	}
	return sdk.ToolResult{Content: strings.ToValidUTF8(formatResults(in.Query, res), "\uFFFD")}, nil
}

func errResult(err error) sdk.ToolResult {
	return sdk.ToolResult{Content: strings.ToValidUTF8(err.Error(), "\uFFFD"), IsError: true}
}

// decode decodes the model's input strictly: a JSON object of the
// schema's fields, naming the one at fault.
func decode(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid input: %v", err)
	}
	return nil
}

// timeout is the cap of one fetch: fetchTimeout, unless a test set
// timeoutEnv.
func timeout(getenv func(string) string) time.Duration {
	if d, err := time.ParseDuration(getenv(timeoutEnv)); err == nil && d > 0 {
		return d
	}
	return fetchTimeout
}

func main() {
	if err := sdk.Serve(&ext{f: newFetcher(nil, timeout(os.Getenv))}); err != nil {
		// stderr, never stdout: stdout is the plugin handshake.
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(1)
	}
}
