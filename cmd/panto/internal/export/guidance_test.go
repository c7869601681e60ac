package export

import (
	"strings"
	"testing"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
)

// Markdown leaves the tool guidance's text out — where an extension set
// it, where it changed, in the prompt at the end and in what a change did
// to the prompt — and says so; with Prompt it is all there, and HTML
// always holds it.
func TestMarkdownLeavesOutToolGuidance(t *testing.T) {
	t.Parallel()
	l := readLog(t, "session")
	guidance := "# Tools from the tools extension\n\n## read\n\nRead a file.\n\n## bash\n\nRun a shell command."

	md := string(exportMarkdown(t, l, Options{}))
	require.NotContains(t, md, "# Tools from the tools extension")
	require.NotContains(t, md, "Run a shell command.")
	require.Contains(t, md, "- not shown: the tool guidance in the system prompt (`--prompt` includes it)\n")
	require.Contains(t, md, "> **system** · 09:26 · **extension tools** set section `tools:guidance` · +8 −0 lines\n>\n> _(tool guidance, 5 lines, 55 B: left out; `--prompt` includes it)_\n")
	// The guidance updated in place changed nothing else: no diff after it.
	_, after, _ := strings.Cut(md, "updated section `tools:guidance` in place")
	next, _, _ := strings.Cut(after, "### ")
	require.NotContains(t, next, "what changed in the prompt")
	// The re-seed's diff is of the prompt without the guidance.
	require.Contains(t, md, "> ```diff\n>   1  You are panto, a careful coding agent.\n> - 2  Work in small, tested steps.\n> - 3  \n> - 4  ---\n> - 5  \n> - 6  Prefer small diffs.\n> + 2  Work in small, tested steps. Run go test before you answer.\n> ```\n")
	_, bottom, _ := strings.Cut(md, "\n## System prompt at the end of the branch\n")
	require.Contains(t, bottom, "**3.** extension tools · section `tools:guidance`\n\n_(tool guidance, 9 lines, 86 B: left out; `--prompt` includes it)_\n")
	// Nothing else is left out.
	for _, b := range conversation.EffectiveSystem(l.Messages()) {
		if b.Key != "tools:guidance" {
			require.Contains(t, bottom, "```text\n"+b.Text+"\n```")
		}
	}

	whole := string(exportMarkdown(t, l, Options{Prompt: true}))
	require.NotContains(t, whole, "tool guidance")
	require.Contains(t, whole, "```text\n"+guidance+"\n```")
	require.Contains(t, whole, "> - 10  # Tools from the tools extension\n")

	require.Contains(t, string(exportHTML(t, l, Options{})), "Run a shell command.")
}

// A session without tool guidance says nothing about it.
func TestMarkdownNoToolGuidance(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, "/p")
	b.msg("", conversation.KeyedSystemMessage("env:environment", "cwd: /p").WithSource("extension env"))
	b.msg("", conversation.KeyedSystemMessage("x:guidanceless", "kept").WithSource("extension x"))
	b.msg("", conversation.UserText("hi"))
	md := string(exportMarkdown(t, b.mustLog(), Options{}))
	require.NotContains(t, md, "tool guidance")
	require.Contains(t, md, "cwd: /p")
	require.Contains(t, md, "kept")
	require.False(t, isGuidance(":guidance"))
	require.True(t, isGuidance("mcp:guidance"))
}
