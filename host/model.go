package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// Model is what every model request of a session carries besides the
// conversation and the tools: which model, and how it is to answer.
type Model struct {
	// Name is the provider's name of the model.
	Name string
	// MaxTokens caps a reply's length; 0 leaves it to the provider (for
	// Anthropic, which requires one, panto's default applies).
	MaxTokens int
	// ThinkingBudget turns extended thinking on with this many tokens
	// (for Anthropic at least provider.AnthropicMinThinkingBudget, and
	// below MaxTokens); 0 leaves it off.
	ThinkingBudget int
	// Temperature, when not nil, is sent as is.
	Temperature *float64
	// Stream asks for the reply as it is written: its text comes as
	// TextDelta events, else whole in Reply.
	Stream bool
	// PromptCache asks the provider to cache what the turn's requests
	// share: Anthropic's are marked with cache breakpoints, OpenAI's carry
	// the session id as prompt_cache_key (where the provider sends it).
	// Off, a request asks for no caching at all.
	PromptCache bool
}

// request is the wire request of m, its messages and tools to be filled;
// key is the prompt cache key (the session id), used when m.PromptCache
// is set.
func (m Model) request(key string) serializers.Request {
	req := serializers.Request{Model: m.Name, MaxTokens: m.MaxTokens, ThinkingBudget: m.ThinkingBudget,
		Temperature: m.Temperature, Stream: m.Stream}
	if m.PromptCache {
		req.Cache = serializers.Cache{Mark: true, Key: key}
	}
	return req
}

// ModelChanged says the session's requests go to another model from now
// on (SetModel); it was recorded as a model_change entry.
type ModelChanged struct {
	Provider, Model string
}

func (ModelChanged) Kind() string { return "model_changed" }

// SetModel sends the session's next requests to model, on the same
// provider, and records the change (a model_change entry) so a resume
// goes on with it. Setting the model in use records nothing. A name that
// is neither configured (Config.Model, Config.Models) nor in the
// provider's list is refused with an *UnknownModelError, which suggests
// the nearest names; where the provider has no list (echo, a server
// without /v1/models, the list could not be fetched) any name is taken.
// ForceModel takes any name. It fails with ErrBusy while a turn runs,
// ErrClosed once Close has begun. The prompt's {{model}} variable keeps
// the value it was rendered with: a recorded block is never rewritten.
func (s *Session) SetModel(model string) error { return s.setModel(model, false) }

// ForceModel is SetModel without the check of the name against the
// configured models and the provider's list (/model NAME --force): a
// model the provider serves but does not list.
func (s *Session) ForceModel(model string) error { return s.setModel(model, true) }

func (s *Session) setModel(model string, force bool) error {
	model = strings.TrimSpace(model)
	if model == "" {
		return errors.New("set model: no model name")
	}
	if s.providerName == "" {
		return errors.New("set model: the session has no provider to record the change for")
	}
	if !force && s.modelName() != model {
		if err := s.checkModel(model); err != nil {
			return err
		}
	}
	_, done, err := s.exclusive(context.Background())
	if err != nil {
		return err // ErrBusy or ErrClosed
	}
	defer done()
	if s.modelName() == model {
		return nil
	}
	s.wmu.Lock()
	err = s.writeLocked([]sessionlog.Entry{sessionlog.ModelChangeEntry(s.providerName, model)}, func() { s.model.Name = model })
	s.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("set model: %w", err)
	}
	s.emit(ModelChanged{Provider: s.providerName, Model: model})
	return nil
}

// checkModel checks model against the configured names and the
// provider's list (ModelList.Check), fetched first if need be: before
// the session is taken, so a slow provider holds up /model, not a turn.
// Close cuts the fetch short; ErrClosed and ErrBusy come before it.
func (s *Session) checkModel(model string) error {
	leave, err := s.ops.enter()
	if err != nil {
		return err
	}
	defer leave()
	if s.Busy() {
		return ErrBusy
	}
	ctx, release := s.ops.cut(context.Background())
	defer release()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return s.Models(ctx).Check(model)
}

// ModelLister is a provider that lists its models (provider.Lister:
// GET /v1/models).
type ModelLister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// ModelList is what /model offers: the models configured and the
// provider's.
type ModelList struct {
	// Provider is the session's provider.
	Provider string
	// Current is the model in use.
	Current string
	// Configured are the models the configuration names: its model
	// first, then its models list.
	Configured []string
	// Listed are the provider's models, as it lists them; nil when it has
	// no list (Unlisted says why).
	Listed []string
	// Unlisted says why there is no list: the provider has none, or
	// fetching it failed. Any name is taken then.
	Unlisted error
}

