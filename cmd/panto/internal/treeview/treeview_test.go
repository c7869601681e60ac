package treeview

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// branched writes the log of docs/session-format.md's tree example: a
// seed, u1 a1 u2 a2, a move back to a1 with a summary, u3 a3, a label.
func branched(t *testing.T) (*sessionlog.Tree, map[string]string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	defer w.Close()
	ids := map[string]string{}
	add := func(name string, e sessionlog.Entry) {
		t.Helper()
		got, err := w.Append(e)
		require.NoError(t, err)
		ids[name] = got[0].ID
	}
	add("s1", sessionlog.MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend).WithSource("project /p/.panto/SYSTEM.md")))
	add("s2", sessionlog.MessageEntry(conversation.KeyedSystemMessage("tools:guidance", "Use read.").WithSource("extension tools")))
	add("l1", sessionlog.LifecycleEntry(sessionlog.LifecycleStarted, false, []string{"tools"}))
	add("u1", sessionlog.MessageEntry(conversation.UserText("first question\nmore")))
	add("a1", sessionlog.MessageEntry(conversation.AssistantText("answer")))
	add("p1", sessionlog.MessageEntry(conversation.SystemMessage("Be a pirate.", conversation.ModeReplace).WithSource("extension persona")))
	add("u2", sessionlog.MessageEntry(conversation.UserText("second question")))
	add("a2", sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{conversation.ToolUse("c1", "bash", []byte(`{}`))}}))
	add("r2", sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{conversation.ToolResult("c1", "ok", false)}}))
	add("m1", sessionlog.MoveEntry(ids["a1"], ids["r2"]))
	add("b1", sessionlog.BranchSummaryEntry("asked u2; it ran bash", ids["r2"]))
	add("u3", sessionlog.MessageEntry(conversation.UserText("second question, rephrased")))
	add("a3", sessionlog.MessageEntry(conversation.AssistantText("better")))
	add("t1", sessionlog.LabelEntry(ids["a2"], "first attempt"))
	tree, err := sessionlog.Scan(path)
	require.NoError(t, err)
	return tree, ids
}

func TestBuild(t *testing.T) {
	t.Parallel()
	tree, ids := branched(t)
	rows, err := Build(tree, Options{})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, Write(&b, rows, 0))
	sh := func(n string) string { return Short(ids[n]) }
	want := strings.Join([]string{
		"* " + sh("s2") + "  ⚙ prompt   panto added project /p/.panto/SYSTEM.md; tools updated its guidance section",
		"* " + sh("u1") + "  user       first question",
		"* " + sh("a1") + "  assistant  answer",
		"  ├─ " + sh("p1") + "  ⚙ prompt   persona replaced the system prompt",
		"  │  " + sh("u2") + "  user       second question",
		"  │  " + sh("a2") + "  assistant  → bash  [first attempt]",
		"* └─ " + sh("b1") + "  summary    summary of the branch left: asked u2; it ran bash",
		"*    " + sh("u3") + "  user       second question, rephrased",
		"*    " + sh("a3") + "  assistant  better  ← here",
		"",
	}, "\n")
	require.Equal(t, want, b.String())

	// The rows scripts read: ids to move to, the tree's shape.
	require.Equal(t, ids["s2"], rows[0].ID, "a run of system changes stands for its last entry")
	require.Equal(t, 2, rows[2].Children, "a1 is a branch point")
	require.Equal(t, ids["a1"], rows[3].Parent)
	require.Equal(t, 1, rows[3].Depth)
	require.True(t, rows[8].Here)
	require.Equal(t, "persona replaced the system prompt", rows[3].Prompt)
	require.Equal(t, ids["r2"], rows[5].To, "a move to a reply whose calls fold into its row goes to their results")
	require.Empty(t, rows[2].To)
}

func TestWriteCutsToWidth(t *testing.T) {
	t.Parallel()
	tree, _ := branched(t)
	rows, err := Build(tree, Options{})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, Write(&b, rows, 40))
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		require.LessOrEqual(t, len([]rune(l)), 40, l)
	}
	require.Contains(t, b.String(), "← here", "the marker is never cut")
}

// A tree larger than the budget folds the runs that do not matter, and
// decodes only what it shows.
func TestBuildFoldsALongTree(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "long.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	_, err = w.Append(sessionlog.MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend)))
	require.NoError(t, err)
	var mid, change string
	for i := range 1000 {
		got, err := w.Append(sessionlog.MessageEntry(conversation.UserText("question "+itoa(i))), sessionlog.MessageEntry(conversation.AssistantText("answer "+itoa(i))))
		require.NoError(t, err)
		if i == 500 {
			mid = got[0].ID
			es, err := w.Append(sessionlog.MessageEntry(conversation.SystemMessage("later", conversation.ModeAppend).WithSource("extension x")))
			require.NoError(t, err)
			change = es[0].ID
		}
	}
	_, err = w.Append(sessionlog.LabelEntry(mid, "halfway"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	tree, err := sessionlog.Scan(path)
	require.NoError(t, err)

	rows, err := Build(tree, Options{Budget: 40})
	require.NoError(t, err)
	require.Less(t, len(rows), 40)
	var kinds []string
	ids := map[string]Row{}
	for _, r := range rows {
		kinds = append(kinds, r.Kind)
		ids[r.ID] = r
	}
	require.Equal(t, KindSystem, rows[0].Kind, "the start")
	require.Equal(t, "question 0", rows[1].Text)
	require.Equal(t, "halfway", ids[mid].Label, "labels show")
	require.Equal(t, "x added a block to the system prompt", ids[change].Prompt, "prompt changes show")
	require.True(t, rows[len(rows)-1].Here)
	require.Equal(t, "answer 999", rows[len(rows)-1].Text)
	require.Contains(t, kinds, KindElided)
	for _, r := range rows {
		if r.Kind == KindElided {
			require.Regexp(t, `^… \d+ more …$`, r.Text)
		}
	}

	all, err := Build(tree, Options{Full: true})
	require.NoError(t, err)
	require.Len(t, all, 2002, "the seed, 2,000 messages, the change")
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestParseArgs(t *testing.T) {
	t.Parallel()
	a, err := ParseArgs("", true)
	require.NoError(t, err)
	require.Equal(t, Args{Summarize: true}, a)
	a, err = ParseArgs(" --no-summary abc123 ", true)
	require.NoError(t, err)
	require.Equal(t, Args{Ref: "abc123"}, a)
	a, err = ParseArgs("-s --full", false)
	require.NoError(t, err)
	require.Equal(t, Args{Full: true, Summarize: true}, a)
	for _, bad := range []string{"a b", "--fast", "abc -x"} {
		_, err := ParseArgs(bad, false)
		require.ErrorContains(t, err, "unexpected", bad)
	}
}
