package host

import (
	"fmt"
	"slices"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// Sections are keyed system blocks (spec amendment 4; the rule is
// conversation's, shared with sdk/sdktest): a block that must
// be updated or withdrawn — tool guidance, the environment, a context file
// — is a section, set in place instead of piled on the old one. Each is
// owned by one extension: its key, as recorded, is the owner's name, a
// colon, and the key the extension chose ("env:environment"), so two
// extensions never clobber each other's sections. When the owner is not
// loaded at resume, or is disabled mid-session, panto removes its sections
// on its behalf, so the prompt never describes a tool that is not offered.

// setSectionOf records by's section key with text, its {{variables}}
// rendered first; an empty text removes it. Nothing is recorded when the
// prompt already holds exactly that (a provider's prompt cache survives an
// unchanged section).
func (s *Session) setSectionOf(by, key, text string) error {
	full, err := conversation.SectionKey(by, key)
	if err != nil {
		return err
	}
	if slices.Contains(s.ownOwners, by) {
		return fmt.Errorf("section %s refused: the sections of %s are panto's own (rename the extension)", full, by)
	}
	if s.render != nil && text != "" {
		rendered, err := s.render(text, "extension "+by)
		if err != nil {
			s.emit(SystemRefused{By: by, Mode: conversation.ModeAppend, Key: full, Text: text, Err: err})
			return err
		}
		text = rendered
	}
	return s.setSection(by, full, text, extensionSource(by))
}

// setSection records the section full with text by by, from source,
// unless the prompt already has it so.
func (s *Session) setSection(by, full, text, source string) error {
	m := conversation.KeyedSystemMessage(full, text).WithSource(source)
	if err := m.Validate(); err != nil {
		return fmt.Errorf("record section: %w", err)
	}
	s.wmu.Lock() // no other change between the look and the write
	defer s.wmu.Unlock()
	s.mu.Lock()
	unchanged := conversation.SectionUnchanged(s.conv.EffectiveSystem(), full, text)
	s.mu.Unlock()
	if unchanged {
		return nil
	}
	if err := s.writeLocked([]sessionlog.Entry{sessionlog.MessageEntry(m)}, func() { s.conv.Append(m) }); err != nil {
		return err
	}
	s.notifyLocked(by, []conversation.Message{m})
	return nil
}

// sectionsOf returns by's sections in the current prompt, in order.
func (s *Session) sectionsOf(by string) []extension.Section {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []extension.Section
	for _, b := range conversation.OwnedSections(s.conv.EffectiveSystem(), by) {
		out = append(out, extension.Section{Key: b.Key, Text: b.Text, Source: b.Source})
	}
	return out
}

// disposeSections removes, on owner's behalf, every section owner has in
// the prompt, with why as the reason (the owner is not loaded, or was
// disabled). panto records the removals, as the source says.
func (s *Session) disposeSections(owner, why string) error {
	s.mu.Lock()
	var keys []string
	for _, b := range s.conv.EffectiveSystem() {
		if b.Key != "" && conversation.SectionOwner(b.Key) == owner {
			keys = append(keys, b.Key)
		}
	}
	s.mu.Unlock()
	for _, k := range keys {
		if err := s.setSection(Panto, k, "", "panto: removed because "+why); err != nil {
			return err
		}
	}
	return nil
}

// disposeAbsent removes the sections of every owner not in loaded: the
// extensions that owned them are not loaded in this run (removed,
// disabled, --no-extensions).
func (s *Session) disposeAbsent(loaded []string) error {
	s.mu.Lock()
	owners := map[string]bool{}
	var order []string
	for _, b := range s.conv.EffectiveSystem() {
		if b.Key == "" {
			continue
		}
		if o := conversation.SectionOwner(b.Key); !owners[o] {
			owners[o] = true
			order = append(order, o)
		}
	}
	s.mu.Unlock()
	for _, o := range order {
		if !slices.Contains(loaded, o) && !slices.Contains(s.ownOwners, o) {
			if err := s.disposeSections(o, "extension "+o+" is not loaded"); err != nil {
				return fmt.Errorf("remove the sections of extension %s: %w", o, err)
			}
		}
	}
	return nil
}

// replaceSystem records the extension by's replace m and then, in the
// same write, each live section again (spec amendment 6): a replace
// wipes the prose, not what the extensions still loaded hold. A section
// is live when the prompt holds it right before the replace and its
// owner is loaded and enabled now; each is recorded again with its text
// as it stands, in its order, with its owner as source (and as By, to
// the front ends and the extensions). The derivation is untouched: the
// replace still wipes every block, and the sections come back because
// they are recorded after it. A replace of panto's own (a re-seed) does
// not come here; neither does a bare one.
func (s *Session) replaceSystem(by string, m conversation.Message) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("record message: %w", err)
	}
	var loaded []string
	if s.exts != nil {
		loaded = s.exts.Names()
	}
	s.wmu.Lock() // no other change between the look and the write
	defer s.wmu.Unlock()
	s.mu.Lock()
	prompt := s.conv.EffectiveSystem()
	s.mu.Unlock()
	msgs := []conversation.Message{m}
	owners := []string{by}
	for _, b := range prompt {
		owner := conversation.SectionOwner(b.Key)
		if b.Key == "" {
			continue
		}
		if slices.Contains(s.ownOwners, owner) {
			msgs = append(msgs, conversation.KeyedSystemMessage(b.Key, b.Text).WithSource(b.Source))
			owners = append(owners, Panto)
			continue
		}
		if !slices.Contains(loaded, owner) {
			continue
		}
		msgs = append(msgs, conversation.KeyedSystemMessage(b.Key, b.Text).WithSource(extensionSource(owner)))
		owners = append(owners, owner)
	}
	entries := make([]sessionlog.Entry, len(msgs))
	for i, m := range msgs {
		entries[i] = sessionlog.MessageEntry(m)
	}
	if err := s.writeLocked(entries, func() { s.conv.Append(msgs...) }); err != nil {
		return err
	}
	for i, m := range msgs {
		s.notifyLocked(owners[i], []conversation.Message{m})
	}
	return nil
}

// extensionSource is the source of what an extension records.
func extensionSource(name string) string { return "extension " + name }

// setOwn takes panto's own sections (Prompt.Sections), checking their
// keys: they are recorded by recordOwn.
func (s *Session) setOwn(secs []PromptSection) error {
	for _, sec := range secs {
		if !conversation.ValidKey(sec.Key) || !strings.Contains(sec.Key, ":") {
			return fmt.Errorf("open session: panto's section key %q: want owner:key", sec.Key)
		}
		o := conversation.SectionOwner(sec.Key)
		if slices.Contains(s.loaded, o) {
			s.notice(NoticeWarning, fmt.Sprintf("extension %s has the name of panto's own sections (%s): its sections are refused; rename it", o, sec.Key))
		}
		if !slices.Contains(s.ownOwners, o) {
			s.ownOwners = append(s.ownOwners, o)
		}
	}
	s.own = secs
	return nil
}

// recordOwn records panto's own sections as they are now, each only
// when its text changed (SectionUnchanged), so an unchanged index costs
// nothing and no entry.
func (s *Session) recordOwn() error {
	for _, sec := range s.own {
		if err := s.setSection(Panto, sec.Key, sec.Text, sec.Source); err != nil {
			return fmt.Errorf("record section %s: %w", sec.Key, err)
		}
	}
	return nil
}
