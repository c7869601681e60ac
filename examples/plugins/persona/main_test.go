package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

// newPersona returns the extension with the reply threshold n (0: the
// default).
func newPersona(t *testing.T, n int) *ext {
	t.Helper()
	env := map[string]string{}
	if n > 0 {
		env[thresholdEnv] = strconv.Itoa(n)
	}
	e := newExt(func(k string) string { return env[k] })
	require.NoError(t, e.configErr)
	return e
}

func appended(texts ...string) []sdktest.Edit {
	var out []sdktest.Edit
	for _, s := range texts {
		out = append(out, sdktest.Edit{Mode: conversation.ModeAppend, Text: s})
	}
	return out
}

func TestChoosePersona(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, newPersona(t, 0)).WithSystem("seed")
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	require.Empty(t, h.Edits(), "a fresh session has nothing to restore")

	resp, err := h.Command("persona", "Ada Lovelace")
	require.NoError(t, err)
	require.Equal(t, "persona set to Ada Lovelace", resp.Output)
	require.Equal(t, []string{"seed", "Persona: Ada Lovelace"}, h.Prompt())
	require.Equal(t, []json.RawMessage{json.RawMessage(`{"persona":"Ada Lovelace"}`)}, h.Data())

	// The same persona again records nothing.
	resp, err = h.Command("persona", "Ada Lovelace")
	require.NoError(t, err)
	require.Equal(t, "persona Ada Lovelace already in force", resp.Output)
	require.Len(t, h.Edits(), 1)
	require.Len(t, h.Data(), 1)

	// Another one is appended; the newest is in force.
	_, err = h.Command("persona", "Grace")
	require.NoError(t, err)
	require.Equal(t, appended("Persona: Ada Lovelace", "Persona: Grace"), h.Edits())
	require.Len(t, h.Data(), 2)

	_, err = h.Command("persona", "  ")
	require.EqualError(t, err, "usage: /persona NAME (who the model should answer as)")
	require.Len(t, h.Edits(), 2)
}

func TestChooseReportsHostErrors(t *testing.T) {
	t.Parallel()
	full := errors.New("disk full")
	h := sdktest.New(t, newPersona(t, 0)).WithHostFuncs(sdktest.HostFuncs{
		AppendData: func(context.Context, any) error { return full },
	})
	_, err := h.Command("persona", "Ada")
	require.ErrorIs(t, err, full)
	require.Empty(t, h.Edits(), "nothing applied when the choice could not be recorded")
}

// history is a conversation in which Ada was chosen, then a re-seed
// (replace) discarded her block.
func reseeded() []conversation.Message {
	return []conversation.Message{
		conversation.SystemMessage("seed", conversation.ModeAppend),
		conversation.SystemMessage("Persona: Ada", conversation.ModeAppend),
		conversation.UserText("hi"),
		conversation.AssistantText("hello"),
		conversation.SystemMessage("seed v2", conversation.ModeReplace),
	}
}

func TestResumeRestoresThePersona(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, newPersona(t, 0)).AddMessages(reseeded()...)
	require.Equal(t, []string{"seed v2"}, h.Prompt())
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{Resumed: true, Reseeded: true}))
	require.Equal(t, appended("Persona: Ada"), h.Edits())
	require.Equal(t, []string{"seed v2", "Persona: Ada"}, h.Prompt())
	require.Contains(t, h.Log(), "re-applying the persona a re-seed discarded")
	require.Empty(t, h.Data(), "the choice was recorded when it was made")

	// Now in force: choosing Ada again records nothing.
	_, err := h.Command("persona", "Ada")
	require.NoError(t, err)
	require.Len(t, h.Edits(), 1)
}

func TestResumeKeepsWhatIsInForce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		history []conversation.Message
		ev      sdk.SessionStartEvent
	}{
		{"unchanged resume", reseeded()[:4], sdk.SessionStartEvent{Resumed: true}},
		{"never chose one", []conversation.Message{
			conversation.SystemMessage("seed", conversation.ModeAppend),
			conversation.SystemMessage("seed v2", conversation.ModeReplace),
		}, sdk.SessionStartEvent{Resumed: true, Reseeded: true}},
		// The re-seeded configuration itself holds the block.
		{"configured", append(reseeded(), conversation.SystemMessage("Persona: Ada", conversation.ModeAppend)),
			sdk.SessionStartEvent{Resumed: true, Reseeded: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := sdktest.New(t, newPersona(t, 0)).AddMessages(tc.history...)
			require.NoError(t, h.SessionStart(tc.ev))
			require.Empty(t, h.Edits())
		})
	}
}

func TestLongConversationNote(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, newPersona(t, 3)).WithSystem("seed")
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	for range 2 {
		require.NoError(t, h.Turn("q", "a"))
	}
	require.Empty(t, h.Edits(), "below the threshold")
	require.NoError(t, h.Turn("q", "a"))
	require.Equal(t, appended(longNote), h.Edits(), "at the threshold")
	for range 3 {
		require.NoError(t, h.Turn("q", "a"))
	}
	require.Len(t, h.Edits(), 1, "once")
}

func TestLongConversationNoteOnResume(t *testing.T) {
	t.Parallel()
	turns := func(n int) []conversation.Message {
		msgs := []conversation.Message{conversation.SystemMessage("seed", conversation.ModeAppend)}
		for range n {
			msgs = append(msgs, conversation.UserText("q"), conversation.AssistantText("a"))
		}
		return msgs
	}
	// Two replies recorded: the third, in this run, crosses the threshold.
	h := sdktest.New(t, newPersona(t, 3)).AddMessages(turns(2)...)
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{Resumed: true}))
	require.Empty(t, h.Edits())
	require.NoError(t, h.Turn("q", "a"))
	require.Equal(t, appended(longNote), h.Edits())

	// Already long and noted: nothing more.
	h = sdktest.New(t, newPersona(t, 3)).AddMessages(turns(3)...).
		AddMessages(conversation.SystemMessage(longNote, conversation.ModeAppend))
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{Resumed: true}))
	require.NoError(t, h.Turn("q", "a"))
	require.Empty(t, h.Edits())

	// Long, and a re-seed discarded the note: it is put back at once.
	h = sdktest.New(t, newPersona(t, 3)).AddMessages(turns(3)...).AddMessages(
		conversation.SystemMessage(longNote, conversation.ModeAppend),
		conversation.SystemMessage("seed v2", conversation.ModeReplace),
	)
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{Resumed: true, Reseeded: true}))
	require.Equal(t, appended(longNote), h.Edits())
	require.NoError(t, h.Turn("q", "a"))
	require.Len(t, h.Edits(), 1)
}

func TestThreshold(t *testing.T) {
	t.Parallel()
	require.Equal(t, 20, newPersona(t, 0).threshold)
	require.Equal(t, 7, newPersona(t, 7).threshold)
	for _, bad := range []string{"0", "-1", "lots", "2.5"} {
		e := newExt(func(string) string { return bad })
		require.Equal(t, 20, e.threshold, bad)
		// Reported at session start, which still does its work.
		h := sdktest.New(t, e).AddMessages(reseeded()...)
		err := h.SessionStart(sdk.SessionStartEvent{Resumed: true, Reseeded: true})
		require.EqualError(t, err, thresholdEnv+`="`+bad+`": want a positive whole number of replies; using 20`)
		require.Equal(t, appended("Persona: Ada"), h.Edits())
	}
}
