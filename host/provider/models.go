package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/panto-dev/panto/serializers/anthropic"
)

// Lister is a provider that can list the models it serves (GET
// /v1/models): Anthropic's and OpenAI's (and a compatible server's that
// has the endpoint). Echo has no list. /model offers the list and checks
// a name against it; an error (a server without the endpoint, a network
// failure) means no list, and then any name is taken.
type Lister interface {
	ListModels(ctx context.Context) ([]string, error)
}

var (
	_ Lister = (*anthropicProvider)(nil)
	_ Lister = (*openaiProvider)(nil)
)

// listTimeout bounds a model list request: /model waits on it.
const listTimeout = 10 * time.Second

// maxListPages bounds how many pages of Anthropic's list are read.
const maxListPages = 10

// ListModels lists Anthropic's models, newest first as the API gives
// them, following its pages.
func (p *anthropicProvider) ListModels(ctx context.Context) ([]string, error) {
	version := p.http.cfg.AnthropicVersion
	if version == "" {
		version = anthropic.DefaultVersion
	}
	h := http.Header{}
	h.Set("anthropic-version", version)
	h.Set("x-api-key", p.http.cfg.APIKey)
	var out []string
	after := ""
	for range maxListPages {
		q := url.Values{"limit": {"1000"}}
		if after != "" {
			q.Set("after_id", after)
		}
		var page struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		if err := p.http.getJSON(ctx, Anthropic, joinURL(p.http.cfg.BaseURL, "/v1/models")+"?"+q.Encode(), h, &page); err != nil {
			return nil, err
		}
		for _, m := range page.Data {
			if m.ID != "" {
				out = append(out, m.ID)
			}
		}
		if !page.HasMore || page.LastID == "" || page.LastID == after {
			break
		}
		after = page.LastID
	}
	return out, nil
}

// ListModels lists the models of an OpenAI (or compatible) server, by
// name.
func (p *openaiProvider) ListModels(ctx context.Context) ([]string, error) {
	h := http.Header{}
	if k := p.http.cfg.APIKey; k != "" {
		h.Set("authorization", "Bearer "+k)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := p.http.getJSON(ctx, OpenAI, joinURL(p.http.cfg.BaseURL, "/models"), h, &list); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			out = append(out, m.ID)
		}
	}
	// The API lists them in no order: by name, for a picker.
	slices.Sort(out)
	return out, nil
}

// getJSON GETs rawURL once (a list is not worth a retry: without it any
// name is taken) and decodes its JSON body into v. The errors name the
// provider and the URL, never the key.
func (h httpCore) getJSON(ctx context.Context, name, rawURL string, header http.Header, v any) error {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fmt.Errorf("%s: list models: %w", name, err)
	}
	req.Header = header.Clone()
	req.Header.Set("accept", "application/json")
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: list models: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return fmt.Errorf("%s: list models: GET %s: %s", name, req.URL.Redacted(), resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v); err != nil {
		return fmt.Errorf("%s: list models: GET %s: %w", name, req.URL.Redacted(), err)
	}
	return nil
}
