package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/serializers"
)

// host's stop reasons are the wire formats' own, under host's names: a
// front end reads them from host, never from serializers.
func TestStopReasonsAreTheDecodersOwn(t *testing.T) {
	t.Parallel()
	for host, wire := range map[StopReason]serializers.StopReason{
		StopEndTurn: serializers.StopEndTurn, StopToolUse: serializers.StopToolUse, StopMaxTokens: serializers.StopMaxTokens,
		StopSequence: serializers.StopSequence, StopRefusal: serializers.StopRefusal, StopPauseTurn: serializers.StopPauseTurn,
		StopContextLimit: serializers.StopContextLimit, StopOther: serializers.StopOther,
	} {
		require.Equal(t, string(wire), string(host))
	}
}

// The model settings reach the request as given.
func TestModelRequest(t *testing.T) {
	t.Parallel()
	temp := 0.5
	m := Model{Name: "m", MaxTokens: 100, ThinkingBudget: 2048, Temperature: &temp, Stream: true}
	require.Equal(t, serializers.Request{Model: "m", MaxTokens: 100, ThinkingBudget: 2048, Temperature: &temp, Stream: true}, m.request("sid"),
		"without PromptCache no caching is asked for, key or not")
	m.PromptCache = true
	require.Equal(t, serializers.Request{Model: "m", MaxTokens: 100, ThinkingBudget: 2048, Temperature: &temp, Stream: true,
		Cache: serializers.Cache{Mark: true, Key: "sid"}}, m.request("sid"))
}
