package rules_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/rules"
)

func TestCheckTool(t *testing.T) {
	t.Parallel()
	ok := []struct {
		name   string
		params string
	}{
		{"read", ""},
		{"a_b-C9", `{"type":"object"}`},
		{strings.Repeat("x", 64), `{"type":"object","properties":{"p":{"type":"string"}}}`},
	}
	for _, tt := range ok {
		require.NoError(t, rules.CheckTool(tt.name, json.RawMessage(tt.params)), tt.name)
	}
	bad := []struct{ name, params, want string }{
		{"", "", "the name must be"},
		{"bad name", "", "the name must be"},
		{strings.Repeat("x", 65), "", "the name must be"},
		{"t", `{"type":`, "not valid JSON"},
		{"t", `[{"type":"object"}]`, "not a JSON object schema"},
		{"t", `null`, "not a JSON object schema"},
		{"t", `{"type":"string"}`, `"type": "string"`},
		{"t", `{"properties":{}}`, `no "type"`},
	}
	for _, tt := range bad {
		require.ErrorContains(t, rules.CheckTool(tt.name, json.RawMessage(tt.params)), tt.want, "%q %s", tt.name, tt.params)
	}
}

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
		if got := rules.ValidToolName(tc.name, tc.max); got != tc.want {
			t.Errorf("ValidToolName(%q, %d) = %v, want %v", tc.name, tc.max, got, tc.want)
		}
	}
}
