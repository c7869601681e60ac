package serializers

import "testing"

func TestValidToolName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		max  int
		want bool
	}{
		{"read", 64, true},
		{"web_search-2", 64, true},
		{"", 64, false},
		{"bad name", 64, false},
		{"dot.ted", 64, false},
		{"naïve", 64, false},
		{"x", 1, true},
		{"xy", 1, false},
	} {
		if got := ValidToolName(tc.name, tc.max); got != tc.want {
			t.Errorf("ValidToolName(%q, %d) = %v, want %v", tc.name, tc.max, got, tc.want)
		}
	}
}
