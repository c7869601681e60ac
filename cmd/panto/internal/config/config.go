// Package config loads panto's config.toml files: one per layer, decoded
// strictly (an unknown key or a wrong type is an error naming the file,
// line and column), merged base → user → project over built-in defaults.
// Command-line flags are applied on top by the caller.
//
// The project layer's file arrives with a git clone, so it counts only
// once the user has trusted it (package trust), and even then some keys
// never come from it: where the API key is sent, which extension gets
// it, which of the user's safeguards are off (see project.go).
//
// The system prompt is deliberately not configured here: it comes from
// SYSTEM.md / APPEND_SYSTEM.md files (see package sysprompt).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
)

// FileName is the config file looked for in each layer.
const FileName = "config.toml"

// Config is the merged configuration. docs/config.md documents each key.
type Config struct {
	Provider       string
	Model          string
	BaseURL        string
	MaxTokens      int
	ThinkingBudget int
	Temperature    *float64
	Retries        int
	RequestTimeout time.Duration
	// Stream asks for streamed replies (SSE).
	Stream           bool
	LogLevel         string
	AnthropicVersion string
	// PromptCache asks the provider to cache what a session's requests
	// share: Anthropic's carry cache breakpoints, OpenAI's the session id
	// as prompt_cache_key (see PromptCacheKey). False asks for none.
	PromptCache bool
	// PromptCacheKey says whether OpenAI-wire requests send
	// prompt_cache_key; nil: only to api.openai.com
	// (provider.OpenAIKeysCache), since a compatible server may reject
	// a field it does not know.
	PromptCacheKey *bool
	// HookTimeout bounds each extension hook and command.
	HookTimeout time.Duration
	// ToolTimeout bounds each tool call.
	ToolTimeout time.Duration
	// MaxSteps bounds the model requests of one turn; 0 means no bound.
	MaxSteps int
	// ContextWindow is the model's window in tokens; 0 means the
	// provider's default (DefaultContextWindow).
	ContextWindow int
	// CompactionThreshold is the share of the window that triggers
	// compaction; CompactionKeepTokens how much stays verbatim;
	// CompactionModel summarises (empty: the model).
	CompactionThreshold  float64
	CompactionKeepTokens int
	CompactionModel      string
	// ExtensionStartTimeout bounds one extension's start.
	ExtensionStartTimeout time.Duration
	// DisabledExtensions are extension names not to load, from the base
	// and user layers: they apply to every extension.
	DisabledExtensions []string
	// ProjectDisabledExtensions are a trusted project's
	// disabled_extensions: they apply only to the project layer's own
	// extensions, by file name.
	ProjectDisabledExtensions []string
	// Required says, by extension file name, what [extensions.NAME]
	// required sets: true makes the extension a safeguard that must be
	// running for tools to run; false says one of the base or user layer
	// is not. A project may only set true.
	Required map[string]bool
	// ExtensionAPIKeys are the extensions, by executable file name, whose
	// environment gets the provider API key variables (ANTHROPIC_API_KEY,
	// OPENAI_API_KEY, ANTHROPIC_AUTH_TOKEN). Every layer's list counts;
	// empty means no extension gets them.
	ExtensionAPIKeys []string
	// BranchSummary makes /tree summarise the branch left (with the
	// compaction model when set) unless told not to; print mode never
	// does.
	BranchSummary bool
	// Models are the models /model offers besides the one in use, every
	// layer's, in order (for the configured provider).
	Models []string
	// ConfirmDefault answers an extension's confirm when nobody can (print
	// mode, --mode json): "yes" or "no"; empty means the call fails with
	// "no interactive user".
	ConfirmDefault string
	// CacheWarnTokens is how many cached tokens a change of the system
	// prompt must invalidate for panto to warn (0: the default, 10000;
	// negative: never).
	CacheWarnTokens int
	// Theme is the full-screen UI's colours: "auto" (ask the terminal
	// for its background), "light" or "dark".
	Theme string
	// Screen is where the full-screen UI draws: "normal" (the default:
	// the conversation goes into the terminal's scrollback, where it
	// stays after exit) or "alt" (the alternate screen, scrolled by
	// panto; the transcript printed on exit).
	Screen string
	// Mouse lets the full-screen UI take the mouse (the wheel scrolls the
	// transcript on the alternate screen, a click folds a block); false
	// leaves it to the terminal. Unset (nil): taken on the alternate
	// screen only.
	Mouse *bool
	// Keys rebind the full-screen UI's keys: an action's name (tui's
	// key table) to the key that does it ("ctrl+e"; "" unbinds it),
	// every layer's, the higher winning per action. The UI checks the
	// names.
	Keys map[string]string
	// Prices are what models cost, by model name: each replaces the
	// built-in price of that model (package prices, which matches the
	// names).
	Prices map[string]Price
	// MCP are the MCP servers of the config files applied, in the order
	// the layers and names give (a project's .mcp.json is the app's to
	// add). MCPShadowed are a trusted project's servers that bear the name
	// of one the user configured, which they never replace.
	MCP         []MCPServer
	MCPShadowed []MCPServer
	// WebSearch is the search API of the web extension's search tool,
	// from the highest layer but the project's that sets [web.search];
	// nil: search is off.
	WebSearch *WebSearch
	// Sources lists the config files that were applied, lowest layer
	// first.
	Sources []string
	// Project is the project layer's config file, when there is one:
	// what it sets, whether it was applied, and what a project may never
	// set.
	Project *Project
	// Permissions are what the model's tools may do; Sandbox the OS
	// boundary bash runs in (docs/permissions.md).
	Permissions Permissions
	Sandbox     Sandbox
	// Guards are the settings that guard the user, as each base and user
	// layer file sets them (see GuardKeys).
	Guards Guards
	// from says, for each key a file set, where the winning value was
	// written ("config /p/config.toml line 3 column 14"), for Validate's
	// errors.
	from map[string]string
}

