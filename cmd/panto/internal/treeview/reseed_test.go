package treeview

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// reseeded writes a log whose session was resumed after
// .panto/APPEND_SYSTEM.md changed: the seed unchanged, the append's text
// new, then an extension's section.
func reseeded(t *testing.T, seedSource string) *sessionlog.Tree {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	defer w.Close()
	add := func(e sessionlog.Entry) {
		t.Helper()
		_, err := w.Append(e)
		require.NoError(t, err)
	}
	sys := func(text string, mode conversation.Mode, source string) sessionlog.Entry {
		return sessionlog.MessageEntry(conversation.SystemMessage(text, mode).WithSource(source))
	}
	add(sys("You are panto.", conversation.ModeAppend, seedSource))
	add(sys("old rules", conversation.ModeAppend, "project /p/.panto/APPEND_SYSTEM.md"))
	add(sessionlog.LifecycleEntry(sessionlog.LifecycleStarted, false, nil))
	add(sessionlog.MessageEntry(conversation.UserText("hello")))
	add(sessionlog.MessageEntry(conversation.AssistantText("hi")))
	add(sys("You are panto.", conversation.ModeReplace, "panto re-seed: "+seedSource))
	add(sys("new rules", conversation.ModeAppend, "project /p/.panto/APPEND_SYSTEM.md"))
	add(sessionlog.LifecycleEntry(sessionlog.LifecycleResumed, true, []string{"tools"}))
	add(sessionlog.MessageEntry(conversation.KeyedSystemMessage("tools:guidance", "Use read.").WithSource("extension tools")))
	add(sessionlog.MessageEntry(conversation.UserText("again")))
	tree, err := sessionlog.Scan(path)
	require.NoError(t, err)
	return tree
}

// A re-seed's row says what changed, as the transcript does — not
// "built-in default changed" for a seed that did not change.
func TestReseedRowSaysWhatChanged(t *testing.T) {
	t.Parallel()
	tree := reseeded(t, "built-in default")
	rows, err := Build(tree, Options{})
	require.NoError(t, err)
	var prompts []string
	for _, r := range rows {
		if r.Kind == KindSystem {
			prompts = append(prompts, r.Prompt)
		}
	}
	require.Len(t, prompts, 2)
	require.Equal(t, "re-seeded: project /p/.panto/APPEND_SYSTEM.md changed; tools updated its guidance section", prompts[1])

	rows, err = Build(tree, Options{Short: func(s string) string { return strings.TrimPrefix(s, "project /p/") }})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, Write(&b, rows, 0))
	require.Contains(t, b.String(), "⚙ prompt   re-seeded: .panto/APPEND_SYSTEM.md changed; tools updated its guidance section")
	require.NotContains(t, b.String(), "built-in default changed")
}

// Blocks that have no recorded source are counted once, not named one
// by one.
func TestReseedOfUnrecordedSourcesCounts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	for _, e := range []sessionlog.Entry{
		sessionlog.MessageEntry(conversation.SystemMessage("a", conversation.ModeAppend)),
		sessionlog.MessageEntry(conversation.SystemMessage("b", conversation.ModeAppend)),
		sessionlog.MessageEntry(conversation.SystemMessage("c", conversation.ModeAppend)),
		sessionlog.LifecycleEntry(sessionlog.LifecycleStarted, false, nil),
		sessionlog.MessageEntry(conversation.UserText("hello")),
		sessionlog.MessageEntry(conversation.SystemMessage("seed", conversation.ModeReplace).WithSource("panto re-seed: built-in default")),
		sessionlog.LifecycleEntry(sessionlog.LifecycleResumed, true, nil),
	} {
		_, err := w.Append(e)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	tree, err := sessionlog.Scan(path)
	require.NoError(t, err)
	rows, err := Build(tree, Options{})
	require.NoError(t, err)
	last := rows[len(rows)-1]
	require.Equal(t, "re-seeded: built-in default added, 3 blocks of an unrecorded source removed", last.Prompt)
}
