package rules_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sdk"
)

var vars = rules.Map{
	Values: map[string]string{"cwd": "/p", "model": "claude", "empty": "", "ext.var": "x"},
	Env: func(k string) (string, bool) {
		v, ok := map[string]string{"HOME": "/home/ann", "BLANK": ""}[k]
		return v, ok
	},
}

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"no variables", "no variables"},
		{"in {{cwd}} with {{ model }}", "in /p with claude"},
		{"home {{env.HOME}}", "home /home/ann"},
		{"dotted {{ext.var}}", "dotted x"},
		{"a lone {{ stays", "a lone {{ stays"},
		{"lone {{ on this line\nthen }} later", "lone {{ on this line\nthen }} later"},
		{`escaped \{{cwd}}`, "escaped {{cwd}}"},
		{"shell ${HOME} and $PATH untouched", "shell ${HOME} and $PATH untouched"},
		{"}} alone", "}} alone"},
	}
	for _, tt := range tests {
		got, err := rules.Render(tt.in, "f.md", vars)
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, got)
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"line one\n{{nope}}", "f.md line 2: unknown variable nope"},
		{"{{empty}}", "f.md line 1: no value for variable empty"},
		{"a\nb\n{{env.BLANK}}", "f.md line 3: no value for variable env.BLANK"},
		{"{{env.UNSET}}", "f.md line 1: unknown variable env.UNSET"},
		{"{{ }}", "f.md line 1: malformed variable {{ }}"},
		{"{{two words}}", "f.md line 1: malformed variable {{two words}}"},
		{"{{1x}}", "f.md line 1: malformed variable {{1x}}"},
		{"{{a..b}}", "f.md line 1: malformed variable {{a..b}}"},
	}
	for _, tt := range tests {
		_, err := rules.Render(tt.in, "f.md", vars)
		require.ErrorIs(t, err, rules.ErrRender, tt.in)
		require.EqualError(t, err, tt.want)
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{"{{cwd}}", "{{ model }} {{", `\{{x}}`, "a\n{{nope}}", "{{}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := rules.Render(in, "fuzz", vars)
		if err != nil {
			var re *rules.Error
			require.ErrorAs(t, err, &re)
			require.GreaterOrEqual(t, re.Line, 1)
			require.LessOrEqual(t, re.Line, strings.Count(in, "\n")+1)
			return
		}
		if !strings.Contains(in, "{{") {
			require.Equal(t, in, out, "text without {{ is unchanged")
		}
	})
}

// sdk.Literal is the inverse of rendering: whatever an extension passes
// through it is recorded exactly, "{{" and "\{{" included.
func FuzzLiteral(f *testing.F) {
	for _, s := range []string{"{{ .Name }}", `\{{x}}`, "{{{cwd}}}", `\\{{`, "{{nope}}\n{{", "plain", "{{cookiecutter.slug}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		out, err := rules.Render(sdk.Literal(data), "fuzz", vars)
		require.NoError(t, err)
		require.Equal(t, data, out)
	})
}
