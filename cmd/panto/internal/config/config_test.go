package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
	"github.com/panto-dev/panto/internal/testio"
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

// load loads d's config with its project file, if any, trusted as it is.
func load(t *testing.T, d layers.Dirs) (Config, error) {
	t.Helper()
	ts, err := trust.Load(t.TempDir(), trust.ProjectsFile)
	require.NoError(t, err)
	p := Path(d.Layer(layers.Project))
	if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		ts.Trust(p, trust.Sum(data))
	}
	return Load(d, Options{Trust: ts})
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
	c, err := load(t, d)
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
	c, err := load(t, dirs(t))
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
		{"log_level = \"loud\"\n", `config c.toml line 1 column 13: log_level "loud": want trace, debug, info, warn, error or off (see docs/config.md)`},
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
	f.Add("compaction_threshold = nan\ntemperature = -inf\n")
	f.Add("extension_api_keys = [\"tools\", \"\"]\n'thinking_budget' = 5\n")
	f.Add("[x]\nmax_tokens = -1\n")
	f.Fuzz(func(t *testing.T, in string) {
		fc, err := Parse("fuzz.toml", []byte(in)) // must not panic
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// What Parse accepts is in range.
		if v := fc.CompThreshold; v != nil && !(*v > 0 && *v <= 1) {
			t.Fatalf("compaction_threshold %v accepted", *v)
		}
		if v := fc.Temperature; v != nil && !(*v >= 0 && *v <= 2) {
			t.Fatalf("temperature %v accepted", *v)
		}
		c := Defaults()
		fc.mergeInto(&c)
		_ = c.Validate() // must not panic
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

// Values out of range, NaN and infinities are errors at load that name
// the file, line and column, the key and what it allows.
func TestParseChecksRanges(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"compaction_threshold = nan\n", "line 1 column 24: compaction_threshold nan: want a share of the window above 0 and at most 1"},
		{"compaction_threshold = inf\n", "line 1 column 24: compaction_threshold inf: want a share of the window above 0 and at most 1"},
		{"compaction_threshold = 0\n", "line 1 column 24: compaction_threshold 0: want a share of the window above 0 and at most 1"},
		{"temperature = nan\n", "line 1 column 15: temperature nan: want a number from 0 to 2"},
		{"temperature = -inf\n", "line 1 column 15: temperature -inf: want a number from 0 to 2"},
		{"temperature = 2.5\n", "line 1 column 15: temperature 2.5: want a number from 0 to 2"},
		{"temperature = -0.1\n", "line 1 column 15: temperature -0.1: want a number from 0 to 2"},
		{"max_tokens = 0\n", "line 1 column 14: max_tokens 0: want a positive number"},
		{"thinking_budget = -1\n", "line 1 column 19: thinking_budget -1: want 0 (off) or at least 1024"},
		{"retries = -1\n", "line 1 column 11: retries -1: want 0 to 10"},
		{"max_steps = -1\n", "line 1 column 13: max_steps -1: want 0 (no bound) or more"},
		{"context_window = -1\n", "line 1 column 18: context_window -1: want 0 (the provider's default) or more"},
		{"compaction_keep_tokens = -1\n", "line 1 column 26: compaction_keep_tokens -1: want 0 or more"},
		{"provider = \"gemini\"\n", `line 1 column 12: provider "gemini": want anthropic, openai or echo`},
		{"extension_api_keys = [\"bin/tools\"]\n", `line 1 column 22: extension_api_keys "bin/tools": want an extension's file name, such as "tools", not a path`},
		{"extension_api_keys = [\"\"]\n", `line 1 column 22: extension_api_keys "": want an extension's file name, such as "tools", not a path`},
	}
	for _, tt := range tests {
		_, err := Parse("c.toml", []byte(tt.in))
		require.EqualError(t, err, "config c.toml "+tt.want+" (see docs/config.md)", "input %q", tt.in)
	}
	for _, ok := range []string{"temperature = 0\n", "temperature = 2\n", "compaction_threshold = 1\n", "thinking_budget = 0\n", "thinking_budget = 500\n", "max_steps = 0\n"} {
		_, err := Parse("c.toml", []byte(ok))
		require.NoError(t, err, ok)
	}
}

