package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sessionlog"
)

// Config is everything a session needs to start. The front end (the CLI)
// fills it from flags, layers and config files; Open does the rest, in the
// documented order.
type Config struct {
	// Log says where the session is recorded.
	Log Log
	// CWD is the absolute working directory: recorded in a new log's
	// header, and sent to extensions.
	CWD string

	// Extensions are started, concurrently, in this load order.
	Extensions []extension.Spec
	// DisabledExtensions are stopped, by the name they give in Init,
	// before any event reaches them.
	DisabledExtensions []string
	// ExtensionOptions tune the extension host; Open fills in the
	// session id, the working directory and where failures are reported.
	ExtensionOptions extension.Options

	// Vars are panto's built-in {{variables}} (cwd, date, model, ...);
	// they win over those the extensions define.
	Vars map[string]string
	// Env looks up {{env.NAME}}; nil means there is none.
	Env func(name string) (string, bool)
	// Prompt resolves the configured system prompt once the variables
	// are known (the extensions' included). It is called once.
	Prompt func(vars rules.Vars) (Prompt, error)

	// Provider sends the model requests; ProviderName and Model.Name say
	// which model they go to (recorded as model_change when they differ
	// from the last one recorded).
	Provider     Sender
	ProviderName string
	// Model holds the model settings of every request.
	Model Model
	// Models are the other models the configuration names (config
	// models): SetModel takes them, and Model.Name, whatever the
	// provider's list says (Models).
	Models []string
	// MaxSteps bounds the model requests of one turn; 0 means no bound.
	MaxSteps   int
	Compaction Compaction
	// Cost prices a request's tokens, for the Usage events; nil knows no
	// price.
	Cost CostFunc

	// Interactive says the front end answers the questions extensions ask
	// (Question events) once Open has returned. Without it — and for a
	// question asked while the session opens — a confirm gets
	// ConfirmDefault ("yes" or "no") when set, and every question fails
	// at once with ErrNoUser.
	Interactive    bool
	ConfirmDefault string
	// KeepRecordedModel resumes with the model the branch recorded last
	// (a /model switch), when it is for ProviderName, instead of
	// Model.Name: set it when the user did not name a model for this
	// run. The "model" variable in Vars follows.
	KeepRecordedModel bool

	// MaxProcs sets GOMAXPROCS (runtime.GOMAXPROCS); nil leaves it alone.
	// With extensions to run, Open drops panto to one P once the log is
	// read (on every core): from then on panto mostly waits on the model,
	// the user and its extensions, and with one P the runtime stops
	// spinning a second thread at each hand-off inside an extension call,
	// CPU the extensions need (a hook round trip takes about half the
	// time). GOMAXPROCS set in the environment wins.
	MaxProcs func(int) int
	// Logger receives panto's log lines; nil means none.
	Logger hclog.Logger

	// CacheWarnTokens is how many cached tokens a change of the system
	// prompt must invalidate for the session to warn (a Notice): 0 means
	// DefaultCacheWarnTokens, a negative number never warns.
	CacheWarnTokens int

	// Permissions decide the model's tool calls and the sandbox they run
	// in (permit.go); nil runs every call, unsandboxed.
	Permissions *Permissions

	// startExtensions, set by host's tests, starts fakes in place of
	// Extensions (which it is given).
	startExtensions startExtensions
}

// Log says where a session is recorded.
type Log struct {
	// Path is the session log: created when it does not exist (its
	// directory must), resumed when it does. Empty keeps the session in
	// memory: nothing is written (--no-session, panto ext check).
	Path string
	// ReadOnly reads the log at Path and writes nothing to it: the session
	// goes on in memory from there (panto prompt shows what a resume would
	// send, without recording it).
	ReadOnly bool
	// ID is a new session's id; empty generates one.
	ID string
}

// Prompt is the configured system prompt, resolved.
type Prompt struct {
	// Blocks are the seed first, then the appends, in order.
	Blocks []PromptBlock
	// UserPrompt are the USER_PROMPT.md texts put before every user
	// message, as blocks of it, each recorded as added from its Source
	// (conversation.Block.Added), so what the user typed stays apart.
	UserPrompt []PromptBlock
	// Sections are panto's own sections (the skills' index): each set
	// once the configured prompt is recorded and the absent extensions'
	// sections removed, recorded only when its text changed; an empty
	// text removes it. No extension may own a section of their owners,
	// and they are never removed as an absent extension's.
	Sections []PromptSection
	// Notices are warnings of the prompt's reading (a skill skipped, and
	// why), told as Notice events of the session's start, so every
	// front end shows them.
	Notices []string
}

// PromptSection is one of panto's own sections.
type PromptSection struct {
	// Key is the section's full key, "owner:key" ("skills:index").
	Key  string
	Text string
	// Source says where Text came from, for people.
	Source string
}

// PromptBlock is one configured system block and where it came from.
type PromptBlock struct {
	Text string
	// Source says where Text came from, for people: "project
	// /p/.panto/APPEND_SYSTEM.md", "--append-system-prompt".
	Source string
}

