package config

import (
	"fmt"
	"net/url"
	"strconv"
)

// WebSearch is the [web.search] table: the search API the web
// extension's search tool asks (docs/tools.md#the-web-extension). Unset
// (nil in Config), search is off.
type WebSearch struct {
	// Endpoint is the API's URL; API is "brave" (the default) or
	// "searxng".
	Endpoint, API string
	// Key is the API key as written; KeyEnv names an environment
	// variable that holds it instead.
	Key, KeyEnv string
	// Source is the config file that set it.
	Source string
}

// webFile is the [web] table.
type webFile struct {
	Search *webSearchFile `toml:"search"`
}

type webSearchFile struct {
	Endpoint *string `toml:"endpoint"`
	API      *string `toml:"api"`
	Key      *string `toml:"key"`
	KeyEnv   *string `toml:"key_env"`
}

// checkWeb checks the [web.search] table on its own.
func (f file) checkWeb() *badValue {
	if f.Web == nil || f.Web.Search == nil {
		return nil
	}
	s := f.Web.Search
	if s.Endpoint == nil || *s.Endpoint == "" {
		return &badValue{"web.search.endpoint", `""`, "want the search API's http or https URL (an empty [web.search] is not allowed: leave the table out to keep search off)"}
	}
	if u, err := url.Parse(*s.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &badValue{"web.search.endpoint", strconv.Quote(*s.Endpoint), "want an http or https URL"}
	}
	if s.API != nil && *s.API != "brave" && *s.API != "searxng" {
		return &badValue{"web.search.api", strconv.Quote(*s.API), `want "brave" or "searxng"`}
	}
	if s.Key != nil && s.KeyEnv != nil {
		return &badValue{"web.search.key_env", strconv.Quote(*s.KeyEnv), "set key or key_env, not both"}
	}
	return nil
}

// mergeWeb sets cfg's web search from f's [web.search]: a higher layer's
// table replaces a lower one's whole.
func (f file) mergeWeb(cfg *Config, path string) {
	if f.Web == nil || f.Web.Search == nil {
		return
	}
	s := f.Web.Search
	w := &WebSearch{Endpoint: *s.Endpoint, API: "brave", Source: "config " + path}
	if s.API != nil {
		w.API = *s.API
	}
	if s.Key != nil {
		w.Key = *s.Key
	}
	if s.KeyEnv != nil {
		w.KeyEnv = *s.KeyEnv
	}
	cfg.WebSearch = w
}

// webSettings describes a project's [web] table: never applied, since
// it would send your queries, and your key, where the project chose.
func webSettings(f *webFile) []Setting {
	if f == nil || f.Search == nil {
		return nil
	}
	v := ""
	if f.Search.Endpoint != nil {
		v = strconv.Quote(*f.Search.Endpoint)
	}
	return []Setting{{Key: "web.search", Value: fmt.Sprintf("{ endpoint = %s }", v),
		Never: "a project never chooses the search API: it would receive your searches, and your key"}}
}
