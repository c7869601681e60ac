package extension

import (
	"slices"
	"strings"
	"testing"
)

// What an extension highlights is outside input: whatever it sends, the
// front end gets at most maxHighlights distinct, non-empty parts, each of
// them in the question's text.
func FuzzHighlights(f *testing.F) {
	f.Add("rm -rf", "", "sudo rm -rf ~", "Run this command?")
	f.Add("\x1b[2K", "x", "git status\x1b[2K", "")
	f.Fuzz(func(t *testing.T, a, b, message, title string) {
		parts := []string{a, b, a}
		for i := range 20 {
			parts = append(parts, message[:min(i, len(message))])
		}
		got := highlights(parts, title, message)
		if len(got) > maxHighlights {
			t.Fatalf("%d parts", len(got))
		}
		for i, p := range got {
			if p == "" || slices.Contains(got[:i], p) || !(strings.Contains(title, p) || strings.Contains(message, p)) {
				t.Fatalf("part %q of %q", p, got)
			}
		}
	})
}
