package describe

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/conversation"
)

func TestChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    Change
		want string
	}{
		{Change{By: "persona", Mode: conversation.ModeReplace, Text: "Be a pirate."}, "persona replaced the system prompt"},
		{Change{Mode: conversation.ModeReplace, Text: "x", Source: "extension persona"}, "persona replaced the system prompt"},
		{Change{By: "tools", Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "Use read."}, "tools updated its guidance section"},
		{Change{By: "tools", Key: "tools:guidance"}, "tools removed its guidance section"},
		{Change{By: "panto", Key: "env:environment"}, "panto removed section env:environment"},
		{Change{Mode: conversation.ModeReplace, Text: "seed", Source: "panto re-seed: project /p/.panto/APPEND_SYSTEM.md"}, "re-seeded: project /p/.panto/APPEND_SYSTEM.md changed"},
		{Change{Mode: conversation.ModeAppend, Text: "seed", Source: "project /p/.panto/SYSTEM.md"}, "panto added project /p/.panto/SYSTEM.md"},
		{Change{By: "sysprompt", Mode: conversation.ModeAppend, Text: "French."}, "sysprompt added a block to the system prompt"},
		{Change{Mode: conversation.ModeAppend, Text: "old log, no source"}, "panto added a block to the system prompt"},
	} {
		require.Equal(t, tc.want, tc.c.String(), "%+v", tc.c)
	}
	m := conversation.KeyedSystemMessage("env:environment", "cwd /p").WithSource("extension env")
	require.Equal(t, "env updated its environment section", Message(m))
}

// A description is one line, whatever the names and paths in it hold.
func TestChangeIsOneSafeLine(t *testing.T) {
	t.Parallel()
	for _, h := range termtext.Hostile {
		for _, c := range []Change{
			{By: h.Text, Mode: conversation.ModeReplace},
			{By: "x", Key: "x:" + h.Text + "\nnext", Text: "t"},
			{Mode: conversation.ModeAppend, Text: "t", Source: "project /p/" + h.Text + "\n/SYSTEM.md"},
			{Mode: conversation.ModeReplace, Text: "t", Source: "panto re-seed: project " + h.Text},
		} {
			s := c.String()
			require.NoError(t, termtext.Check([]byte(s)), "%s: %q", h.Name, s)
			require.NotContains(t, s, "\n", h.Name)
		}
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{
		"bash":                   "bash",
		"mcp__everything__echo":  "everything › echo",
		"mcp__my-db__run__query": "my-db › run__query",
		"mcp__x":                 "mcp__x",
		"mcp____t":               "mcp____t",
		"mcp__a-long__t_0a1b2c":  "a-long › t_0a1b2c",
	} {
		if got := ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ToolsChange("mcp server t: its tools changed", []string{"a", "b"}, []string{"c"}, nil); got != "tools: mcp server t: its tools changed (+2 −1)" {
		t.Errorf("ToolsChange: %q", got)
	}
}
