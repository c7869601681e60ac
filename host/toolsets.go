package host

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// The tool set is part of what the log records: a tools entry holds an
// extension's whole set whenever it differs from the one last recorded
// on the path — when the session opens with other tools than the branch
// last had, and at the turn boundary after an extension gave a new set
// (an MCP server's tools changed) — so a replay of any entry knows which
// tools were offered there. A resume with the same tools records nothing.

// toolSetter is what the session needs of its extensions for that;
// *extension.Manager has it.
type toolSetter interface {
	ToolSets() []extension.ToolSet
	ApplyToolChanges() []extension.ToolSet
}

// ToolsChanged says an extension's tools changed at this turn boundary:
// its requests offer the new set from now on.
type ToolsChanged struct {
	Extension string
	Reason    string
	Added     []string
	Removed   []string
	Changed   []string
}

func (ToolsChanged) Kind() string { return "tools_changed" }

// recordedTools returns the tool set last recorded for ext on the path,
// and whether there is one.
func recordedTools(entries []sessionlog.Entry, ext string) ([]sessionlog.ToolDef, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		if t := entries[i].Tools; t != nil && t.Extension == ext {
			return t.Tools, true
		}
	}
	return nil, false
}

// recordedExtensions are the extensions with a non-empty tool set
// recorded last on the path, in the order first recorded.
func recordedExtensions(entries []sessionlog.Entry) []string {
	var out []string
	for _, e := range entries {
		if t := e.Tools; t != nil && !slices.Contains(out, t.Extension) {
			out = append(out, t.Extension)
		}
	}
	return slices.DeleteFunc(out, func(name string) bool {
		defs, _ := recordedTools(entries, name)
		return len(defs) == 0
	})
}

// toolEntries returns the tools entries that bring the path's record in
// line with sets; with gone, also an empty set for each extension whose
// tools are recorded but that sets does not hold (it is not loaded).
func toolEntries(entries []sessionlog.Entry, sets []extension.ToolSet, gone bool) []sessionlog.Entry {
	var out []sessionlog.Entry
	have := map[string]bool{}
	for _, set := range sets {
		have[set.Extension] = true
		defs := make([]sessionlog.ToolDef, len(set.Tools))
		for i, t := range set.Tools {
			defs[i] = sessionlog.ToolDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		}
		old, ok := recordedTools(entries, set.Extension)
		if !ok && len(defs) == 0 {
			continue
		}
		if t, differs := diffTools(old, defs); differs {
			t.Extension, t.Reason = set.Extension, set.Reason
			out = append(out, sessionlog.ToolsEntry(t))
		}
	}
	if gone {
		for _, name := range recordedExtensions(entries) {
			if !have[name] {
				old, _ := recordedTools(entries, name)
				t, _ := diffTools(old, nil)
				t.Extension, t.Reason = name, "the extension is not loaded"
				out = append(out, sessionlog.ToolsEntry(t))
			}
		}
	}
	return out
}

// diffTools returns the record of the set now after old, and whether it
// differs.
func diffTools(old, now []sessionlog.ToolDef) (sessionlog.Tools, bool) {
	t := sessionlog.Tools{Tools: now}
	if t.Tools == nil {
		t.Tools = []sessionlog.ToolDef{}
	}
	byName := map[string]sessionlog.ToolDef{}
	for _, d := range old {
		byName[d.Name] = d
	}
	for _, d := range now {
		o, ok := byName[d.Name]
		switch {
		case !ok:
			t.Added = append(t.Added, d.Name)
		case o.Description != d.Description || !sameJSON(o.Parameters, d.Parameters):
			t.Changed = append(t.Changed, d.Name)
		}
		delete(byName, d.Name)
	}
	for _, d := range old {
		if _, left := byName[d.Name]; left {
			t.Removed = append(t.Removed, d.Name)
		}
	}
	order := func(a, b sessionlog.ToolDef) bool { return a.Name == b.Name }
	differs := len(t.Added)+len(t.Removed)+len(t.Changed) > 0 || !slices.EqualFunc(old, now, order)
	return t, differs
}

func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	if compact(&ca, a) != nil || compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// openToolEntries are the tools entries a session records as it opens.
func (s *Session) openToolEntries() []sessionlog.Entry {
	ts, ok := s.exts.(toolSetter)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return toolEntries(s.entries, ts.ToolSets(), true)
}

// applyToolChanges applies the tool sets the extensions gave since the
// last turn, records what changed and tells the front ends.
func (s *Session) applyToolChanges() error {
	ts, ok := s.exts.(toolSetter)
	if !ok {
		return nil
	}
	sets := ts.ApplyToolChanges()
	if len(sets) == 0 {
		return nil
	}
	s.mu.Lock()
	entries := toolEntries(s.entries, sets, false)
	s.mu.Unlock()
	if len(entries) == 0 {
		return nil
	}
	s.wmu.Lock()
	err := s.writeLocked(entries, func() {})
	s.wmu.Unlock()
	if err != nil {
		return err
	}
	if s.exts != nil {
		s.exts.RecordGuidance(recorder{s})
	}
	for _, e := range entries {
		t := e.Tools
		s.emit(ToolsChanged{Extension: t.Extension, Reason: t.Reason, Added: t.Added, Removed: t.Removed, Changed: t.Changed})
	}
	return nil
}

func compact(dst *bytes.Buffer, src []byte) error { return json.Compact(dst, src) }

// Tools are the tool sets recorded on the current path: what the next
// request offers, by extension (before narrowing and the clash rule).
func (s *Session) Tools() []sessionlog.Tools {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sessionlog.ToolSetsOf(s.entries)
}
