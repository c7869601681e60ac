package app

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/keys"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/sysprompt"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/host/permissions"
	"github.com/panto-dev/panto/host/provider"
	"github.com/panto-dev/panto/rules"
)

// ErrUsage marks a mistake on the command line (a flag's value, two
// flags that exclude each other): the CLI exits with status 2 and
// points at --help; another front end says the message as it is.
var ErrUsage = errors.New("usage")

// usageErrorf reports a command-line mistake.
func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUsage}, args...)...)
}

// Env is what the app takes from the process, as values: nothing in this
// package reads the process's environment, working directory or
// streams.
type Env struct {
	// Getenv looks up an environment variable; the provider keys are
	// among them (package main passes keys.Getenv, which holds them
	// after keys.Protect took them out of the process).
	Getenv func(string) string
	// Environ is the whole environment, handed to the extensions less
	// the provider keys.
	Environ func() []string
	// CWD is the working directory, absolute.
	CWD string
	// MaxProcs is runtime.GOMAXPROCS, for host.Config.MaxProcs; nil
	// leaves the process's setting alone (tests that run in-process).
	MaxProcs func(int) int
	// Version is panto's, told to the extensions.
	Version string
	// Notify is told each notice for the user as it arises — a setting
	// ignored or changed, an extension skipped, an unreadable log passed
	// over (see Notices in the package comment). It may be called from
	// any goroutine while the app is open; nil drops them.
	Notify func(notice string)
}

func (e Env) notify(n string) {
	if e.Notify != nil {
		e.Notify(n)
	}
}

// Flags are the command line's choices for a session; the zero value
// is plain panto's.
type Flags struct {
	// Provider, Model and BaseURL beat config (--provider, --model,
	// --base-url).
	Provider, Model, BaseURL string
	// LogLevel beats config and PANTO_LOG_LEVEL (--log-level).
	LogLevel string
	// SystemPrompt and AppendSystem are --system-prompt and
	// --append-system-prompt: a text, or a file's path.
	SystemPrompt string
	AppendSystem []string
	// Extensions are --extension paths, loaded after the layers'.
	Extensions []string
	// NoExtensions loads none (--no-extensions).
	NoExtensions bool
	// Log says which session log is recorded.
	Log Pick
	// Given is a system prompt the front end's peer handed over as text
	// (an ACP client's _meta.systemPrompt): part of the configured
	// prompt, as the flags' are.
	Given *Given
	// MCPServers are MCP servers the front end's peer gave for the
	// session (an ACP client's mcpServers), run with the configured ones;
	// one of the same name as a configured server takes its place.
	MCPServers []MCPServer
	// PermissionMode beats the config's [permissions] mode and
	// PANTO_PERMISSION_MODE (--permission-mode); Allow adds allow rules
	// for the run (--allow).
	PermissionMode string
	Allow          []string
	// Workspace is the user's workspace the front end's peer lends (an
	// ACP editor's files and terminal), for the tools to use; nil: the
	// machine's.
	Workspace extension.Workspace
}

// Given is a system prompt a front end's peer hands over as text
// (Flags.Given).
type Given = sysprompt.Given

// MCPServer is an MCP server as config has it (Flags.MCPServers).
type MCPServer = config.MCPServer

// Pick says which log a session records: a new one in this directory's
// sessions folder unless one field says otherwise (at most one of
// Session, Continue, Resume and NoSession).
type Pick struct {
	// Session is a log file, resumed when it exists (--session FILE).
	Session string
	// Continue resumes this directory's latest session (-c).
	Continue bool
	// Resume resumes the session of that id, or a unique prefix of it
	// (--resume ID).
	Resume string
	// Exact takes Resume as a whole id, never a prefix (an ACP client's
	// session/load).
	Exact bool
	// NoSession records nothing (--no-session).
	NoSession bool
	// From continues the log picked from that entry, as a new branch
	// (--from ID).
	From string
}

// App is what every front end needs, resolved once for a run: the
// directories and layers, the config with the flags on top, panto's own
// log file, and — once Prepare has run — the session log picked, the
// provider and the extensions. Its methods may be called from any
// goroutine once Prepare has returned.
type App struct {
	env   Env
	flags Flags
	dirs  layers.Dirs
	cfg   config.Config
	// policy is the permission policy: the config's with the flags on top.
	policy permissions.Policy
	logger hclog.Logger
	close  func()
	// sockets is the folder of this run's extension sockets
	// (extension.OpenSocketDir); empty: the system's temporary folder.
	sockets string
	store   *Store

	// Set by Prepare.
	prepared    bool
	path, id    string
	prov        provider.Provider
	specs       []extension.Spec
	interactive bool
	// mcpMissing: MCP servers are configured, but the mcp extension is not
	// among the extensions (it was told).
	mcpMissing bool

	// cat is the skills and templates the last open found (skills.go).
	cat *catalog
}

