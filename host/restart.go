package host

import (
	"errors"
	"fmt"

	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// An extension restarted after its process died (extension/restart.go)
// comes back with the tools it gives now: they are recorded when they
// differ from those on the path, and its tool guidance set again (nothing
// is recorded when unchanged). /extensions shows the extensions' states,
// and /extensions disable stops one for the rest of the session.

var _ extension.Restarter = recorder{}

// Restarted records the restarted extension name's tools and guidance.
func (r recorder) Restarted(name string) {
	s := r.s
	if s.opened() != nil {
		return
	}
	ts, ok := s.exts.(toolSetter)
	if ok {
		var sets []extension.ToolSet
		for _, set := range ts.ToolSets() {
			if set.Extension == name {
				set.Reason = "the extension was restarted"
				sets = append(sets, set)
			}
		}
		if err := s.recordToolSets(sets); err != nil {
			s.notice(NoticeError, fmt.Sprintf("extension %s restarted: record its tools: %v", name, err))
		}
	}
	s.exts.RecordGuidance(r)
}

// recordToolSets records the entries that bring the path's tools in line
// with sets, and tells the front ends.
func (s *Session) recordToolSets(sets []extension.ToolSet) error {
	s.wmu.Lock()
	s.mu.Lock()
	entries := toolEntries(s.entries, sets, false)
	s.mu.Unlock()
	if len(entries) == 0 {
		s.wmu.Unlock()
		return nil
	}
	err := s.writeLocked(entries, func() {})
	s.wmu.Unlock()
	if err != nil {
		return err
	}
	for _, e := range entries {
		t := e.Tools
		s.emit(ToolsChanged{Extension: t.Extension, Reason: t.Reason, Added: t.Added, Removed: t.Removed, Changed: t.Changed})
	}
	return nil
}

// extensionStates is what /extensions needs of the extensions;
// *extension.Manager has it.
type extensionStates interface {
	States() []extension.State
	DisableForSession(name string) error
}

// ExtensionState is one extension as /extensions shows it.
type ExtensionState = extension.State

// ErrNoExtension is returned by DisableExtension for a name no extension
// has.
var ErrNoExtension = extension.ErrNoExtension

// Extensions returns each extension's state, in load order, then the
// required ones that did not start.
func (s *Session) Extensions() []ExtensionState {
	if st, ok := s.exts.(extensionStates); ok {
		return st.States()
	}
	return nil
}

// DisableExtension stops the extension name for the rest of this session
// (a reload or a resume starts it again): it gets no event, its tools are
// no longer offered (recorded: an empty tools entry), its sections leave
// the prompt (recorded), and as a tool_call watcher it no longer blocks
// calls. A notice says so.
func (s *Session) DisableExtension(name string) error {
	done, err := s.ops.enter()
	if err != nil {
		return fmt.Errorf("/extensions disable %s: %w", name, err)
	}
	defer done()
	st, ok := s.exts.(extensionStates)
	if !ok {
		return fmt.Errorf("/extensions disable %s: %w", name, ErrNoExtension)
	}
	if err := st.DisableForSession(name); err != nil {
		return fmt.Errorf("/extensions disable %s: %w", name, err)
	}
	// Recorded as its tool set, empty from here on (even when it had no
	// tools): the log says where it was disabled, and why.
	s.wmu.Lock()
	s.mu.Lock()
	old, _ := recordedTools(s.entries, name)
	s.mu.Unlock()
	t, _ := diffTools(old, nil)
	t.Extension, t.Reason = name, "disabled for this session by /extensions disable"
	err = s.writeLocked([]sessionlog.Entry{sessionlog.ToolsEntry(t)}, func() {})
	s.wmu.Unlock()
	if err != nil && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("/extensions disable %s: record it: %w", name, err)
	}
	if len(t.Removed) > 0 {
		s.emit(ToolsChanged{Extension: name, Reason: t.Reason, Removed: t.Removed})
	}
	s.notice(NoticeWarning, fmt.Sprintf("the %s extension is disabled for this session: it gets no events, its tools are gone and it checks no tool call; /reload starts it again", name))
	return nil
}
