package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/linediff"
)

// editResult is a result as the tools extension writes it: its words,
// then the diff.
func editResult(before, after string) string {
	return "Edited /p/f.go: 1 replacement.\n\n" + strings.TrimSuffix(linediff.Format(linediff.Diff(before, after, 3)), "\n")
}

func TestRebuildGivesBackTheFileBefore(t *testing.T) {
	var long strings.Builder
	for i := range 40 {
		long.WriteString("line " + string(rune('a'+i%26)) + "\n")
	}
	cases := map[string]struct{ before, after string }{
		"one line changed": {"one\ntwo\nthree\n", "one\ndeux\nthree\n"},
		"lines added":      {"a\nb\n", "a\nx\ny\nb\n"},
		"lines deleted":    {"a\nx\ny\nb\n", "a\nb\n"},
		"at the top":       {"a\nb\nc\n", "z\na\nb\nc\n"},
		"at the end":       {"a\nb\nc\n", "a\nb\n"},
		"emptied":          {"a\nb\n", ""},
		"from empty":       {"", "a\n"},
		"two hunks":        {long.String(), strings.Replace(strings.Replace(long.String(), "line b\n", "B\n", 1), "line y\n", "", 1)},
		"crlf":             {"one\r\ntwo\r\nthree\r\n", "one\r\n2\r\nthree\r\n"},
		"no final newline": {"a\nb", "a\nc"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := rebuild(c.after, editResult(c.before, c.after))
			require.True(t, ok)
			assert.Equal(t, c.before, got)
		})
	}
}

func TestRebuildRefusesWhatTheDiffDoesNotHold(t *testing.T) {
	t.Run("a diff cut short", func(t *testing.T) {
		var before, after strings.Builder
		for i := range linediff.MaxLines + 10 {
			before.WriteString("old " + string(rune('a'+i%26)) + "\n")
			after.WriteString("new " + string(rune('a'+i%26)) + "\n")
		}
		_, ok := rebuild(after.String(), editResult(before.String(), after.String()))
		assert.False(t, ok)
	})
	t.Run("a deleted line cut", func(t *testing.T) {
		before := "a\n" + strings.Repeat("x", linediff.MaxLineBytes+50) + "\nb\n"
		after := "a\ny\nb\n"
		_, ok := rebuild(after, editResult(before, after))
		assert.False(t, ok)
	})
	t.Run("a diff of another file", func(t *testing.T) {
		_, ok := rebuild("p\nq\nr\n", editResult("one\ntwo\n", "one\ndeux\n"))
		assert.False(t, ok)
	})
	t.Run("no diff", func(t *testing.T) {
		_, ok := rebuild("a\n", "Edited /p/f.go.")
		assert.False(t, ok)
	})
}

// The ACP pump may read the file for the diff only after the edit wrote
// it: the diff still shows the text before, from the result.
func TestDiffOfASnapshotTakenTooLate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	require.NoError(t, os.WriteFile(path, []byte("one\ndeux\n"), 0o644))
	b := before{path: path, text: "one\ndeux\n", exists: true, ok: true}

	got := b.diff(editResult("one\ntwo\n", "one\ndeux\n"))
	require.Len(t, got, 1)
	require.NotNil(t, got[0].Diff)
	assert.Equal(t, "one\ndeux\n", got[0].Diff.NewText)
	require.NotNil(t, got[0].Diff.OldText)
	assert.Equal(t, "one\ntwo\n", *got[0].Diff.OldText)

	// A result without a diff to rebuild from: no diff rather than a
	// wrong one.
	assert.Nil(t, b.diff("Edited "+path+"."+"\n\n@@ -1,2 +1,2 @@\n one\n-zwei\n+drei"))
	// An unchanged file is shown unchanged.
	same := b.diff("Overwrote " + path + ": wrote 9 bytes.\n\n(The content is unchanged.)")
	require.Len(t, same, 1)
	assert.Equal(t, acpsdk.ToolCallContent{Diff: same[0].Diff}, same[0])
	assert.Equal(t, "one\ndeux\n", *same[0].Diff.OldText)
}