// Load resolves the directories and config, applies the flags on top
// and opens panto's log file. A --system-prompt or --append-system-prompt
// that looks like a path but names no file is a usage error, said before
// anything is written. Close the App when done.
func Load(env Env, f Flags) (*App, error) {
	if err := checkPromptFlags(f); err != nil {
		return nil, err
	}
	dirs, cfg, policy, err := resolve(env, f)
	if err != nil {
		return nil, err
	}
	logger, closeLog, err := openLog(dirs.State, cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	a := &App{env: env, flags: f, dirs: dirs, cfg: cfg, policy: policy, logger: logger, close: closeLog, cat: &catalog{}}
	a.store = &Store{dirs: dirs, warn: func(w string) { env.notify("warning: " + w) }}
	a.openSockets()
	return a, nil
}

// resolve resolves the directories and the config with the flags on top,
// and the permission policy: what Load and Reload read.
func resolve(env Env, f Flags) (layers.Dirs, config.Config, permissions.Policy, error) {
	dirs, err := layers.Resolve(env.Getenv, env.CWD)
	if err != nil {
		return layers.Dirs{}, config.Config{}, permissions.Policy{}, err
	}
	cfg, err := loadConfig(env, dirs)
	if err != nil {
		return layers.Dirs{}, config.Config{}, permissions.Policy{}, err
	}
	if f.Provider != "" && f.Provider != cfg.Provider {
		// The config's base_url, model and compaction_model were set for
		// the configured provider; another provider's URL and model names
		// would only misroute the request. Its own defaults apply, unless
		// a flag or its environment variable says otherwise (below).
		cfg.Provider = f.Provider
		cfg.BaseURL, cfg.Model, cfg.CompactionModel = "", "", ""
		cfg.Models = nil
	}
	switch cfg.Provider {
	case provider.Anthropic, provider.OpenAI, provider.Echo:
	default:
		if s := Suggest(cfg.Provider, []string{provider.Anthropic, provider.OpenAI, provider.Echo}); s != "" {
			return layers.Dirs{}, config.Config{}, permissions.Policy{}, usageErrorf("--provider %q: did you mean %s? (want anthropic, openai or echo)", cfg.Provider, s)
		}
		return layers.Dirs{}, config.Config{}, permissions.Policy{}, usageErrorf("--provider %q: want anthropic, openai or echo", cfg.Provider)
	}
	if f.Model != "" {
		cfg.Model = f.Model
	}
	if cfg.Model == "" {
		cfg.Model = config.DefaultModel(cfg.Provider)
	}
	if v := baseURLEnv(cfg.Provider); v != "" && env.Getenv(v) != "" {
		cfg.BaseURL = env.Getenv(v)
	}
	if f.BaseURL != "" {
		cfg.BaseURL = f.BaseURL
	}
	if v := env.Getenv("PANTO_LOG_LEVEL"); v != "" {
		cfg.LogLevel = v
	}
	if f.LogLevel != "" {
		cfg.LogLevel = f.LogLevel
	}
	if err := config.CheckLogLevel(cfg.LogLevel); err != nil {
		return layers.Dirs{}, config.Config{}, permissions.Policy{}, usageErrorf("%v", err)
	}
	policy, err := loadPolicy(env, cfg, f)
	if err != nil {
		return layers.Dirs{}, config.Config{}, permissions.Policy{}, err
	}
	// The limits that depend on the provider, once the flags have said
	// which one it is.
	if err := cfg.Validate(); err != nil {
		return layers.Dirs{}, config.Config{}, permissions.Policy{}, err
	}
	return dirs, cfg, policy, nil
}

// Close closes panto's log file and removes the run's socket folder.
// Close the sessions opened first.
func (a *App) Close() { a.close() }

// Config is the configuration in effect: the layers' files, the
// project's only as trusted, with the flags on top.
func (a *App) Config() config.Config { return a.cfg }

// Dirs are the directories and layers of the run.
func (a *App) Dirs() layers.Dirs { return a.dirs }

// Logger is panto's log (its log file, at the configured level).
func (a *App) Logger() hclog.Logger { return a.logger }

// Store is the session logs of the working directory.
func (a *App) Store() *Store { return a.store }

// Models are the configured models /model offers: current (the one in
// use) first, then the configured model and list. Session.Models adds
// the provider's.
func (a *App) Models(current string) []string {
	out := []string{current}
	for _, m := range append([]string{a.cfg.Model}, a.cfg.Models...) {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// openSockets gives the run a folder of its own for its extensions'
// sockets, removed when the app closes, and removes those of runs that
// are gone (a SIGKILLed panto's). Without one, go-plugin's default
// applies (the system's temporary folder), and the log says why.
func (a *App) openSockets() {
	dir, removed, remove, err := extension.OpenSocketDir(extension.SocketRoots(a.env.Getenv))
	if err != nil {
		a.logger.Warn("extension sockets go in the system's temporary folder", "error", err)
		return
	}
	if removed > 0 {
		a.logger.Debug("removed the extension socket folders of pantos that are gone", "folder", filepath.Dir(dir), "count", removed)
	}
	a.sockets = dir
	closeLog := a.close
	a.close = func() {
		remove()
		closeLog()
	}
}

// loadConfig loads the layers' config files, the project's only as the
// user trusted it.
func loadConfig(env Env, dirs layers.Dirs) (config.Config, error) {
	store, err := trust.Load(dirs.Layer(layers.User), trust.ProjectsFile)
	if err != nil {
		return config.Config{}, err
	}
	return config.Load(dirs, config.Options{Trust: store, KeyEnv: func(p string) string { return keyInEnv(env, p) }, Home: env.Getenv("HOME")})
}

// keyInEnv names the environment variable that holds provider p's key,
// "" when none does.
func keyInEnv(env Env, p string) string {
	for _, k := range providerKeyVars(p) {
		if env.Getenv(k) != "" {
			return k
		}
	}
	return ""
}

// providerKeyVars are the variables that may hold provider p's
// credentials.
func providerKeyVars(p string) []string {
	switch p {
	case provider.Anthropic:
		return []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"}
	case provider.OpenAI:
		return []string{"OPENAI_API_KEY"}
	}
	return nil
}

// checkPromptFlags reads --system-prompt and --append-system-prompt as a
// session will; a value that looks like a path but names no file is a
// usage error.
func checkPromptFlags(f Flags) error {
	err := sysprompt.Flags{System: f.SystemPrompt, Appends: f.AppendSystem}.Check()
	var fe *sysprompt.FileError
	if errors.As(err, &fe) {
		return usageErrorf("%v", err)
	}
	return err
}

func baseURLEnv(p string) string {
	switch p {
	case provider.Anthropic:
		return "ANTHROPIC_BASE_URL"
	case provider.OpenAI:
		return "OPENAI_BASE_URL"
	}
	return ""
}

func apiKeyEnv(p string) string {
	switch p {
	case provider.Anthropic:
		return "ANTHROPIC_API_KEY"
	case provider.OpenAI:
		return "OPENAI_API_KEY"
	}
	return ""
}

// newProvider builds the configured provider; the key comes from the
// environment only, never from config files or flags.
func (a *App) newProvider() (provider.Provider, error) {
	key := ""
	if v := apiKeyEnv(a.cfg.Provider); v != "" {
		key = a.env.Getenv(v)
	}
	return provider.New(provider.Config{
		Name:             a.cfg.Provider,
		BaseURL:          a.cfg.BaseURL,
		APIKey:           key,
		AnthropicVersion: a.cfg.AnthropicVersion,
		PromptCacheKey:   a.cfg.PromptCacheKey,
		Retries:          a.cfg.Retries,
		Timeout:          a.cfg.RequestTimeout,
		Logger:           a.logger.Named("provider"),
	})
}

// openLog opens panto's log file, state/panto.log (0600), appending. Level
// "off" writes nothing. stdout never carries log lines. go-plugin reports
// a few errors through the standard logger: they go to the log file too
// (the one process-wide setting this package makes).
func openLog(stateDir, level string) (hclog.Logger, func(), error) {
	if strings.EqualFold(level, "off") {
		log.SetOutput(io.Discard)
		return hclog.NewNullLogger(), func() {}, nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create log directory %s: %w", stateDir, err)
	}
	path := filepath.Join(stateDir, "panto.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open log file %s: %w", path, err)
	}
	logger := hclog.New(&hclog.LoggerOptions{
		Name:   "panto",
		Level:  hclog.LevelFromString(level),
		Output: io.Writer(f),
	})
	log.SetOutput(logger.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}))
	log.SetFlags(0)
	return logger, func() { f.Close() }, nil
}

