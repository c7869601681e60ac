package host

import (
	"errors"
	"fmt"
	"strings"

	"github.com/panto-dev/panto/sessionlog"
)

// ModelChanged says the session's requests go to another model from now
// on (SetModel); it was recorded as a model_change entry.
type ModelChanged struct {
	Provider, Model string
}

func (ModelChanged) Kind() string { return "model_changed" }

// SetModel sends the session's next requests to model, on the same
// provider, and records the change (a model_change entry) so a resume
// goes on with it. Setting the model in use records nothing. It fails
// with ErrBusy while a turn runs. The prompt's {{model}} variable keeps
// the value it was rendered with: a recorded block is never rewritten.
func (s *Session) SetModel(model string) error {
	model = strings.TrimSpace(model)
	if model == "" {
		return errors.New("set model: no model name")
	}
	if s.providerName == "" {
		return errors.New("set model: the session has no provider to record the change for")
	}
	if !s.turnMu.TryLock() {
		return ErrBusy
	}
	defer s.turnMu.Unlock()
	if s.model() == model {
		return nil
	}
	s.mu.Lock()
	err := s.appendLocked(sessionlog.ModelChangeEntry(s.providerName, model))
	if err == nil {
		s.req.Model = model
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("set model: %w", err)
	}
	s.emit(ModelChanged{Provider: s.providerName, Model: model})
	return nil
}

// model is the model requests go to now.
func (s *Session) model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.req.Model
}
