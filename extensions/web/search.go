package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The search APIs the search tool speaks.
const (
	// apiBrave is the Brave Search API: GET ENDPOINT?q=…&count=N with
	// the key in X-Subscription-Token; results in web.results[] as
	// {title, url, description}.
	apiBrave = "brave"
	// apiSearXNG is a SearXNG instance's JSON API: GET
	// ENDPOINT?q=…&format=json (the key, when set, as a Bearer token);
	// results in results[] as {title, url, content}.
	apiSearXNG = "searxng"
)

// searchConfig is the search section of the extension's config
// ([web.search] in config.toml, handed over in Init).
type searchConfig struct {
	// Endpoint is the search URL; empty leaves search off.
	Endpoint string `json:"endpoint"`
	// API is apiBrave (the default) or apiSearXNG.
	API string `json:"api"`
	// Key is the API key, sent as the API wants it.
	Key string `json:"key"`
}

// config is what panto hands the extension in Init.
type config struct {
	Search *searchConfig `json:"search"`
}

// parseConfig reads the extension's config; nil or empty is none.
func parseConfig(raw []byte) (config, error) {
	var c config
	if len(strings.TrimSpace(string(raw))) == 0 {
		return c, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return config{}, fmt.Errorf("web: the config: %w", err)
	}
	if s := c.Search; s != nil {
		if s.Endpoint == "" {
			c.Search = nil
			return c, nil
		}
		if s.API == "" {
			s.API = apiBrave
		}
		if s.API != apiBrave && s.API != apiSearXNG {
			return config{}, fmt.Errorf("web: search.api %q: want %q or %q", s.API, apiBrave, apiSearXNG)
		}
		u, err := url.Parse(s.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return config{}, fmt.Errorf("web: search.endpoint %q: want an http or https URL", s.Endpoint)
		}
	}
	return c, nil
}

// searchParams is search's input schema.
const searchParams = `{"type":"object","properties":{
"query":{"type":"string","description":"What to search the web for."},
"count":{"type":"integer","description":"How many results to return (default 10, max 20)."}},
"required":["query"],"additionalProperties":false}`

type searchInput struct {
	Query string `json:"query"`
	Count int    `json:"count"`
}

// result is one search result.
type result struct {
	Title, URL, Snippet string
}

// searcher asks a configured search API.
type searcher struct {
	cfg searchConfig
	f   *fetcher
}

// search asks the API for query and returns at most count results.
func (s *searcher) search(ctx context.Context, query string, count int) ([]result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.f.timeout)
	defer cancel()
	u, err := url.Parse(s.cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("search: the endpoint %q: %w", s.cfg.Endpoint, err)
	}
	q := u.Query()
	q.Set("q", query)
	if s.cfg.API == apiSearXNG {
		q.Set("format", "json")
	} else {
		q.Set("count", strconv.Itoa(count))
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.host(), err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "panto-web/1.0")
	if s.cfg.Key != "" {
		if s.cfg.API == apiSearXNG {
			req.Header.Set("Authorization", "Bearer "+s.cfg.Key)
		} else {
			req.Header.Set("X-Subscription-Token", s.cfg.Key)
		}
	}
	resp, err := s.f.client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("search %s: timed out after %s", s.host(), s.f.timeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL holds the query, and maybe a key
		}
		return nil, fmt.Errorf("search %s: %w", s.host(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("search %s: read the answer: %w", s.host(), err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("search %s: the answer is over the 10 MB cap", s.host())
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("search %s: HTTP %s%s", s.host(), resp.Status, snippet(body))
	}
	res, err := decodeResults(s.cfg.API, body)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.host(), err)
	}
	if len(res) > count {
		res = res[:count]
	}
	return res, nil
}

// host names the endpoint in errors without its query, which may hold a
// key.
func (s *searcher) host() string {
	u, err := url.Parse(s.cfg.Endpoint)
	if err != nil {
		return "(the configured endpoint)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// decodeResults reads an API's JSON answer.
func decodeResults(api string, body []byte) ([]result, error) {
	type item struct {
		Title       string `json:"title"`
		URL         string `json:"url"`
		Description string `json:"description"`
		Content     string `json:"content"`
	}
	var ans struct {
		Web struct {
			Results []item `json:"results"`
		} `json:"web"`
		Results []item `json:"results"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("the answer is not the JSON of the %s API: %w", api, err)
	}
	items := ans.Web.Results
	if api == apiSearXNG {
		items = ans.Results
	}
	out := make([]result, 0, len(items))
	for _, it := range items {
		snip := it.Description
		if api == apiSearXNG {
			snip = it.Content
		}
		if it.URL == "" {
			continue
		}
		out = append(out, result{Title: plainText(it.Title), URL: it.URL, Snippet: plainText(snip)})
	}
	return out, nil
}

// plainText is s without the HTML tags search APIs put in snippets
// (<strong>), its entities decoded and its spaces collapsed.
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return collapse(s)
	}
	_, md, err := toMarkdown(strings.NewReader("<p>"+s+"</p>"), nil)
	if err != nil {
		return collapse(s)
	}
	return collapse(strings.NewReplacer("**", "", `\`, "").Replace(md))
}

// formatResults is what the model reads: one numbered entry a result.
func formatResults(query string, res []result) string {
	if len(res) == 0 {
		return fmt.Sprintf("No results for %q.", query)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Results for %q:\n", query)
	for i, r := range res {
		title := r.Title
		if title == "" {
			title = r.URL
		}
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, title, r.URL)
		if r.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", r.Snippet)
		}
	}
	return b.String()
}
