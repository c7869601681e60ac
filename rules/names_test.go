package rules_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/rules"
)

func TestCheckExtensionName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"guard", "tools", "bench-hook", "a_b-C9", "pantofle", "my-panto", strings.Repeat("x", 64)} {
		require.NoError(t, rules.CheckExtensionName(ok), ok)
	}
	for _, tc := range []struct{ name, want string }{
		{"", "not 1 to 64"},
		{"panto", "panto's own"},
		{"PANTO", "panto's own"},
		{"Panto", "panto's own"},
		{"guard\npanto: all clear", "not 1 to 64"},
		{"a b", "not 1 to 64"},
		{"dot.ted", "not 1 to 64"},
		{"\x1b[2Kguard", "not 1 to 64"},
		{"naïve", "not 1 to 64"},
		{strings.Repeat("x", 65), "not 1 to 64"},
	} {
		require.ErrorContains(t, rules.CheckExtensionName(tc.name), tc.want, "%q", tc.name)
	}
}

// An extension's name is outside input: whatever it is, the check
// answers, and a name it accepts can never break a line or pose as
// panto.
func FuzzCheckExtensionName(f *testing.F) {
	for _, s := range []string{"guard", "panto", "PANTO", "a\nb", "x.y", "", "\u202epanto"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if rules.CheckExtensionName(name) != nil {
			return
		}
		if strings.EqualFold(name, "panto") || len(name) == 0 || len(name) > 64 {
			t.Fatalf("accepted %q", name)
		}
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				t.Fatalf("accepted %q with %q", name, r)
			}
		}
	})
}