// Open starts a session: it opens (or creates, or reads) the log, starts
// the extensions, renders and records the configured system prompt
// (seeded fresh, or reconciled on resume), removes the sections of
// extensions not loaded, records the model in use, records each
// extension's tool guidance, and fires session_start — in that order,
// which docs/system-prompt.md explains. What it emits meanwhile (the
// start's SystemChanged, a repaired log, an extension that did not
// start), and then Opened, waits for the first subscription. An
// extension that records a change before Open has recorded the prompt
// waits for it. On error nothing is left running. Close the session when
// done.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Prompt == nil {
		return nil, errors.New("open session: no prompt resolver")
	}
	s, err := openLog(cfg.Log, cfg.CWD)
	if err != nil {
		return nil, err
	}
	if cfg.Logger != nil {
		s.logger = cfg.Logger
	}
	s.confirm = cfg.ConfirmDefault
	s.before = len(s.conv.Messages)
	s.prov, s.providerName, s.model = cfg.Provider, cfg.ProviderName, cfg.Model
	s.cacheWarn = cfg.CacheWarnTokens
	s.models.configured = append([]string{cfg.Model.Name}, cfg.Models...)
	if cfg.KeepRecordedModel {
		if m := s.recordedModel(cfg.ProviderName); m != "" && m != s.model.Name {
			s.model.Name = m
			if _, ok := cfg.Vars["model"]; ok {
				cfg.Vars = maps.Clone(cfg.Vars)
				cfg.Vars["model"] = m
			}
		}
	}
	s.maxSteps, s.compaction, s.cost = cfg.MaxSteps, cfg.Compaction, cfg.Cost
	for _, w := range s.warnings {
		s.notice(NoticeWarning, w)
	}
	ok := false
	defer func() {
		if !ok {
			// What waits for the session to open gets ErrClosed.
			s.failed.Store(true)
			s.openUp()
			s.Close(context.Background())
		}
	}()

	var names []string
	extVars := map[string]string{}
	start := cfg.startExtensions
	if start == nil && len(cfg.Extensions) > 0 {
		start = startManager
	}
	if start != nil {
		if cfg.MaxProcs != nil && os.Getenv("GOMAXPROCS") == "" {
			cfg.MaxProcs(1)
		}
		opts := cfg.ExtensionOptions
		opts.SessionID, opts.CWD = s.id, cfg.CWD
		opts.Report = func(err error) { s.notice(NoticeError, err.Error()) }
		opts.Warn = func(text string) { s.notice(NoticeWarning, text) }
		s.exts = start(ctx, cfg.Extensions, recorder{s}, opts)
		if f, ok := s.exts.(interface{ Fatal() error }); ok {
			if err := f.Fatal(); err != nil { // an extension that had to start (extension.Spec.MustStart)
				return nil, fmt.Errorf("open session: %w", err)
			}
		}
		s.exts.Disable(cfg.DisabledExtensions)
		names = s.exts.Names()
		s.loaded = names
		extVars = s.exts.Variables()
		s.hooks, s.tools = s.exts, s.exts
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open session: %w", context.Cause(ctx))
	}
	values := make(map[string]string, len(extVars)+len(cfg.Vars))
	for k, v := range extVars {
		values[k] = v
	}
	for k, v := range cfg.Vars {
		values[k] = v
	}
	vars := rules.Map{Values: values, Env: cfg.Env}
	s.render = func(text, source string) (string, error) { return rules.Render(text, source, vars) }

	p, err := cfg.Prompt(vars)
	if err != nil {
		return nil, err
	}
	s.userPrompt = p.UserPrompt
	for _, n := range p.Notices {
		s.notice(NoticeWarning, n)
	}
	if err := s.setOwn(p.Sections); err != nil {
		return nil, err
	}
	permEntries, err := s.openPermissions(cfg.Permissions)
	if err != nil {
		return nil, err
	}
	also := append(s.modelChange(cfg.ProviderName, s.model.Name), s.openToolEntries()...)
	res, err := s.seed(p.Blocks, names, append(also, permEntries...)...)
	if err != nil {
		return nil, err
	}
	s.fresh, s.reseeded = res.Fresh, res.Reseeded
	// The sections of extensions not loaded now go with them: the prompt
	// never describes a tool that is not offered.
	if err := s.disposeAbsent(names); err != nil {
		return nil, err
	}
	if err := s.recordOwn(); err != nil {
		return nil, err
	}
	// The session is set up: the extensions' changes are recorded from
	// now on, after the start's.
	s.openUp()
	if s.exts != nil {
		s.exts.RecordGuidance(recorder{s})
		s.exts.SessionStart(ctx, extension.SessionStart{
			Resumed: !res.Fresh, Reseeded: res.Reseeded, SessionID: s.id, SessionPath: s.logPath(),
		})
	}
	// Questions asked while the session opens (in session_start) find no
	// front end yet to answer them: they get ErrNoUser.
	s.interactive.Store(cfg.Interactive)
	s.logger.Info("session ready", "path", s.logPath(), "resumed", !res.Fresh, "reseeded", res.Reseeded,
		"provider", cfg.ProviderName, "model", s.model.Name)
	s.emit(Opened{})
	ok = true
	return s, nil
}

// openUp lets the extensions' changes in (once).
func (s *Session) openUp() {
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
}

// logPath is the session log's path; empty when nothing is written.
func (s *Session) logPath() string {
	if s.w == nil {
		return ""
	}
	return s.path
}

// recordedModel is the model the branch recorded last for provider, or
// "" when its last model_change is for another provider or it has none.
func (s *Session) recordedModel(provider string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.entries) - 1; i >= 0; i-- {
		if mc := s.entries[i].ModelChange; mc != nil {
			if mc.Provider == provider {
				return mc.Model
			}
			return ""
		}
	}
	return ""
}

// modelChange returns the model_change entry to record when provider
// and model differ from the last ones recorded on the branch (a fresh
// session records its first), or nothing. It is recorded with the
// lifecycle entry, in the same write.
func (s *Session) modelChange(provider, model string) []sessionlog.Entry {
	if provider == "" || model == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.entries) - 1; i >= 0; i-- {
		if mc := s.entries[i].ModelChange; mc != nil {
			if mc.Provider == provider && mc.Model == model {
				return nil
			}
			break
		}
	}
	return []sessionlog.Entry{sessionlog.ModelChangeEntry(provider, model)}
}
