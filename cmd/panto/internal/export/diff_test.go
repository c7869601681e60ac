package export

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const editResult = "Edited /p/count.go: applied 1 edit (at line 12).\n\n" +
	"@@ -10,5 +10,5 @@\n func count(n int) int {\n \tsum := 0\n-\tfor i := 0; i <= n; i++ {\n+\tfor i := 0; i < n; i++ {\n \t\tsum += i\n \t}"

// An edit's result exports as the diff a reader reads: the file's lines
// with their numbers and context, the changed words marked in HTML; a
// result from before results carried a diff exports as its text.
func TestExportDiff(t *testing.T) {
	t.Parallel()
	b := newBuilder(t, "/p")
	b.msg("", toolCall("t1", "edit", map[string]any{"path": "count.go", "edits": []any{map[string]any{"old_text": "i <= n", "new_text": "i < n"}}}))
	b.msg("", toolResult("t1", editResult, false))
	b.msg("", toolCall("t2", "edit", map[string]any{"path": "count.go", "edits": []any{map[string]any{"old_text": "a", "new_text": "b"}}}))
	b.msg("", toolResult("t2", "Edited /p/count.go: applied 1 edit (at line 3).", false))
	l := b.mustLog()

	h := exportHTML(t, l, Options{})
	d := parseHTML(t, h)
	checkSafe(t, d, false)
	pres := all(d.root, "pre", "diff")
	require.Len(t, pres, 1, "only the result with a diff is drawn as one")
	lines := strings.Split(strings.TrimSpace(text(pres[0])), "\n")
	require.Equal(t, []string{
		"10   func count(n int) int {",
		"11   \tsum := 0",
		"12 - \tfor i := 0; i <= n; i++ {",
		"12 + \tfor i := 0; i < n; i++ {",
		"13   \t\tsum += i",
		"14   \t}",
	}, lines)
	dels, inss := all(pres[0], "del", ""), all(pres[0], "ins", "")
	require.Len(t, dels, 1)
	require.Len(t, inss, 1)
	require.Equal(t, "<=", text(dels[0]))
	require.Equal(t, "<", text(inss[0]))
	require.Contains(t, string(h), "Edited /p/count.go: applied 1 edit (at line 3).")

	md := string(exportMarkdown(t, l, Options{}))
	require.Contains(t, md, "```diff\n  10  func count(n int) int {\n  11  \tsum := 0\n- 12  \tfor i := 0; i <= n; i++ {\n+ 12  \tfor i := 0; i < n; i++ {\n  13  \t\tsum += i\n  14  \t}\n```")
	require.Contains(t, md, "Edited /p/count.go: applied 1 edit (at line 3).")
}
