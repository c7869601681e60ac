package provider

import "github.com/panto-dev/panto/serializers/anthropic"

// What the providers accept of the model settings, for a front end that
// checks its configuration before anything starts: the limits come from
// the wire formats, which stay below host.

// AnthropicMinThinkingBudget is the smallest thinking budget (in tokens)
// Anthropic's Messages API accepts; 0 turns thinking off.
const AnthropicMinThinkingBudget = anthropic.MinThinkingBudget

// AnthropicTakesTemperature reports whether requests under the
// anthropic-version header value version may carry a temperature
// (2026-10-21 takes none).
func AnthropicTakesTemperature(version string) bool {
	return version != anthropic.Version20261021
}