// The provider's own limits need the merged config, flags applied.
func TestValidateChecksTheProvidersLimits(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	user := put(t, d, layers.User, "provider = \"openai\"\nthinking_budget = 500\ntemperature = 1.5\n")
	c, err := load(t, d)
	require.NoError(t, err)
	require.NoError(t, c.Validate(), "openai takes any budget and temperatures up to 2")

	c.Provider = "anthropic" // as --provider anthropic does
	require.EqualError(t, c.Validate(), "config "+user+" line 2 column 19: thinking_budget 500: anthropic wants 0 (off) or at least 1024 (see docs/config.md)")
	c.ThinkingBudget = 8192
	require.EqualError(t, c.Validate(), "config "+user+" line 2 column 19: thinking_budget 8192: anthropic wants it below max_tokens, 8192 (the default) (see docs/config.md)")
	c.ThinkingBudget = 2048
	require.EqualError(t, c.Validate(), "config "+user+" line 3 column 15: temperature 1.5: anthropic wants a number from 0 to 1 (see docs/config.md)")

	user = put(t, d, layers.User, "provider = \"anthropic\"\ntemperature = 1.5\n")
	project := put(t, d, layers.Project, "max_tokens = 2000\nthinking_budget = 3000\ntemperature = 0.5\n")
	c, err = load(t, d)
	require.NoError(t, err)
	require.EqualError(t, c.Validate(), "config "+project+" line 2 column 19: thinking_budget 3000: anthropic wants it below max_tokens, 2000 (from config "+project+" line 1 column 14) (see docs/config.md)")
	put(t, d, layers.Project, "anthropic_version = \"2026-10-21\"\nthinking_budget = 0\n")
	c, err = load(t, d)
	require.NoError(t, err)
	require.EqualError(t, c.Validate(), "config "+user+" line 2 column 15: temperature 1.5: anthropic_version 2026-10-21 takes no temperature (from config "+project+" line 1 column 21): remove one of them (see docs/config.md)")

	require.NoError(t, Defaults().Validate())
	c = Defaults()
	c.ThinkingBudget = 1024
	require.NoError(t, c.Validate())
}

func TestExtensionAPIKeysMerge(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	put(t, d, layers.Base, "extension_api_keys = [\"tools\"]\n")
	put(t, d, layers.User, "extension_api_keys = [\"review-bot\"]\n")
	put(t, d, layers.Project, "extension_api_keys = [\"evil\"]\n")
	c, err := load(t, d)
	require.NoError(t, err)
	require.Equal(t, []string{"tools", "review-bot"}, c.ExtensionAPIKeys, "a project's, trusted or not, never counts")
	c, err = load(t, dirs(t))
	require.NoError(t, err)
	require.Empty(t, c.ExtensionAPIKeys, "by default no extension gets a key")
}

// config.toml must be a regular file of at most 1 MiB; a FIFO no longer
// blocks panto.
func TestLoadRefusesSpecialAndHugeFiles(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	p := Path(d.Layer(layers.User))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	testio.Mkfifo(t, p, 0o644)
	_, err := load(t, d)
	require.EqualError(t, err, "read config "+p+": a named pipe (FIFO), want a regular file")

	// A project's, never trusted since it cannot be read, is ignored.
	d = dirs(t)
	p = Path(d.Layer(layers.Project))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	testio.Mkfifo(t, p, 0o644)
	c, err := load(t, d)
	require.NoError(t, err)
	require.EqualError(t, c.Project.Err, "read config "+p+": a named pipe (FIFO), want a regular file")

	d = dirs(t)
	p = put(t, d, layers.User, "# "+strings.Repeat("x", layers.MaxFileSize)+"\n")
	_, err = load(t, d)
	require.EqualError(t, err, "read config "+p+": larger than 1 MiB, the limit for this file")
}

