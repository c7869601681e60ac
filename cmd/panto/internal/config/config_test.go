package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/stretchr/testify/require"
)

func dirs(t *testing.T) layers.Dirs {
	t.Helper()
	root := t.TempDir()
	d, err := layers.Resolve(func(k string) string {
		return map[string]string{"HOME": root, "PANTO_HOME": filepath.Join(root, "home")}[k]
	}, filepath.Join(root, "proj"))
	require.NoError(t, err)
	return d
}

func put(t *testing.T, d layers.Dirs, l layers.Name, text string) string {
	t.Helper()
	p := Path(d.Layer(l))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestLoadMergesLayers(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	put(t, d, layers.Base, "provider = \"openai\"\nmodel = \"base-model\"\nmax_tokens = 100\n")
	put(t, d, layers.User, "model = \"user-model\"\nrequest_timeout = \"90s\"\ntemperature = 0.5\n")
	put(t, d, layers.Project, "model = \"project-model\"\nretries = 0\n")
	c, err := Load(d)
	require.NoError(t, err)
	require.Equal(t, "openai", c.Provider)
	require.Equal(t, "project-model", c.Model)
	require.Equal(t, 100, c.MaxTokens)
	require.Equal(t, 0, c.Retries)
	require.Equal(t, 90*time.Second, c.RequestTimeout)
	require.Equal(t, 0.5, *c.Temperature)
	require.Equal(t, "2023-06-01", c.AnthropicVersion, "defaults stay where no layer sets them")
	require.Len(t, c.Sources, 3)
}

func TestLoadNoFiles(t *testing.T) {
	t.Parallel()
	c, err := Load(dirs(t))
	require.NoError(t, err)
	require.Equal(t, Defaults(), c)
}

func TestParseErrorsNameFileLineColumn(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"model = \"x\"\nmodle = \"y\"\n", `config c.toml line 2 column 1: unknown key "modle"`},
		{"max_tokens = \"lots\"\n", "config c.toml line 1 column"},
		{"request_timeout = \"soon\"\n", `want a duration`},
		{"provider = \"gemini\"\n", `provider "gemini": want anthropic, openai or echo`},
		{"log_level = \"loud\"\n", `log level "loud"`},
		{"model = \n", "config c.toml line 1 column"},
		{"retries = 99\n", "retries 99"},
	}
	for _, tt := range tests {
		_, err := Parse("c.toml", []byte(tt.in))
		require.ErrorContains(t, err, tt.want, "input %q", tt.in)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("model = \"x\"\n")
	f.Add("[a]\nb = 1\n")
	f.Add("request_timeout = \"1s\"\ntemperature = 1.0\n")
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = Parse("fuzz.toml", []byte(in)) // must not panic
	})
}

// A value of the wrong type names the key as written and the type it
// wants, never Go's names (config.file.Retries, int).
func TestParseWrongTypeSaysKeyAndType(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"retries = \"2\"\n", `config c.toml line 1 column 11: retries wants an integer, not a string (see docs/config.md)`},
		{"model = \"x\"\n\nmax_tokens = 1.5\n", `config c.toml line 3 column 14: max_tokens wants an integer, not a float (see docs/config.md)`},
		{"stream = 1\n", `config c.toml line 1 column 10: stream wants true or false, not an integer (see docs/config.md)`},
		{"temperature = \"hot\"\n", `config c.toml line 1 column 15: temperature wants a number, not a string (see docs/config.md)`},
		{"model = 3\n", `config c.toml line 1 column 9: model wants a string, not an integer (see docs/config.md)`},
		{"disabled_extensions = \"x\"\n", `config c.toml line 1 column 23: disabled_extensions wants an array of strings, not a string (see docs/config.md)`},
		{"disabled_extensions = [\"a\", 1]\n", `config c.toml line 1 column 29: disabled_extensions wants an array of strings, not an array holding an integer (see docs/config.md)`},
		{"[retries]\na = 1\n", `config c.toml line 1 column 2: retries wants an integer, not a table (see docs/config.md)`},
		// go-toml gives no position here; panto finds the key.
		{"model = \"x\"\n  request_timeout =  5\n", `config c.toml line 2 column 22: request_timeout wants a duration string such as "90s" or "10m", not an integer (see docs/config.md)`},
		{"hook_timeout = true\n", `config c.toml line 1 column 16: hook_timeout wants a duration string such as "90s" or "10m", not a boolean (see docs/config.md)`},
		{"tool_timeout = \"soon\"\n", `config c.toml line 1 column 16: tool_timeout: want a duration such as "90s" or "10m": time: invalid duration "soon"`},
		{"tool_timeout = \"-1s\"\n", `config c.toml line 1 column 16: tool_timeout: want a positive duration`},
	}
	for _, tt := range tests {
		_, err := Parse("c.toml", []byte(tt.in))
		require.EqualError(t, err, tt.want, "input %q", tt.in)
	}
	f, err := Parse("c.toml", []byte("request_timeout = \"90s\"\ntemperature = 1\n"))
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, f.RequestTimeout.d)
	require.Equal(t, 1.0, *f.Temperature, "an integer is a number")
}
