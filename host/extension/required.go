package extension

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// A required extension (Spec.Required: one the user installed in the
// base or user layer, or marked required in config) is a safeguard: while
// it is not running, tool calls are blocked rather than run unwatched.
//
// "Not running" is decided by what panto knows of it:
//
//   - It never got as far as Init (it failed to start, timed out, was
//     refused, or lost its name to an extension loaded before it): panto
//     cannot know whether it watches tool calls, so every tool call is
//     blocked (fail closed).
//   - It ran and was disabled after a failure (it crashed, hung or answered
//     nonsense): it blocks tool calls when it declared tool_call; one that
//     watches no tool call guards none (RunTool's watcher loop, which does
//     this for every watcher, required or not).
//
// An extension the user disabled on purpose (disabled_extensions) is not
// missing: it never starts, or Disable names it.

// missingExt is a required extension that did not start.
type missingExt struct {
	// name is the file's base name; initName the name it gave in Init,
	// when it got that far (it lost it to an extension loaded first).
	name, initName string
	spec           Spec
	reason         error
}

// requiredSet holds the required extensions that are missing.
type requiredSet struct {
	mu      sync.Mutex
	missing []missingExt
}

// add records spec, which did not start for reason; initName is the
// name it gave in Init, if it did.
func (r *requiredSet) add(spec Spec, initName string, reason error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.missing = append(r.missing, missingExt{name: filepath.Base(spec.Path), initName: initName, spec: spec, reason: reason})
}

// drop forgets the missing extensions named name (by file name): the
// user disabled them in the config.
func (r *requiredSet) drop(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.missing[:0]
	for _, x := range r.missing {
		if x.name != name && x.initName != name {
			kept = append(kept, x)
		}
	}
	r.missing = kept
}

// first returns the first missing required extension, if any.
func (r *requiredSet) first() (missingExt, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.missing) == 0 {
		return missingExt{}, false
	}
	return r.missing[0], true
}

// Missing returns, for people, each required extension that did not
// start: its path and why. Tool calls are blocked while any is listed.
func (m *Manager) Missing() []string {
	m.required.mu.Lock()
	defer m.required.mu.Unlock()
	var out []string
	for _, x := range m.required.missing {
		out = append(out, fmt.Sprintf("%s (%s): %v", x.spec.Path, x.spec.Source, x.reason))
	}
	return out
}

// requiredStartErr is the report of a required extension that did not
// start: the start error, and that tool calls wait for it.
func requiredStartErr(spec Spec, err error) error {
	return fmt.Errorf("%w; it is required (%s), so panto blocks every tool call until it runs: %s",
		err, requiredWhy(spec), howToProceed(filepath.Base(spec.Path), spec))
}

// requiredWhy says why spec is required, for people.
func requiredWhy(spec Spec) string {
	if strings.HasSuffix(spec.Source, " layer") {
		return "installed in the " + spec.Source
	}
	return "marked required"
}

// howToProceed tells the user how to get tools back while the required
// extension name (file spec.Path) is not running.
func howToProceed(name string, spec Spec) string {
	return fmt.Sprintf("type /reload (or restart panto) to start it again, or /extensions disable %s to go on without it for this session; to run without it for good, remove %s or add %q to disabled_extensions in your user config",
		name, spec.Path, name)
}

// blockMissing returns the text of a tool call blocked because a
// required extension did not start, or "" when none is missing.
func (m *Manager) blockMissing() string {
	x, ok := m.required.first()
	if !ok {
		return ""
	}
	return fmt.Sprintf("blocked: the extension %s (%s, %s) is a required safeguard and is not running: it did not start (%v). "+
		"panto cannot tell whether it would have checked this call, so it runs no tool call without it. The user can %s.",
		x.name, x.spec.Path, requiredWhy(x.spec), startReason(x.reason), howToProceed(x.name, x.spec))
}

// startReason is a start error without the "extension did not start:
// PATH (SOURCE):" the block text already says.
func startReason(err error) error {
	msg := err.Error()
	if errors.Is(err, ErrStart) {
		if _, rest, ok := strings.Cut(msg, "): "); ok {
			return errors.New(rest)
		}
	}
	return err
}
