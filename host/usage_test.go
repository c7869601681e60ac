package host

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// usageModel answers with one reply that reports its usage, as the model
// named.
type usageModel struct {
	model string
	usage serializers.Usage
}

func (m usageModel) Send(context.Context, serializers.Request, serializers.DeltaFunc) (serializers.Reply, error) {
	return serializers.Reply{Message: conversation.AssistantText("ok"), StopReason: serializers.StopEndTurn, Model: m.model, Usage: m.usage}, nil
}

// A reply is recorded with its usage; the Usage event carries the cost
// Config.Cost gives, priced as the model that answered, or else as the
// one asked for, and none when neither has a price.
func TestUsageRecordedAndPriced(t *testing.T) {
	t.Parallel()
	u := serializers.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 900, CacheWriteTokens: 5, ReasoningTokens: 3}
	cost := func(provider, model string, u Usage) (float64, bool) {
		if provider != "script" || (model != "m1" && model != "snapshot-1") {
			return 0, false
		}
		return float64(u.InputTokens+u.OutputTokens) / 1e6, true
	}
	for _, tc := range []struct {
		answered, asked string
		known           bool
	}{
		{"snapshot-1", "other", true}, // the model that answered
		{"unpriced", "m1", true},      // else the one asked for
		{"", "m1", true},
		{"unpriced", "other", false},
	} {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		s, err := Open(context.Background(), Config{
			Log: Log{Path: path}, CWD: "/p", Provider: usageModel{tc.answered, u}, ProviderName: "script", Model: Model{Name: tc.asked},
			Prompt: func(rules.Vars) (Prompt, error) { return Prompt{Blocks: []PromptBlock{{Text: "seed"}}}, nil },
			Cost:   cost,
		})
		require.NoError(t, err)
		var used *Usage
		for _, ev := range turn(context.Background(), s, "go") {
			if ev, ok := ev.(Usage); ok {
				used = &ev
			}
		}
		require.NoError(t, s.Close(context.Background()))
		require.NotNil(t, used)
		require.Equal(t, tc.known, used.CostKnown, tc)
		if tc.known {
			require.InDelta(t, 120/1e6, used.CostUSD, 1e-15)
		} else {
			require.Zero(t, used.CostUSD)
		}

		log, err := sessionlog.Read(path)
		require.NoError(t, err)
		leaf := log.Leaf()
		require.Equal(t, conversation.RoleAssistant, leaf.Message.Role)
		require.Equal(t, &sessionlog.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 900, CacheWriteTokens: 5, ReasoningTokens: 3}, leaf.Usage)
		for _, e := range log.Entries[:len(log.Entries)-1] {
			require.Nil(t, e.Usage, "only the reply has usage")
		}
	}
}
