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
