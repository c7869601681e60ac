package conversation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSectionKey(t *testing.T) {
	t.Parallel()
	full, err := SectionKey("env", "environment")
	require.NoError(t, err)
	require.Equal(t, "env:environment", full)
	require.Equal(t, "env", SectionOwner(full))
	require.Equal(t, "context", SectionOwner("context:AGENTS.md:sub"))
	for _, bad := range []string{"", "a b", "new\nline", strings.Repeat("k", MaxKeyLen-len("env:")+1)} {
		_, err := SectionKey("env", bad)
		require.ErrorContains(t, err, "invalid section key", bad)
	}
	_, err = SectionKey("env", strings.Repeat("k", MaxKeyLen-len("env:")))
	require.NoError(t, err, "the longest key that fits with the owner's name")
}

func TestSectionUnchangedAndOwned(t *testing.T) {
	t.Parallel()
	msgs := []Message{
		SystemMessage("seed", ModeAppend),
		KeyedSystemMessage("a:x", "X").WithSource("extension a"),
		KeyedSystemMessage("b:y", "Y"),
		KeyedSystemMessage("a:z", "Z"),
	}
	blocks := EffectiveSystem(msgs)
	require.True(t, SectionUnchanged(blocks, "a:x", "X"), "the same text")
	require.False(t, SectionUnchanged(blocks, "a:x", "X2"), "a new text")
	require.False(t, SectionUnchanged(blocks, "a:x", ""), "a removal")
	require.True(t, SectionUnchanged(blocks, "a:none", ""), "removing what is not there")
	require.False(t, SectionUnchanged(blocks, "a:none", "N"), "a new section")
	require.Equal(t, []SystemText{
		{Key: "x", Text: "X", Source: "extension a", Index: 1},
		{Key: "z", Text: "Z", Index: 3},
	}, OwnedSections(blocks, "a"))
	require.Empty(t, OwnedSections(blocks, "c"))
}
