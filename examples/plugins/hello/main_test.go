package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

const greeting = "Greetings from the hello extension."

func TestHello(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ev   sdk.SessionStartEvent
		want []sdktest.Edit
	}{
		{"fresh session", sdk.SessionStartEvent{}, []sdktest.Edit{{Mode: conversation.ModeAppend, Text: greeting}}},
		// The block recorded by an earlier run is still in the prompt.
		{"unchanged resume", sdk.SessionStartEvent{Resumed: true}, nil},
		// The re-seed discarded it.
		{"re-seeded resume", sdk.SessionStartEvent{Resumed: true, Reseeded: true}, []sdktest.Edit{{Mode: conversation.ModeAppend, Text: greeting}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := sdktest.New(t, &ext{}).WithSystem("seed")
			require.NoError(t, h.SessionStart(tc.ev))
			require.Equal(t, tc.want, h.Edits())
		})
	}
}
