package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
}

// request is the wire request of m, its messages and tools to be filled.
func (m Model) request() serializers.Request {
	return serializers.Request{Model: m.Name, MaxTokens: m.MaxTokens, ThinkingBudget: m.ThinkingBudget,
		Temperature: m.Temperature, Stream: m.Stream}
}

// ModelChanged says the session's requests go to another model from now
// on (SetModel); it was recorded as a model_change entry.
type ModelChanged struct {
	Provider, Model string
}

func (ModelChanged) Kind() string { return "model_changed" }

// SetModel sends the session's next requests to model, on the same
// provider, and records the change (a model_change entry) so a resume
// goes on with it. Setting the model in use records nothing. It fails
// with ErrBusy while a turn runs, ErrClosed once Close has begun. The
// prompt's {{model}} variable keeps the value it was rendered with: a
// recorded block is never rewritten.
func (s *Session) SetModel(model string) error {
	model = strings.TrimSpace(model)
	if model == "" {
		return errors.New("set model: no model name")
	}
	if s.providerName == "" {
		return errors.New("set model: the session has no provider to record the change for")
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
