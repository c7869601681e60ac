package rules_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/rules"
)

func TestProviderKeysAreNeverRendered(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOME": "/h", "ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk", "ANTHROPIC_AUTH_TOKEN": "tok"}
	vars := rules.Map{Env: rules.Env(func(k string) string { return env[k] })}
	out, err := rules.Render("{{env.HOME}}", "test", vars)
	require.NoError(t, err)
	require.Equal(t, "/h", out)
	for _, k := range rules.ProviderKeys() {
		require.True(t, rules.IsProviderKey(k))
		_, err := rules.Render("{{env."+k+"}}", "test", vars)
		require.Error(t, err, k)
		require.NotContains(t, err.Error(), env[k], k)
	}
	require.False(t, rules.IsProviderKey("HOME"))
	keys := rules.ProviderKeys()
	keys[0] = "changed"
	require.True(t, rules.IsProviderKey("ANTHROPIC_API_KEY"), "ProviderKeys hands out a copy")
}

func TestNoticeLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"info": "info", "warning": "warning", "error": "error",
		"": "info", "shouting": "info", "WARNING": "info", "debug": "info",
	} {
		require.Equal(t, want, rules.NoticeLevel(in), in)
	}
}