// theme and [prices."MODEL"]: the UI's keys, checked as strictly as the
// others; prices merge per model across layers.
func TestThemeAndPrices(t *testing.T) {
	t.Parallel()
	d := dirs(t)
	put(t, d, layers.User, "theme = \"light\"\n[prices.\"claude-sonnet-4-5\"]\ninput = 3\noutput = 15\ncache_read = 0.3\n[prices.\"gpt-4.1\"]\ninput = 2\noutput = 8\n")
	put(t, d, layers.Project, "[prices.\"gpt-4.1\"]\ninput = 1\noutput = 4\n")
	c, err := load(t, d)
	require.NoError(t, err)
	require.Equal(t, "light", c.Theme)
	require.Equal(t, Price{Input: 3, Output: 15, CacheRead: 0.3}, c.Prices["claude-sonnet-4-5"])
	require.Equal(t, Price{Input: 1, Output: 4}, c.Prices["gpt-4.1"], "the project's wins")
	require.Equal(t, "auto", Defaults().Theme)
	require.Equal(t, ScreenNormal, Defaults().Screen, "the normal screen: the conversation stays in the scrollback")
	require.False(t, Defaults().MouseTaken(), "the normal screen leaves the mouse to the terminal")
	put(t, d, layers.Base, "screen = \"alt\"\n")
	c, err = load(t, d)
	require.NoError(t, err)
	require.True(t, c.MouseTaken(), "the alternate screen takes it, to scroll")
	put(t, d, layers.Base, "screen = \"alt\"\nmouse = false\n")
	c, err = load(t, d)
	require.NoError(t, err)
	require.Equal(t, ScreenAlt, c.Screen)
	require.False(t, c.MouseTaken())
	put(t, d, layers.Base, "mouse = true\n")
	c, err = load(t, d)
	require.NoError(t, err)
	require.True(t, c.MouseTaken(), "asked for on the normal screen: a click folds a block")

	for _, tt := range []struct{ in, want string }{
		{"theme = \"blue\"\n", `config c.toml line 1 column 9: theme "blue": want "auto", "light" or "dark" (see docs/config.md)`},
		{"screen = \"full\"\n", `config c.toml line 1 column 10: screen "full": want "normal" or "alt" (see docs/config.md)`},
		{"[prices.m]\ninput = -1\n", `config c.toml: prices "m".input = -1: want dollars per million tokens, 0 or more (see docs/config.md)`},
		{"[prices.m]\noutput = nan\n", `config c.toml: prices "m".output = nan: want dollars per million tokens, 0 or more (see docs/config.md)`},
		{"prices = 3\n", `config c.toml line 1 column 10: prices wants a table of models, such as [prices."claude-sonnet-4-5"], not an integer (see docs/config.md)`},
	} {
		_, err := Parse("c.toml", []byte(tt.in))
		require.EqualError(t, err, tt.want, "input %q", tt.in)
	}
	_, err = Parse("c.toml", []byte("[prices.m]\ninputs = 1\n"))
	require.ErrorContains(t, err, `unknown key "prices.m.inputs"`)
}

// prompt_cache is on unless a layer turns it off; prompt_cache_key is
// unset (the provider's default) unless a layer sets it.
func TestPromptCacheKeys(t *testing.T) {
	t.Parallel()
	c, err := load(t, dirs(t))
	require.NoError(t, err)
	require.True(t, c.PromptCache)
	require.Nil(t, c.PromptCacheKey)

	d := dirs(t)
	put(t, d, layers.User, "prompt_cache = false\nprompt_cache_key = true\n")
	c, err = load(t, d)
	require.NoError(t, err)
	require.False(t, c.PromptCache)
	require.NotNil(t, c.PromptCacheKey)
	require.True(t, *c.PromptCacheKey)

	put(t, d, layers.Project, "prompt_cache_key = false\n")
	c, err = load(t, d)
	require.NoError(t, err)
	require.False(t, *c.PromptCacheKey, "a trusted project may turn the key off")

	_, err = Parse("c.toml", []byte("prompt_cache = \"yes\"\n"))
	require.ErrorContains(t, err, "prompt_cache wants true or false")
}