// ErrNoModelList is ModelList.Unlisted for a provider that has no list
// of its models (echo, a test's).
var ErrNoModelList = errors.New("the provider does not list its models")

// Names are the models to offer, each once: the one in use, the
// configured ones, then the provider's.
func (l ModelList) Names() []string {
	var out []string
	seen := map[string]bool{}
	for _, group := range [][]string{{l.Current}, l.Configured, l.Listed} {
		for _, n := range group {
			if n != "" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// Check says whether SetModel takes name: the one in use, a configured
// one, one of the provider's, or any where the provider has no list.
func (l ModelList) Check(name string) error {
	if l.Listed == nil || name == l.Current || slices.Contains(l.Configured, name) || slices.Contains(l.Listed, name) {
		return nil
	}
	return &UnknownModelError{Name: name, Provider: l.Provider, Suggestions: suggest(name, l.Names())}
}

// UnknownModelError is SetModel's refusal of a name neither configured
// nor in the provider's list. Pick a name from the list (/model shows
// it), add it to config models, or force it (ForceModel; /model NAME
// --force) when the provider serves a model it does not list.
type UnknownModelError struct {
	Name, Provider string
	// Suggestions are the nearest known names, nearest first.
	Suggestions []string
}

func (e *UnknownModelError) Error() string {
	s := fmt.Sprintf("%s does not list a model %q, nor does the config", e.Provider, e.Name)
	if len(e.Suggestions) > 0 {
		s += fmt.Sprintf(": did you mean %s?", strings.Join(quoteAll(e.Suggestions), " or "))
	}
	return s + " (/model lists them; /model NAME --force takes it anyway)"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// suggest is the names nearest name, at most three: those that contain
// it (or that it contains), then those a few edits away.
func suggest(name string, names []string) []string {
	type cand struct {
		n string
		d int
	}
	var cs []cand
	low := strings.ToLower(name)
	for _, n := range names {
		ln := strings.ToLower(n)
		d := editDistance(low, ln)
		if strings.Contains(ln, low) || strings.Contains(low, ln) {
			d = min(d, 1)
		}
		if d <= max(2, len(name)/3) {
			cs = append(cs, cand{n, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range cs[:min(3, len(cs))] {
		out = append(out, c.n)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// modelCatalog is what a session knows of the models: the configured
// names, and the provider's list, fetched once (a failure is tried again
// after a minute).
type modelCatalog struct {
	configured []string

	mu        sync.Mutex
	listed    []string
	unlisted  error
	fetchedAt time.Time
}

// listRetry is how long a failure to fetch the provider's list stands
// before it is fetched again.
const listRetry = time.Minute

// Models returns the models /model offers: the one in use, the
// configured ones, and the provider's list — fetched on the first call
// (GET /v1/models, which may take a while: call it off the UI's
// thread) and kept for the session.
func (s *Session) Models(ctx context.Context) ModelList {
	c := &s.models
	l := ModelList{Provider: s.providerName, Current: s.modelName(), Configured: slices.Clone(c.configured)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fetchedAt.IsZero() || c.unlisted != nil && c.unlisted != ErrNoModelList && time.Since(c.fetchedAt) > listRetry {
		lister, ok := s.prov.(ModelLister)
		if !ok {
			c.listed, c.unlisted = nil, ErrNoModelList
		} else if names, err := lister.ListModels(ctx); err != nil || len(names) == 0 {
			if err == nil {
				err = errors.New("the provider listed no models")
			}
			c.listed, c.unlisted = nil, err
			s.logger.Debug("no model list: any name is taken", "provider", s.providerName, "error", err)
		} else {
			c.listed, c.unlisted = append([]string{}, names...), nil
		}
		c.fetchedAt = time.Now()
		if ctx.Err() != nil {
			c.fetchedAt = time.Time{} // a request given up on is tried again next time
		}
	}
	l.Listed, l.Unlisted = slices.Clone(c.listed), c.unlisted
	return l
}

// modelName is the model requests go to now.
func (s *Session) modelName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model.Name
}

// settings is the model settings of the next request.
func (s *Session) settings() Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}