// Price is what a model costs, in dollars per million tokens.
type Price struct {
	Input      float64 `toml:"input"`
	Output     float64 `toml:"output"`
	CacheRead  float64 `toml:"cache_read"`
	CacheWrite float64 `toml:"cache_write"`
}

// Defaults returns the built-in configuration.
func Defaults() Config {
	return Config{
		Provider:              "anthropic",
		MaxTokens:             8192,
		Retries:               2,
		Stream:                true,
		RequestTimeout:        10 * time.Minute,
		LogLevel:              "info",
		AnthropicVersion:      "2023-06-01",
		PromptCache:           true,
		HookTimeout:           5 * time.Second,
		ToolTimeout:           15 * time.Minute,
		MaxSteps:              100,
		CompactionThreshold:   0.8,
		CompactionKeepTokens:  20000,
		ExtensionStartTimeout: 10 * time.Second,
		Theme:                 "auto",
		Screen:                ScreenNormal,
		Permissions:           Permissions{Mode: "default"},
		Sandbox:               Sandbox{Mode: SandboxWorkspaceWrite},
	}
}

// DefaultModel returns the model used when none is configured.
func DefaultModel(provider string) string {
	switch provider {
	case "anthropic":
		return "claude-sonnet-4-5"
	case "openai":
		return "gpt-4.1"
	case "echo":
		return "echo"
	}
	return ""
}

// DefaultContextWindow is the context window assumed for a provider's
// models when context_window is not set; 0 (echo) means no automatic
// compaction.
func DefaultContextWindow(provider string) int {
	switch provider {
	case "anthropic":
		return 200000
	case "openai":
		return 128000
	}
	return 0
}

// file is one config.toml; nil fields were not set there.
type file struct {
	Provider         *string   `toml:"provider"`
	Model            *string   `toml:"model"`
	BaseURL          *string   `toml:"base_url"`
	MaxTokens        *int      `toml:"max_tokens"`
	ThinkingBudget   *int      `toml:"thinking_budget"`
	Temperature      *float64  `toml:"temperature"`
	Retries          *int      `toml:"retries"`
	Stream           *bool     `toml:"stream"`
	RequestTimeout   *duration `toml:"request_timeout"`
	LogLevel         *string   `toml:"log_level"`
	AnthropicVersion *string   `toml:"anthropic_version"`
	PromptCache      *bool     `toml:"prompt_cache"`
	PromptCacheKey   *bool     `toml:"prompt_cache_key"`
	HookTimeout      *duration `toml:"hook_timeout"`
	ToolTimeout      *duration `toml:"tool_timeout"`
	MaxSteps         *int      `toml:"max_steps"`
	ContextWindow    *int      `toml:"context_window"`
	CompThreshold    *float64  `toml:"compaction_threshold"`
	CompKeepTokens   *int      `toml:"compaction_keep_tokens"`
	CompModel        *string   `toml:"compaction_model"`
	ExtStartTimeout  *duration `toml:"extension_start_timeout"`
	DisabledExts     []string  `toml:"disabled_extensions"`
	ExtAPIKeys       []string  `toml:"extension_api_keys"`
	ConfirmDefault   *string   `toml:"confirm_default"`
	CacheWarnTokens  *int      `toml:"cache_warn_tokens"`
	Models           []string  `toml:"models"`
	BranchSummary    *bool     `toml:"branch_summary"`
	Theme            *string   `toml:"theme"`
	Screen           *string   `toml:"screen"`
	Mouse            *bool     `toml:"mouse"`
	// Keys is the [keys] table: action = "key".
	Keys map[string]string `toml:"keys"`
	// Prices is [prices."MODEL"] tables.
	Prices map[string]Price `toml:"prices"`
	// Extensions is [extensions.NAME] tables, by extension file name.
	Extensions map[string]extensionFile `toml:"extensions"`
	// MCP is [mcp.NAME] tables: MCP servers (docs/mcp.md).
	MCP map[string]mcpFile `toml:"mcp"`
	// Permissions and Sandbox are the [permissions] and [sandbox] tables
	// (docs/permissions.md).
	Permissions *permissionsFile `toml:"permissions"`
	Sandbox     *sandboxFile     `toml:"sandbox"`
	// Web is the [web] table: the web extension's search API.
	Web *webFile `toml:"web"`
}

