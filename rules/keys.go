package rules

import "slices"

// providerKeys are the environment variables that hold provider
// credentials.
var providerKeys = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"}

// ProviderKeys returns the environment variables that hold provider
// credentials, a new slice each call. panto reads them itself: they never
// reach an extension unless config's extension_api_keys names one, and
// they are never rendered as {{env.NAME}}.
func ProviderKeys() []string { return slices.Clone(providerKeys) }

// IsProviderKey reports whether name is one of ProviderKeys.
func IsProviderKey(name string) bool { return slices.Contains(providerKeys, name) }

// Env is {{env.NAME}}'s lookup over getenv: the environment, less the
// provider keys, which are never rendered (the lookup says they are not
// set).
func Env(getenv func(string) string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if IsProviderKey(name) {
			return "", false
		}
		return getenv(name), true
	}
}
