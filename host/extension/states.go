package extension

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/panto-dev/panto/internal/protocol"
)

// What /extensions shows and does: each extension's state, and a
// disable for the rest of the session.

// State is one extension as /extensions shows it.
type State struct {
	Name string
	// Path and Source say where it came from.
	Path, Source string
	// Running is set while it runs; otherwise Why says why not.
	Running bool
	Why     string
	// Restarted says it died once and was restarted.
	Restarted bool
	// Watches says it checks tool calls (tool_call): while it is stopped,
	// no tool call runs.
	Watches bool
	// Tools are the names of the tools it offers.
	Tools []string
}

// String is the state in a line, for people.
func (s State) String() string {
	var b strings.Builder
	b.WriteString(s.Name)
	switch {
	case s.Running && s.Restarted:
		b.WriteString(": running (restarted once after it stopped)")
	case s.Running:
		b.WriteString(": running")
	default:
		b.WriteString(": stopped — " + s.Why)
	}
	if s.Watches {
		if s.Running || strings.Contains(s.Why, "disabled for this session") || strings.Contains(s.Why, "disabled in config") {
			b.WriteString("; checks tool calls")
		} else {
			b.WriteString("; checks tool calls, so no tool call runs until it is back")
		}
	}
	if len(s.Tools) > 0 {
		b.WriteString("; tools: " + strings.Join(s.Tools, ", "))
	}
	return b.String()
}

// errDisabledByUser is why an extension the user disabled with
// /extensions disable is stopped: the user's choice, not a failure.
var errDisabledByUser = errors.New("disabled for this session by /extensions disable")

// States returns every extension's state in load order, then the
// required ones that did not start.
func (m *Manager) States() []State {
	var out []State
	for _, e := range m.list() {
		st := State{Name: e.Name(), Path: e.spec.Path, Source: e.spec.Source, Restarted: e.restarts > 0, Watches: e.Handles(protocol.EventToolCall)}
		if err := e.Disabled(); err != nil {
			st.Why = err.Error()
			if errors.Is(err, errDied) {
				st.Why += "; stopped for this session"
			}
		} else {
			st.Running = true
			for _, t := range e.tools() {
				st.Tools = append(st.Tools, t.GetName())
			}
		}
		out = append(out, st)
	}
	m.required.mu.Lock()
	for _, x := range m.required.missing {
		out = append(out, State{Name: x.name, Path: x.spec.Path, Source: x.spec.Source, Watches: true,
			Why: fmt.Sprintf("did not start (%v); it is required, so no tool call runs until it does", startReason(x.reason))})
	}
	m.required.mu.Unlock()
	return out
}

// ErrNoExtension is returned by DisableForSession for a name no
// extension has.
var ErrNoExtension = errors.New("no extension of that name (see /extensions)")

// DisableForSession stops the extension name for the rest of the session
// (until a reload): it gets no event, its tools are not offered, it
// checks no tool call, and its sections leave the prompt. A required one
// that did not start is no longer waited for.
func (m *Manager) DisableForSession(name string) error {
	found := false
	m.required.mu.Lock()
	for _, x := range m.required.missing {
		found = found || x.name == name || x.initName == name || filepath.Base(x.spec.Path) == name
	}
	m.required.mu.Unlock()
	m.required.drop(name)
	for _, e := range m.list() {
		if e.Name() != name {
			continue
		}
		found = true
		e.mu.Lock()
		was := e.disabled
		e.disabled = errDisabledByUser
		e.mu.Unlock()
		if was == nil {
			go e.stop(true, m.opts.HookTimeout) // healthy: ask it to shut down
		}
		if err := m.rec.DisposeSections(name, "extension "+name+" was disabled for this session by the user"); err != nil {
			return fmt.Errorf("extension %s: remove its sections: %w", name, err)
		}
	}
	if !found {
		return fmt.Errorf("%q: %w", name, ErrNoExtension)
	}
	return nil
}