// extensionFile is one [extensions.NAME] table.
type extensionFile struct {
	Required *bool `toml:"required"`
}

// duration is a duration string ("90s"). A struct, not an integer type:
// go-toml would store a bare integer (request_timeout = 5) into an integer
// type as nanoseconds, bypassing UnmarshalText; a struct makes it a type
// error.
type duration struct{ d time.Duration }

func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("want a duration such as \"90s\" or \"10m\": %w", err)
	}
	if v <= 0 {
		return errors.New("want a positive duration")
	}
	d.d = v
	return nil
}

// Options say how Load treats the project layer's file.
type Options struct {
	// Trust holds the project settings files the user trusted; nil
	// trusts none.
	Trust *trust.Store
	// KeyEnv names the environment variable that holds a provider's API
	// key when it is set, "" when no key for that provider is in the
	// environment; nil means none is.
	KeyEnv func(provider string) string
	// Home is the user's home directory, for "~/" in
	// sandbox.writable_roots; empty: os.UserHomeDir.
	Home string
}

// Load reads config.toml from each layer of d that has one and merges them
// over Defaults. Each file must be a regular file of at most
// layers.MaxFileSize bytes. Each file's values are checked on their own
// (Parse); the rules that need the merged configuration with the flags
// applied are Validate's. The project layer's file is applied only when
// opts.Trust trusts it with its current content, and then without the
// keys a project may never set (Config.Project says which).
func Load(d layers.Dirs, opts Options) (Config, error) {
	cfg := Defaults()
	home := opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	files, err := d.Find(FileName)
	if err != nil {
		return Config{}, err
	}
	for _, f := range files {
		data, err := layers.ReadFile(f.Path, layers.MaxFileSize, layers.RegularOnly)
		if err != nil {
			if errors.Is(err, layers.ErrNotRegular) || errors.Is(err, layers.ErrTooLarge) {
				err = fmt.Errorf("read config %s: %w", f.Path, err)
			} else {
				err = fmt.Errorf("read config: %w", err) // an *fs.PathError names the file
			}
			if f.Layer == layers.Project {
				// Not trusted, since it cannot be read: a clone does not
				// stop panto with it.
				cfg.Project = &Project{Path: f.Path, Err: err}
				continue
			}
			return Config{}, err
		}
		fc, err := Parse(f.Path, data)
		if err != nil && f.Layer == layers.Project {
			p := project(f.Path, data, file{}, cfg, opts)
			if p.Applied {
				return Config{}, err // the user vouched for it: it must be right
			}
			p.Err = err
			cfg.Project = p
			continue
		}
		if err != nil {
			return Config{}, err
		}
		if f.Layer == layers.Project {
			p := project(f.Path, data, fc, cfg, opts)
			cfg.Project = p
			if !p.Applied {
				continue
			}
			fc = p.apply(fc, &cfg)
		}
		if f.Layer != layers.Project {
			if cfg.Guards == nil {
				cfg.Guards = Guards{}
			}
			cfg.Guards[f.Path] = fc.guards()
		}
		fc.mergeInto(&cfg)
		fc.mergeMCP(&cfg, "config "+f.Path, f.Layer == layers.Project)
		fc.mergePermissions(&cfg, f.Path, home)
		fc.mergeWeb(&cfg, f.Path)
		for _, key := range fc.keys() {
			if cfg.from == nil {
				cfg.from = map[string]string{}
			}
			cfg.from[key] = at(f.Path, data, key)
		}
		cfg.Sources = append(cfg.Sources, f.Path)
	}
	return cfg, nil
}

