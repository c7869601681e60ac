package sessionlog

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// A permissions entry is part of the branch's state: a Load keeps it
// even when a compaction cut the messages around it, so a resume of a
// long session still finds the user's grants.
func TestPermissionsSurviveACompactionCut(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{Version: Version, ID: "s", Created: t0, Cwd: "/p"})
	require.NoError(t, err)
	perm := Permissions{Mode: "accept-edits", Grants: []string{"bash(make)"}, Reason: "grant",
		Sandbox: &SandboxPolicy{Mode: "workspace-write", WritableRoots: []string{"/p"}}}
	es, err := w.Append(
		MessageEntry(conversation.UserText("one")),
		PermissionsEntry(perm),
		MessageEntry(conversation.AssistantText("two")),
		MessageEntry(conversation.UserText("three")),
	)
	require.NoError(t, err)
	_, err = w.Append(CompactionEntry("one and two", es[3].ID, 100))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	l, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, es[3].ID, l.Cut, "the compaction cut the first messages")
	var got *Permissions
	for _, e := range l.Entries {
		require.NotEqual(t, "two", textOf(e), "a message before the cut is not loaded")
		if e.Permissions != nil {
			got = e.Permissions
		}
	}
	require.Equal(t, &perm, got)
}

// A permissions entry that says nothing usable is refused on write and
// named on read.
func TestPermissionsEntryChecked(t *testing.T) {
	t.Parallel()
	w, err := Create(filepath.Join(t.TempDir(), "s.jsonl"), Header{Version: Version, ID: "s", Created: t0, Cwd: "/p"})
	require.NoError(t, err)
	defer w.Close()
	for _, p := range []Permissions{{}, {Mode: "default", Rules: []PermissionRule{{Verdict: "maybe", Rule: "read"}}}, {Mode: "default", Sandbox: &SandboxPolicy{}}} {
		_, err := w.Append(PermissionsEntry(p))
		require.Error(t, err, "%+v", p)
	}
}

func textOf(e Entry) string {
	if e.Message == nil {
		return ""
	}
	return e.Message.Text()
}
