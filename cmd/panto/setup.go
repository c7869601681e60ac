package main

import (
	"context"
	"encoding/json"
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
	"github.com/panto-dev/panto/host/provider"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// app is what every command that talks to a model needs, resolved once.
type app struct {
	dirs   layers.Dirs
	cfg    config.Config
	logger hclog.Logger
	close  func()
	// sockets is the folder of this run's extension sockets
	// (extension.OpenSocketDir); empty: the system's temporary folder.
	sockets string
	// notices are what the user should be told before the session
	// starts: the project settings ignored, untrusted extensions
	// skipped. Each front end shows them its own way.
	notices []string
}

// loadApp resolves the directories and config, applies the flags on top
// and opens panto's log file.
func loadApp(e *env, o *options) (*app, error) {
	dirs, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(e, dirs)
	if err != nil {
		return nil, err
	}
	if o.provider != "" && o.provider != cfg.Provider {
		// The config's base_url, model and compaction_model were set for
		// the configured provider; another provider's URL and model names
		// would only misroute the request. Its own defaults apply, unless
		// a flag or its environment variable says otherwise (below).
		cfg.Provider = o.provider
		cfg.BaseURL, cfg.Model, cfg.CompactionModel = "", "", ""
		cfg.Models = nil
	}
	switch cfg.Provider {
	case provider.Anthropic, provider.OpenAI, provider.Echo:
	default:
		return nil, usageErrorf("--provider %q: want anthropic, openai or echo", cfg.Provider)
	}
	if o.model != "" {
		cfg.Model = o.model
	}
	if cfg.Model == "" {
		cfg.Model = config.DefaultModel(cfg.Provider)
	}
	if env := baseURLEnv(cfg.Provider); env != "" && e.getenv(env) != "" {
		cfg.BaseURL = e.getenv(env)
	}
	if o.baseURL != "" {
		cfg.BaseURL = o.baseURL
	}
	if v := e.getenv("PANTO_LOG_LEVEL"); v != "" {
		cfg.LogLevel = v
	}
	if o.logLevel != "" {
		cfg.LogLevel = o.logLevel
	}
	if err := config.CheckLogLevel(cfg.LogLevel); err != nil {
		return nil, usageErrorf("%v", err)
	}
	// The limits that depend on the provider, once the flags have said
	// which one it is.
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger, closeLog, err := openLog(dirs.State, cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	a := &app{dirs: dirs, cfg: cfg, logger: logger, close: closeLog, notices: projectNotices(cfg.Project)}
	a.openSockets(e)
	return a, nil
}

// openSockets gives the run a folder of its own for its extensions'
// sockets, removed when the app closes, and removes those of runs that
// are gone (a SIGKILLed panto's). Without one, go-plugin's default
// applies (the system's temporary folder), and the log says why.
func (a *app) openSockets(e *env) {
	dir, removed, remove, err := extension.OpenSocketDir(extension.SocketRoots(e.getenv))
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

// tell writes the app's notices to w, a "panto: " line each.
func (a *app) tell(w io.Writer) {
	notices := a.notices
	prev, err := loadGuards(a.dirs)
	if err != nil {
		notices = append(notices, err.Error())
	}
	for _, c := range a.cfg.Guards.Changed(prev) {
		was, now := c.Was, c.Now
		if was == "" {
			was = "not set"
		}
		if now == "" {
			now = "not set"
		}
		notices = append(notices, fmt.Sprintf("%s in %s changed since panto last ran: now %s, was %s. If you did not change it, something else did (the model's tools can write your files): check the file",
			c.Key, c.Path, now, was))
	}
	if err := saveGuards(a.dirs, a.cfg.Guards); err != nil {
		notices = append(notices, err.Error())
	}
	for _, n := range notices {
		fmt.Fprintf(w, "panto: %s\n", n)
	}
}

// guardsFile is where panto remembers, from run to run, the settings
// that guard the user (config.GuardKeys), to say when they changed.
const guardsFile = "guards.json"

func loadGuards(d layers.Dirs) (config.Guards, error) {
	path := filepath.Join(d.State, guardsFile)
	data, err := layers.ReadFile(path, layers.MaxFileSize, layers.RegularOnly)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var g struct {
		Files config.Guards `json:"files"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("read %s: %w (delete it: panto writes it again)", path, err)
	}
	return g.Files, nil
}

func saveGuards(d layers.Dirs, g config.Guards) error {
	if g == nil {
		g = config.Guards{}
	}
	data, err := json.MarshalIndent(struct {
		Version int           `json:"version"`
		Files   config.Guards `json:"files"`
	}{1, g}, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(d.State, guardsFile)
	if err := os.MkdirAll(d.State, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteFile(context.Background(), path, append(data, '\n'))
}

// loadConfig loads the layers' config files, the project's only as the
// user trusted it.
func loadConfig(e *env, dirs layers.Dirs) (config.Config, error) {
	store, err := trust.Load(dirs.Layer(layers.User), trust.ProjectsFile)
	if err != nil {
		return config.Config{}, err
	}
	return config.Load(dirs, config.Options{Trust: store, KeyEnv: func(p string) string { return keyInEnv(e, p) }})
}

// keyInEnv names the environment variable that holds provider p's key,
// "" when none does.
func keyInEnv(e *env, p string) string {
	for _, k := range providerKeyVars(p) {
		if e.getenv(k) != "" {
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

// projectNotices say what of the project's config file did not count.
func projectNotices(p *config.Project) []string {
	if p == nil {
		return nil
	}
	if p.Err != nil {
		return []string{fmt.Sprintf("ignoring the project settings in %s: they are not trusted, and: %v", p.Path, p.Err)}
	}
	if !p.Applied {
		var keys []string
		for _, s := range p.Settings {
			keys = append(keys, s.Key)
		}
		why := "they are not trusted"
		switch p.Status {
		case trust.Changed:
			why = "they changed since you trusted them"
		case trust.Declined:
			why = "you declined them"
		}
		return []string{fmt.Sprintf("ignoring the project settings in %s (%s; they would set %s): run 'panto trust' to review and trust them",
			p.Path, why, strings.Join(keys, ", "))}
	}
	var out []string
	for _, s := range p.Never() {
		out = append(out, fmt.Sprintf("ignoring %s in the project settings %s: %s", s.Key, p.Path, s.Never))
	}
	return out
}

// checkPromptFlags reads --system-prompt and --append-system-prompt as a
// session will; a value that looks like a path but names no file is a
// usage error.
func checkPromptFlags(o *options) error {
	err := sysprompt.Flags{System: o.systemPrompt, Appends: o.appendSystem}.Check()
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
func (a *app) newProvider(e *env) (provider.Provider, error) {
	key := ""
	if v := apiKeyEnv(a.cfg.Provider); v != "" {
		key = e.getenv(v)
	}
	return provider.New(provider.Config{
		Name:             a.cfg.Provider,
		BaseURL:          a.cfg.BaseURL,
		APIKey:           key,
		AnthropicVersion: a.cfg.AnthropicVersion,
		Retries:          a.cfg.Retries,
		Timeout:          a.cfg.RequestTimeout,
		Logger:           a.logger.Named("provider"),
	})
}

// openLog opens panto's log file, state/panto.log (0600), appending. Level
// "off" writes nothing. stdout never carries log lines.
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
	// go-plugin reports a few errors through the standard logger; they
	// belong in the log file, not on the user's terminal.
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
func (a *app) builtinVars() map[string]string {
	return map[string]string{
		"cwd": a.dirs.CWD, "os": runtime.GOOS, "arch": runtime.GOARCH,
		"date": time.Now().Format("2006-01-02"), "model": a.cfg.Model, "provider": a.cfg.Provider,
	}
}

// envVar looks up {{env.NAME}}: the environment, less the provider keys.
func envVar(e *env) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if isProviderKey(k) {
			return "", false
		}
		return e.getenv(k), true
	}
}

// extensionSpecs are the extensions the flags and layers say to start, in
// load order, less those config disables by file name; those that may not
// run (untrusted, changed) are reported on stderr. Those the base and user
// layers install are safeguards that must run for tools to run (Required),
// unless config's [extensions.NAME] says otherwise.
func (a *app) extensionSpecs(e *env, o *options) ([]extension.Spec, error) {
	if o.noExtensions {
		return nil, nil
	}
	cands, err := discover(a.dirs, o.extensions)
	if err != nil {
		return nil, err
	}
	specs := withoutDisabled(runnable(cands, e.stderr), a.cfg.DisabledExtensions)
	specs = a.withoutProjectDisabled(e, specs)
	for i := range specs {
		specs[i].Environ = a.extensionEnviron(e, specs[i].Path)
		specs[i].Required = a.required(specs[i])
	}
	return reattached(e, specs)
}

// required says whether the extension of spec is a safeguard: one the
// base or user layer installs, or one config marks required.
func (a *app) required(spec extension.Spec) bool {
	if r, ok := a.cfg.Required[filepath.Base(spec.Path)]; ok {
		return r
	}
	return spec.Source == string(layers.Base)+" layer" || spec.Source == string(layers.User)+" layer"
}

// withoutProjectDisabled applies a trusted project's disabled_extensions:
// to the project layer's own extensions only, by file name; an entry
// naming one the user installed is reported and ignored.
func (a *app) withoutProjectDisabled(e *env, specs []extension.Spec) []extension.Spec {
	if len(a.cfg.ProjectDisabledExtensions) == 0 {
		return specs
	}
	project := string(layers.Project) + " layer"
	for _, name := range a.cfg.ProjectDisabledExtensions {
		for _, sp := range specs {
			if filepath.Base(sp.Path) == name && sp.Source != project {
				fmt.Fprintf(e.stderr, "panto: ignoring disabled_extensions entry %q in the project settings %s: it names an extension you installed (%s); a project may only disable its own\n",
					name, a.cfg.Project.Path, sp.Source)
			}
		}
	}
	var out []extension.Spec
	for _, sp := range specs {
		if sp.Source == project && slices.Contains(a.cfg.ProjectDisabledExtensions, filepath.Base(sp.Path)) {
			continue
		}
		out = append(out, sp)
	}
	return out
}

// reattached applies PANTO_REATTACH_EXTENSIONS: each extension it names,
// running under a debugger, is attached to instead of started — in the
// place of the one of that file name, or after the others.
func reattached(e *env, specs []extension.Spec) ([]extension.Spec, error) {
	v := e.getenv(extension.ReattachEnv)
	if v == "" {
		return specs, nil
	}
	m, err := extension.Reattachments(v)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		i := slices.IndexFunc(specs, func(s extension.Spec) bool { return filepath.Base(s.Path) == name })
		if i < 0 {
			specs = append(specs, extension.Spec{Path: name, Source: extension.ReattachEnv})
			i = len(specs) - 1
		} else {
			specs[i].Source += ", reattached by " + extension.ReattachEnv
		}
		specs[i].Reattach = m[name]
	}
	return specs, nil
}

// extensionEnviron is the environment the extension at path starts with:
// panto's, less the provider keys unless config's extension_api_keys
// names the extension's file name, and with ownDirsEnv naming panto's
// own folders.
func (a *app) extensionEnviron(e *env, path string) []string {
	keep := slices.Contains(a.cfg.ExtensionAPIKeys, filepath.Base(path))
	all := os.Environ
	if e.environ != nil {
		all = e.environ
	}
	out := []string{}
	for _, kv := range all() {
		k, _, _ := strings.Cut(kv, "=")
		if (keep || !isProviderKey(k)) && k != ownDirsEnv {
			out = append(out, kv)
		}
	}
	return append(out, ownDirsEnv+"="+a.ownDirs())
}

// ownDirsEnv names panto's own folders for every extension: the tools
// extension's write and edit refuse them, and the guard example asks
// before a bash command that names them (docs/tools.md).
const ownDirsEnv = "PANTO_OWN_DIRS"

// ownDirs are panto's own folders — the user layer, the base layer, the
// sessions and the state folder — as one list (filepath.ListSeparator).
func (a *app) ownDirs() string {
	dirs := []string{a.dirs.Layer(layers.User), a.dirs.Layer(layers.Base), a.dirs.Sessions, a.dirs.State}
	return strings.Join(dirs, string(filepath.ListSeparator))
}

// hostConfig is the session every command that opens one starts: log is
// where it is recorded, specs its extensions, prov its model.
func (a *app) hostConfig(e *env, o *options, log host.Log, specs []extension.Spec, prov host.Sender) host.Config {
	window := a.cfg.ContextWindow
	if window == 0 {
		window = config.DefaultContextWindow(a.cfg.Provider)
	}
	return host.Config{
		Log:                log,
		CWD:                a.dirs.CWD,
		Extensions:         specs,
		DisabledExtensions: a.cfg.DisabledExtensions,
		ExtensionOptions:   a.extensionOptions(),
		Vars:               a.builtinVars(),
		Env:                envVar(e),
		Prompt: func(vars rules.Vars) (host.Prompt, error) {
			blocks, err := sysprompt.Resolve(a.dirs, sysprompt.Flags{System: o.systemPrompt, Appends: o.appendSystem, Vars: vars})
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
			return p, nil
		},
		Provider:     prov,
		ProviderName: a.cfg.Provider,
		Model: host.Model{
			Name:           a.cfg.Model,
			MaxTokens:      a.cfg.MaxTokens,
			ThinkingBudget: a.cfg.ThinkingBudget,
			Temperature:    a.cfg.Temperature,
			Stream:         a.cfg.Stream,
		},
		MaxSteps: a.cfg.MaxSteps,
		Compaction: host.Compaction{
			Model: a.cfg.CompactionModel, Window: window,
			Threshold: a.cfg.CompactionThreshold, KeepTokens: a.cfg.CompactionKeepTokens,
		},
		ConfirmDefault: a.cfg.ConfirmDefault,
		// A /model switch lasts across resumes, unless --model says otherwise.
		KeepRecordedModel: o.model == "",
		MaxProcs:          e.maxProcs,
		Logger:            a.logger,
	}
}
