package main

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sdk/sdktest"
)

func TestAppendThenReplace(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &ext{}).WithSystem("seed")
	resp, err := h.Command("system-append", "  Answer in French.  ")
	require.NoError(t, err)
	require.Equal(t, "appended", resp.Output)
	require.Equal(t, []string{"seed", "Answer in French."}, h.Prompt())

	resp, err = h.Command("system-replace", "You are a pirate.")
	require.NoError(t, err)
	require.Equal(t, "replaced", resp.Output)
	require.Equal(t, []string{"You are a pirate."}, h.Prompt())
	require.Equal(t, []sdktest.Edit{
		{Mode: conversation.ModeAppend, Text: "Answer in French."},
		{Mode: conversation.ModeReplace, Text: "You are a pirate."},
	}, h.Edits())
}

// A replace keeps the live sections (another extension's guidance);
// the bare one does not.
func TestReplaceKeepsSectionsUnlessBare(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &ext{}).WithSystem("seed").AddMessages(
		conversation.KeyedSystemMessage("tools:guidance", "Use bash.").WithSource("extension tools"))
	_, err := h.Command("system-replace", "You are a pirate.")
	require.NoError(t, err)
	require.Equal(t, []string{"You are a pirate.", "Use bash."}, h.Prompt())
	resp, err := h.Command("system-replace-bare", "Answer yes or no.")
	require.NoError(t, err)
	require.Equal(t, "replaced, bare", resp.Output)
	require.Equal(t, []string{"Answer yes or no."}, h.Prompt())
	require.Equal(t, []sdktest.Edit{
		{Mode: conversation.ModeReplace, Text: "You are a pirate."},
		{Mode: conversation.ModeReplace, Text: "Answer yes or no.", Bare: true},
	}, h.Edits())
}

func TestEmptyTextIsAUsageError(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &ext{})
	for _, name := range []string{"system-append", "system-replace", "system-replace-bare"} {
		_, err := h.Command(name, " \t")
		require.EqualError(t, err, "usage: /"+name+" TEXT (the text of the system block)")
	}
	require.Empty(t, h.Edits())
}

func TestHostErrorIsReturned(t *testing.T) {
	t.Parallel()
	failed := errors.New("panto host: add system message: extension disabled")
	h := sdktest.New(t, &ext{}).WithHostFuncs(sdktest.HostFuncs{
		AddSystemMessage: func(context.Context, string) error { return failed },
	})
	resp, err := h.Command("system-append", "x")
	require.ErrorIs(t, err, failed)
	require.Empty(t, resp.Output, "no success reported")
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &ext{})
	require.Equal(t, "sysprompt", h.Info().Name)
	var usage []string
	for _, c := range h.Commands() {
		usage = append(usage, "/"+c.Name+" "+c.Usage)
	}
	require.Equal(t, []string{"/system-append TEXT", "/system-replace TEXT", "/system-replace-bare TEXT"}, usage)
}
