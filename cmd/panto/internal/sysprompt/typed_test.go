package sysprompt

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// Each USER_PROMPT.md comes with its layer and file, which the log
// records as where the block panto added came from.
func TestUserPromptSources(t *testing.T) {
	t.Parallel()
	d := setup(t)
	pp := write(t, d, layers.Project, UserPromptFile, "Project: briefly.")
	bp := write(t, d, layers.Base, UserPromptFile, "Base.")
	got, err := UserPrompt(d, nil)
	require.NoError(t, err)
	require.Equal(t, []Block{{Text: "Project: briefly.", Source: "project " + pp}, {Text: "Base.", Source: "base " + bp}}, got)
}
