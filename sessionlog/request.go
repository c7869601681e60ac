package sessionlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// RequestSettings records what shapes every model request from here on,
// on this branch, apart from the conversation: the wire it is encoded
// for and that encoder's options, the model and its settings, and the
// tools offered, in order, with their owners. It is recorded before a
// request whose settings differ from the branch's last (the first
// request of a log, a model switch, a new tool, an extension narrowing
// the offer, a changed max_tokens), so the body sent for any reply can
// be rebuilt from the log alone (panto request --at).
type RequestSettings struct {
	// Provider is the configured provider's name; Wire the format the
	// request is encoded in: anthropic, openai, or echo (panto's offline
	// provider, which sends nothing).
	Provider string `json:"provider"`
	Wire     string `json:"wire"`
	// Options are the wire encoder's options that change the body
	// (anthropic: "version"; openai: "max_tokens_field"), by name.
	Options map[string]string `json:"options,omitempty"`
	// Model is the provider's model name.
	Model string `json:"model"`
	// MaxTokens, ThinkingBudget, Temperature and Stream are the request
	// settings (0, nil and false leave them out, as the request does).
	MaxTokens      int      `json:"max_tokens,omitempty"`
	ThinkingBudget int      `json:"thinking_budget,omitempty"`
	Temperature    *float64 `json:"temperature,omitempty"`
	Stream         bool     `json:"stream,omitempty"`
	// ToolChoice is the tool choice; nil is the provider's default.
	ToolChoice *ToolChoice `json:"tool_choice,omitempty"`
	// Cache is how the request asks the provider to cache its prefix;
	// nil asks nothing.
	Cache *RequestCache `json:"cache,omitempty"`
	// Tools are the tools offered, in the order sent.
	Tools []OfferedTool `json:"tools"`
}

// ToolChoice is a request's tool choice: mode auto, any, none or tool
// (then Name), and whether parallel calls are off.
type ToolChoice struct {
	Mode            string `json:"mode"`
	Name            string `json:"name,omitempty"`
	DisableParallel bool   `json:"disable_parallel,omitempty"`
}

// RequestCache is how a request asks for prompt caching: Marks puts
// cache breakpoints in it (Anthropic), Key is the cache key (OpenAI's
// prompt_cache_key).
type RequestCache struct {
	Marks bool   `json:"marks,omitempty"`
	Key   string `json:"key,omitempty"`
}

// OfferedTool is one tool of a request, with the extension (or "mcp:
// SERVER", "panto") that owns it.
type OfferedTool struct {
	Owner string `json:"owner,omitempty"`
	ToolDef
}

// RequestSettingsEntry returns an entry recording the request settings.
func RequestSettingsEntry(r RequestSettings) Entry {
	return Entry{Type: TypeRequestSettings, RequestSettings: &r}
}

type requestSettingsLine struct {
	lineHead
	Request *RequestSettings `json:"request"`
}

// checkRequestSettings checks a request_settings payload, written or
// read.
func checkRequestSettings(r *RequestSettings) error {
	switch {
	case r == nil:
		return errors.New("request_settings entry without its payload")
	case r.Wire == "":
		return errors.New("request_settings entry without a wire")
	case r.Model == "":
		return errors.New("request_settings entry without a model")
	}
	for _, t := range r.Tools {
		if t.Name == "" {
			return errors.New("request_settings entry: a tool without a name")
		}
		if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
			return fmt.Errorf("request_settings entry: tool %s: parameters are not valid JSON", t.Name)
		}
	}
	return nil
}

// Same reports whether r and o shape requests alike.
func (r *RequestSettings) Same(o *RequestSettings) bool {
	if r == nil || o == nil {
		return r == o
	}
	if r.Provider != o.Provider || r.Wire != o.Wire || r.Model != o.Model || r.MaxTokens != o.MaxTokens ||
		r.ThinkingBudget != o.ThinkingBudget || r.Stream != o.Stream || len(r.Tools) != len(o.Tools) {
		return false
	}
	if (r.Temperature == nil) != (o.Temperature == nil) || r.Temperature != nil && *r.Temperature != *o.Temperature {
		return false
	}
	if (r.ToolChoice == nil) != (o.ToolChoice == nil) || r.ToolChoice != nil && *r.ToolChoice != *o.ToolChoice {
		return false
	}
	if (r.Cache == nil) != (o.Cache == nil) || r.Cache != nil && *r.Cache != *o.Cache {
		return false
	}
	if len(r.Options) != len(o.Options) {
		return false
	}
	for k, v := range r.Options {
		if w, ok := o.Options[k]; !ok || w != v {
			return false
		}
	}
	return slices.EqualFunc(r.Tools, o.Tools, func(a, b OfferedTool) bool {
		return a.Owner == b.Owner && a.Name == b.Name && a.Description == b.Description && string(a.Parameters) == string(b.Parameters)
	})
}
