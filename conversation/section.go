package conversation

import (
	"fmt"
	"strings"
)

// Sections are keyed system blocks owned by one extension each: the key
// as recorded is the owner's name, a colon, and the key the extension
// chose ("env:environment"), so two extensions never clobber each
// other's sections. EffectiveSystem says what a keyed block does (set in
// place, added at the end, removed by an empty text); the functions here
// are the rest of the rule, written once for panto's host and the SDK's
// test harness: which keys are valid, when setting a section records
// nothing, and which sections an extension owns.

// SectionKey returns the recorded key of owner's section key, or an
// error when key is empty or the whole is not a valid key (ValidKey).
func SectionKey(owner, key string) (string, error) {
	full := owner + ":" + key
	if key == "" || !ValidKey(full) {
		return "", fmt.Errorf("invalid section key %q: want 1 to %d letters, digits and _ - . / : in all, with the extension's name", key, MaxKeyLen-len(owner)-1)
	}
	return full, nil
}

// SectionOwner returns the owner of the recorded section key full: what
// comes before its first colon.
func SectionOwner(full string) string {
	o, _, _ := strings.Cut(full, ":")
	return o
}

// SectionUnchanged reports whether setting the section full to text
// would leave the effective prompt blocks as they are: the section holds
// exactly text, or there is none and text is empty (removing what is not
// there). Nothing is recorded then, so a provider's prompt cache
// survives an unchanged section.
func SectionUnchanged(blocks []SystemText, full, text string) bool {
	for _, b := range blocks {
		if b.Key == full {
			return b.Text == text
		}
	}
	return text == ""
}

// OwnedSections returns owner's sections among blocks, in prompt order,
// each with its key as the owner gave it (without "owner:").
func OwnedSections(blocks []SystemText, owner string) []SystemText {
	var out []SystemText
	prefix := owner + ":"
	for _, b := range blocks {
		if k, ok := strings.CutPrefix(b.Key, prefix); ok {
			b.Key = k
			out = append(out, b)
		}
	}
	return out
}
