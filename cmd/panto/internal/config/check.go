package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/host/provider"
)

// The values a file sets are checked one by one (check), and the config
// as a whole once the flags are on it (Validate).

// badValue is a value outside what its key allows.
type badValue struct {
	key   string
	value string // as TOML writes it
	want  string // what the key allows
}

func (b *badValue) Error() string { return b.key + " " + b.value + ": " + b.want }

// check checks each value f sets on its own; the rules between keys and
// the provider's own limits are Validate's.
func (f file) check() *badValue {
	bad := func(key, value, want string) *badValue { return &badValue{key, value, want} }
	atLeast := func(key string, v *int, min int, want string) *badValue {
		if v != nil && *v < min {
			return bad(key, strconv.Itoa(*v), want)
		}
		return nil
	}
	if f.Provider != nil {
		switch *f.Provider {
		case "anthropic", "openai", "echo":
		default:
			return bad("provider", strconv.Quote(*f.Provider), "want anthropic, openai or echo")
		}
	}
	for _, b := range []*badValue{
		atLeast("max_tokens", f.MaxTokens, 1, "want a positive number"),
		atLeast("thinking_budget", f.ThinkingBudget, 0, "want 0 (off) or at least 1024"),
		atLeast("context_window", f.ContextWindow, 0, "want 0 (the provider's default) or more"),
		atLeast("max_steps", f.MaxSteps, 0, "want 0 (no bound) or more"),
		atLeast("retries", f.Retries, 0, "want 0 to 10"),
		atLeast("compaction_keep_tokens", f.CompKeepTokens, 0, "want 0 or more"),
	} {
		if b != nil {
			return b
		}
	}
	if f.Retries != nil && *f.Retries > 10 {
		return bad("retries", strconv.Itoa(*f.Retries), "want 0 to 10")
	}
	// Written so that NaN, which compares false with everything, fails.
	if v := f.CompThreshold; v != nil && !(*v > 0 && *v <= 1) {
		return bad("compaction_threshold", tomlFloat(*v), "want a share of the window above 0 and at most 1")
	}
	if v := f.Temperature; v != nil && !(*v >= 0 && *v <= maxTemperature) {
		return bad("temperature", tomlFloat(*v), "want a number from 0 to 2")
	}
	if f.LogLevel != nil && CheckLogLevel(*f.LogLevel) != nil {
		return bad("log_level", strconv.Quote(*f.LogLevel), "want trace, debug, info, warn, error or off")
	}
	if v := f.ConfirmDefault; v != nil && *v != "yes" && *v != "no" && *v != "" {
		return bad("confirm_default", strconv.Quote(*v), `want "yes" or "no" (or "" to refuse)`)
	}
	if v := f.Theme; v != nil && *v != "auto" && *v != "light" && *v != "dark" {
		return bad("theme", strconv.Quote(*v), `want "auto", "light" or "dark"`)
	}
	if v := f.Screen; v != nil && *v != ScreenNormal && *v != ScreenAlt {
		return bad("screen", strconv.Quote(*v), `want "normal" or "alt"`)
	}
	for _, action := range slices.Sorted(maps.Keys(f.Keys)) {
		if k := f.Keys[action]; k != "" && !ValidKey(NormalizeKey(k)) {
			return bad("keys."+action, strconv.Quote(k), `want a key such as "ctrl+g", "alt+t", "f2" or "ctrl+shift+o" (or "" to unbind it)`)
		}
	}
	for _, model := range slices.Sorted(maps.Keys(f.Prices)) {
		p := f.Prices[model]
		for _, v := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
			if !(v.v >= 0 && v.v < 1e6) {
				return bad("prices", strconv.Quote(model)+"."+v.name+" = "+tomlFloat(v.v), "want dollars per million tokens, 0 or more")
			}
		}
	}
	for _, name := range f.ExtAPIKeys {
		if name == "" || strings.ContainsAny(name, `/\`) {
			return bad("extension_api_keys", strconv.Quote(name), "want an extension's file name, such as \"tools\", not a path")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(f.Extensions)) {
		if name == "" || strings.ContainsAny(name, `/\`) {
			return bad("extensions", strconv.Quote(name), "want an extension's file name, such as [extensions.guard], not a path")
		}
	}
	return f.checkPermissions()
}

// maxTemperature is the highest temperature any provider takes (OpenAI's;
// Anthropic's is 1, which Validate checks).
const maxTemperature = 2

// tomlFloat writes a float as TOML does: nan, inf and -inf by those names.
func tomlFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Validate checks what needs the merged configuration with the flags
// applied: the provider's own limits, which --provider may change. Call it
// once the flags are applied, before anything is started. Errors name the
// file and key that set the value and the range the provider allows.
func (c Config) Validate() error {
	bad := func(key, value, want string) error {
		where := c.from[key]
		if where == "" {
			where = "config" // only files set the keys checked here; defaults pass
		}
		return fmt.Errorf("%s: %s %s: %s (see docs/config.md)", where, key, value, want)
	}
	if c.Provider != "anthropic" {
		return nil
	}
	if b := c.ThinkingBudget; b > 0 {
		if b < provider.AnthropicMinThinkingBudget {
			return bad("thinking_budget", strconv.Itoa(b), fmt.Sprintf("anthropic wants 0 (off) or at least %d", provider.AnthropicMinThinkingBudget))
		}
		if b >= c.MaxTokens {
			return bad("thinking_budget", strconv.Itoa(b), fmt.Sprintf("anthropic wants it below max_tokens, %d (%s)", c.MaxTokens, c.origin("max_tokens")))
		}
	}
	if t := c.Temperature; t != nil {
		if !provider.AnthropicTakesTemperature(c.AnthropicVersion) {
			return bad("temperature", tomlFloat(*t), fmt.Sprintf("anthropic_version %s takes no temperature (%s): remove one of them", c.AnthropicVersion, c.origin("anthropic_version")))
		}
		if *t > 1 {
			return bad("temperature", tomlFloat(*t), "anthropic wants a number from 0 to 1")
		}
	}
	return nil
}

// origin says where key's value came from, for a message: the file and
// line, or "the default".
func (c Config) origin(key string) string {
	if w := c.from[key]; w != "" {
		return "from " + w
	}
	return "the default"
}

// CheckLogLevel accepts the levels hclog knows.
func CheckLogLevel(s string) error {
	switch strings.ToLower(s) {
	case "trace", "debug", "info", "warn", "error", "off":
		return nil
	}
	return fmt.Errorf("log level %q: want trace, debug, info, warn, error or off", s)
}