// isProviderKey reports the environment variables that hold provider
// credentials (keys.Names). panto reads them itself; they never reach an
// extension (and so nothing an extension starts, such as bash) unless
// config's extension_api_keys names it, and they are never rendered as
// {{env.NAME}}. Since keys.Protect they are not in panto's own
// environment block either.
func isProviderKey(name string) bool { return keys.IsKey(name) }

// builtinVars are panto's own {{variables}}; they win over those the
// extensions define.
func (a *App) builtinVars() map[string]string {
	return map[string]string{
		"cwd": a.dirs.CWD, "os": runtime.GOOS, "arch": runtime.GOARCH,
		"date": time.Now().Format("2006-01-02"), "model": a.cfg.Model, "provider": a.cfg.Provider,
	}
}

// envVar looks up {{env.NAME}}: the environment, less the provider keys.
func (a *App) envVar(k string) (string, bool) {
	if isProviderKey(k) {
		return "", false
	}
	return a.env.Getenv(k), true
}

// HostConfig is the host.Config of a session recorded in log, with the
// extensions specs and the model prov (nil: none; the session cannot run
// a turn), from the config and flags. Open and its siblings use it; a
// subcommand that opens a session of its own kind (panto ext check)
// starts from it.
func (a *App) HostConfig(log host.Log, specs []extension.Spec, prov host.Sender) host.Config {
	window := a.cfg.ContextWindow
	if window == 0 {
		window = config.DefaultContextWindow(a.cfg.Provider)
	}
	return host.Config{
		Log:                log,
		CWD:                a.dirs.CWD,
		Extensions:         specs,
		DisabledExtensions: a.cfg.DisabledExtensions,
		ExtensionOptions:   a.ExtensionOptions(),
		Vars:               a.builtinVars(),
		Env:                a.envVar,
		Prompt:             a.prompt,
		Provider:           prov,
		ProviderName:       a.cfg.Provider,
		Model: host.Model{
			Name:           a.cfg.Model,
			MaxTokens:      a.cfg.MaxTokens,
			ThinkingBudget: a.cfg.ThinkingBudget,
			Temperature:    a.cfg.Temperature,
			Stream:         a.cfg.Stream,
			PromptCache:    a.cfg.PromptCache,
		},
		Models:   a.cfg.Models,
		MaxSteps: a.cfg.MaxSteps,
		Cost:     costFunc(a.Prices()),
		Compaction: host.Compaction{
			Model: a.cfg.CompactionModel, Window: window,
			Threshold: a.cfg.CompactionThreshold, KeepTokens: a.cfg.CompactionKeepTokens,
		},
		ConfirmDefault:  a.cfg.ConfirmDefault,
		CacheWarnTokens: a.cfg.CacheWarnTokens,
		// A /model switch lasts across resumes, unless --model says otherwise.
		KeepRecordedModel: a.flags.Model == "",
		MaxProcs:          a.env.MaxProcs,
		Logger:            a.logger,
		Permissions:       a.hostPermissions(),
	}
}

// prompt resolves the configured prompt: the layers' SYSTEM.md and
// APPEND_SYSTEM.md under the flags, and USER_PROMPT.md.
func (a *App) prompt(vars rules.Vars) (host.Prompt, error) {
	blocks, err := sysprompt.Resolve(a.dirs, sysprompt.Flags{System: a.flags.SystemPrompt, Appends: a.flags.AppendSystem, Given: a.flags.Given, Vars: vars})
	if err != nil {
		return host.Prompt{}, err
	}
	up, err := sysprompt.UserPrompt(a.dirs, vars)
	if err != nil {
		return host.Prompt{}, err
	}
	var p host.Prompt
	for _, b := range up {
		p.UserPrompt = append(p.UserPrompt, host.PromptBlock{Text: b.Text, Source: b.Source})
	}
	for _, b := range blocks {
		p.Blocks = append(p.Blocks, host.PromptBlock{Text: b.Text, Source: b.Source})
	}
	found, notices := a.readCatalog()
	p.Sections = []host.PromptSection{indexSection(found)}
	p.Notices = notices
	return p, nil
}