// Parse decodes one config file strictly and checks its values. name is
// used in errors.
func Parse(name string, data []byte) (f file, err error) {
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return file{}, describe(name, data, err)
	}
	if bad := f.check(); bad != nil {
		return file{}, fmt.Errorf("%s: %s (see docs/config.md)", at(name, data, bad.key), bad)
	}
	if err := f.checkMCP(); err != nil {
		return file{}, fmt.Errorf("config %s: %w (see docs/mcp.md)", name, err)
	}
	if bad := f.checkWeb(); bad != nil {
		return file{}, fmt.Errorf("%s: %s (see docs/tools.md)", at(name, data, bad.key), bad)
	}
	return f, nil
}

// at names where a key's value is written: "config NAME line 3 column
// 14", or "config NAME" when it cannot be told.
func at(name string, data []byte, key string) string {
	if row, col, ok := locate(data, key); ok {
		return fmt.Sprintf("config %s line %d column %d", name, row, col)
	}
	return "config " + name
}

// keys returns the keys f sets.
func (f file) keys() []string {
	var out []string
	v := reflect.ValueOf(f)
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			out = append(out, v.Type().Field(i).Tag.Get("toml"))
		}
	}
	return out
}

func (f file) mergeInto(c *Config) {
	set(&c.Provider, f.Provider)
	set(&c.Model, f.Model)
	set(&c.BaseURL, f.BaseURL)
	set(&c.MaxTokens, f.MaxTokens)
	set(&c.ThinkingBudget, f.ThinkingBudget)
	set(&c.Retries, f.Retries)
	set(&c.Stream, f.Stream)
	set(&c.LogLevel, f.LogLevel)
	set(&c.AnthropicVersion, f.AnthropicVersion)
	set(&c.PromptCache, f.PromptCache)
	if f.PromptCacheKey != nil {
		c.PromptCacheKey = new(*f.PromptCacheKey)
	}
	if f.Temperature != nil {
		v := *f.Temperature
		c.Temperature = &v
	}
	if f.RequestTimeout != nil {
		c.RequestTimeout = f.RequestTimeout.d
	}
	if f.HookTimeout != nil {
		c.HookTimeout = f.HookTimeout.d
	}
	if f.ToolTimeout != nil {
		c.ToolTimeout = f.ToolTimeout.d
	}
	set(&c.MaxSteps, f.MaxSteps)
	set(&c.ContextWindow, f.ContextWindow)
	set(&c.CompactionThreshold, f.CompThreshold)
	set(&c.CompactionKeepTokens, f.CompKeepTokens)
	set(&c.CompactionModel, f.CompModel)
	if f.ExtStartTimeout != nil {
		c.ExtensionStartTimeout = f.ExtStartTimeout.d
	}
	c.DisabledExtensions = append(c.DisabledExtensions, f.DisabledExts...)
	c.ExtensionAPIKeys = append(c.ExtensionAPIKeys, f.ExtAPIKeys...)
	set(&c.ConfirmDefault, f.ConfirmDefault)
	set(&c.CacheWarnTokens, f.CacheWarnTokens)
	set(&c.BranchSummary, f.BranchSummary)
	set(&c.Theme, f.Theme)
	set(&c.Screen, f.Screen)
	if f.Mouse != nil {
		c.Mouse = new(*f.Mouse)
	}
	for action, key := range f.Keys {
		if c.Keys == nil {
			c.Keys = map[string]string{}
		}
		c.Keys[action] = NormalizeKey(key)
	}
	for model, p := range f.Prices {
		if c.Prices == nil {
			c.Prices = map[string]Price{}
		}
		c.Prices[model] = p
	}
	for _, m := range f.Models {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(c.Models, m) {
			c.Models = append(c.Models, m)
		}
	}
	for name, x := range f.Extensions {
		if x.Required == nil {
			continue
		}
		if c.Required == nil {
			c.Required = map[string]bool{}
		}
		c.Required[name] = *x.Required
	}
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// Path returns the config file path of a layer directory.
func Path(layerDir string) string { return filepath.Join(layerDir, FileName) }

// The screens the full-screen UI draws on (config screen).
const (
	ScreenNormal = "normal"
	ScreenAlt    = "alt"
)

// MouseTaken reports whether the full-screen UI takes the mouse: as
// config mouse says, or, unset, on the alternate screen only.
func (c Config) MouseTaken() bool {
	if c.Mouse != nil {
		return *c.Mouse
	}
	return c.Screen == ScreenAlt
}
