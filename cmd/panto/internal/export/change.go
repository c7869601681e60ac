package export

import (
	"fmt"

	"github.com/panto-dev/panto/cmd/panto/internal/promptlog"
	"github.com/panto-dev/panto/conversation"
)

// This file says what each block of a system entry did to the prompt.

// changeKind says what one block of a system entry did.
type changeKind int

const (
	appended      changeKind = iota // an unkeyed append
	replaced                        // an unkeyed replace
	replacedKeyed                   // a keyed replace: the prompt is now that section
	setSection                      // a keyed append with a new key
	updated                         // a keyed append that set a section in place
	removed                         // a keyed append with an empty text that removed a section
	removedNone                     // the same for a key that was not in the prompt: no change
)

// change is one block of a system entry, as an event.
type change struct {
	kind   changeKind
	key    string
	source string
	text   string
}

// verb is what the change did, after its source: "set section", ….
func (c change) verb() string {
	switch c.kind {
	case replaced:
		return "replaced the system prompt"
	case replacedKeyed:
		return "replaced the system prompt with section"
	case setSection:
		return "set section"
	case updated:
		return "updated section"
	case removed:
		return "removed section"
	case removedNone:
		return "removed section"
	}
	if c.text == "" {
		return "appended an empty block"
	}
	return "appended a block"
}

// note is what follows the key, if anything.
func (c change) note() string {
	switch c.kind {
	case updated:
		return "in place"
	case removedNone:
		return "(it was not in the prompt: no change)"
	}
	return ""
}

// lines says how many lines of the prompt the system entry at i added
// and removed ("+1 −1 lines"), and whether it changed text that was
// there — removed lines, or a section updated in place — so that its
// diff says more than its text.
func (p *plan) lines(i int) (string, bool) {
	added, removed := promptlog.Counts(p.diffs[i])
	changed := removed > 0
	for _, ch := range p.changes[i] {
		changed = changed || ch.kind == updated && added > 0
	}
	return fmt.Sprintf("+%d −%d lines", added, removed), changed
}

// hasKey reports whether the change's line names its key.
func (c change) hasKey() bool { return c.kind >= replacedKeyed }

// sourceText is the change's source for an event line.
func (c change) sourceText() string {
	if c.source == "" {
		return "(source not recorded)"
	}
	return c.source
}

// changesOf describes what each block of the system message m does to the
// prompt before it.
func changesOf(before []conversation.SystemText, m *conversation.Message) []change {
	keys := make(map[string]bool, len(before))
	for _, b := range before {
		if b.Key != "" {
			keys[b.Key] = true
		}
	}
	var out []change
	for _, b := range m.Content {
		if b.Type != conversation.TypeSystem {
			continue
		}
		c := change{key: b.Key, source: b.Source, text: b.Text}
		switch {
		case b.Mode == conversation.ModeReplace:
			clear(keys)
			c.kind = replaced
			if b.Key != "" {
				c.kind = replacedKeyed
				if b.Text != "" {
					keys[b.Key] = true
				}
			}
		case b.Key == "":
			c.kind = appended
		case b.Text == "" && keys[b.Key]:
			c.kind = removed
			delete(keys, b.Key)
		case b.Text == "":
			c.kind = removedNone
		case keys[b.Key]:
			c.kind = updated
		default:
			c.kind = setSection
			keys[b.Key] = true
		}
		out = append(out, c)
	}
	return out
}
