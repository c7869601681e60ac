package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sessionlog"
)

// texts returns the prompt's block texts.
func texts(blocks []conversation.SystemText) []string {
	out := []string{}
	for _, b := range blocks {
		out = append(out, b.Text)
	}
	return out
}

// lastSystem is the prompt the model's last request carried.
func (s *script) lastSystem() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return texts(conversation.EffectiveSystem(s.requests[len(s.requests)-1].Messages))
}

// lastMessages are the non-system messages of the last request, as text.
func (s *script) lastMessages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.requests[len(s.requests)-1].Messages {
		if m.Role != conversation.RoleSystem {
			out = append(out, string(m.Role)+": "+m.Text())
		}
	}
	return out
}

// msgID is the log id of the session's message whose text is text.
func msgID(t *testing.T, s *Session, text string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.conv.Messages {
		if m.Text() == text {
			return s.msgIDs[i]
		}
	}
	t.Fatalf("no message %q", text)
	return ""
}

func reopen(t *testing.T, path string, model Sender) *Session {
	t.Helper()
	s, err := Open(context.Background(), Config{
		Log: Log{Path: path}, CWD: "/p", Provider: model, ProviderName: "script",
		Prompt: func(rules.Vars) (Prompt, error) { return Prompt{Blocks: []PromptBlock{{Text: "seed"}}}, nil },
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// Moving back to before an extension's edit: the next request carries
// the prompt as it was there, the other branch stays in the file, and the
// leaf is persisted: a resume continues on the new branch.
func TestMoveBeforeAnEditBranchesUnderTheOldPrompt(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{
		conversation.AssistantText("a1"), conversation.AssistantText("a2"), conversation.AssistantText("a3"),
	}}
	s, path := newSession(t, model)
	ctx := context.Background()
	turn(ctx, s, "u1")
	require.NoError(t, recorder{s}.EditSystem("persona", extension.Edit{Mode: conversation.ModeReplace, Text: "Be a pirate."}))
	turn(ctx, s, "u2")
	require.Equal(t, []string{"Be a pirate."}, model.lastSystem())

	a1 := msgID(t, s, "a1")
	res, err := s.MoveTo(ctx, a1[:6], MoveOptions{})
	require.NoError(t, err)
	require.Equal(t, a1, res.To)
	require.Equal(t, 2, res.Left, "u2 and a2; the system edit is not counted")
	require.Equal(t, []string{"seed"}, texts(s.EffectiveSystem()))

	turn(ctx, s, "u3")
	require.Equal(t, []string{"seed"}, model.lastSystem(), "the prompt as it was at a1")
	require.Equal(t, []string{"user: u1", "assistant: a1", "user: u3"}, model.lastMessages())

	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	require.Len(t, log.Tree().Branches(), 2, "the branch left stays in the file")
	require.NoError(t, s.Close(ctx))

	r := reopen(t, path, model)
	var got []string
	for _, m := range r.Messages() {
		if m.Role != conversation.RoleSystem {
			got = append(got, m.Text())
		}
	}
	require.Equal(t, []string{"u1", "a1", "u3", "a3"}, got, "the resume continues on the new branch")
	require.Equal(t, []string{"seed"}, texts(r.EffectiveSystem()))
}

// A move with nothing typed afterwards is persisted too.
func TestMoveWithoutTypingIsPersisted(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("a1"), conversation.AssistantText("a2")}}
	s, path := newSession(t, model)
	ctx := context.Background()
	turn(ctx, s, "u1")
	turn(ctx, s, "u2")
	a1 := msgID(t, s, "a1")
	_, err := s.MoveTo(ctx, a1, MoveOptions{})
	require.NoError(t, err)
	_, err = s.MoveTo(ctx, a1, MoveOptions{})
	require.ErrorIs(t, err, ErrAlreadyThere)
	require.NoError(t, s.Close(ctx))
	r := reopen(t, path, model)
	require.Equal(t, "a1", r.Messages()[len(r.Messages())-1].Text())
}

// A branch summary, written by the model, is recorded on the new path
// and sent as a user message where it stands.
func TestMoveWithBranchSummary(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{
		conversation.AssistantText("a1"), conversation.AssistantText("a2"),
		conversation.AssistantText("tried u2; a2 was wrong"), conversation.AssistantText("a3"),
	}}
	s, path := newSession(t, model)
	ctx := context.Background()
	turn(ctx, s, "u1")
	turn(ctx, s, "u2")
	res, err := s.MoveTo(ctx, msgID(t, s, "a1"), MoveOptions{Summarize: true})
	require.NoError(t, err)
	require.Equal(t, "tried u2; a2 was wrong", res.Summary)
	msgs := model.lastMessages()
	require.Len(t, msgs, 1)
	require.Contains(t, msgs[0], "u2", "the summariser read the branch left")
	require.Contains(t, msgs[0], "a2")
	require.NotContains(t, msgs[0], "u1", "not what the new path holds")

	turn(ctx, s, "u3")
	require.Equal(t, []string{"user: u1", "assistant: a1", "user: " + branchSummaryPrefix + "tried u2; a2 was wrong", "user: u3"}, model.lastMessages())
	require.NoError(t, s.Close(ctx))
	require.Len(t, entriesOf(t, path, sessionlog.TypeBranchSummary), 1)
	require.Len(t, entriesOf(t, path, sessionlog.TypeMove), 1)
}

func entriesOf(t *testing.T, path string, typ sessionlog.EntryType) []sessionlog.Entry {
	t.Helper()
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	var out []sessionlog.Entry
	for _, e := range log.Entries {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// A reply that calls tools is no place to continue from: its calls would
// have no results.
func TestMoveRefusesAToolCallingReply(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{calls(use("c1", "fast", `{}`)), conversation.AssistantText("done")}}
	s, _ := newSession(t, model)
	s.tools = &runner{}
	ctx := context.Background()
	turn(ctx, s, "u1")
	var callID string
	s.mu.Lock()
	for i, m := range s.conv.Messages {
		if len(m.ToolUses()) > 0 {
			callID = s.msgIDs[i]
		}
	}
	s.mu.Unlock()
	_, err := s.MoveTo(ctx, callID, MoveOptions{})
	require.ErrorContains(t, err, "calls tools")
	_, err = s.MoveTo(ctx, "zzzz", MoveOptions{})
	require.Error(t, err)
}

func TestLabelAndPromptAt(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("a1"), conversation.AssistantText("a2")}}
	s, path := newSession(t, model)
	ctx := context.Background()
	turn(ctx, s, "u1")
	a1 := msgID(t, s, "a1")
	require.NoError(t, recorder{s}.EditSystem("ext", extension.Edit{Mode: conversation.ModeAppend, Text: "Also this."}))
	turn(ctx, s, "u2")

	id, err := s.Label(a1[:5], "before the edit")
	require.NoError(t, err)
	require.Equal(t, a1, id)
	_, err = s.Label(a1, "two\nlines")
	require.Error(t, err)
	tree, err := s.Tree()
	require.NoError(t, err)
	require.Equal(t, map[string]string{a1: "before the edit"}, tree.Labels())

	at, err := s.PromptAt(a1)
	require.NoError(t, err)
	require.Equal(t, []string{"seed"}, texts(at))
	now, err := s.PromptAt(s.leaf())
	require.NoError(t, err)
	require.Equal(t, []string{"seed", "Also this."}, texts(now))
	require.Equal(t, texts(s.EffectiveSystem()), texts(now))

	_, err = s.Label(a1, "")
	require.NoError(t, err)
	require.NoError(t, s.Close(ctx))
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Tree().Labels(), "an empty label removes it")
}

// Fork: a new log holding the path up to the entry, its header naming
// the parent; its leaf's prompt and conversation are the parent's there.
func TestFork(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("a1"), conversation.AssistantText("a2"), conversation.AssistantText("a3")}}
	s, path := newSession(t, model)
	ctx := context.Background()
	turn(ctx, s, "u1")
	a1 := msgID(t, s, "a1")
	require.NoError(t, recorder{s}.EditSystem("ext", extension.Edit{Mode: conversation.ModeAppend, Text: "Later."}))
	turn(ctx, s, "u2")
	_, err := s.Label(a1, "fork here")
	require.NoError(t, err)
	u2 := msgID(t, s, "u2")
	_, err = s.Label(u2, "off the fork")
	require.NoError(t, err)

	dst := filepath.Join(t.TempDir(), "fork.jsonl")
	h, err := Fork(path, a1[:7], dst, "")
	require.NoError(t, err)
	src, err := sessionlog.ReadHeader(path)
	require.NoError(t, err)
	require.Equal(t, src.ID, h.ParentSession)
	require.Equal(t, a1, h.ParentEntry)
	require.NotEqual(t, src.ID, h.ID)

	_, err = Fork(path, a1, dst, "")
	require.ErrorContains(t, err, "already exists")

	log, err := sessionlog.Read(dst)
	require.NoError(t, err)
	require.Equal(t, map[string]string{a1: "fork here"}, log.Tree().Labels())
	var got []string
	for _, m := range log.Messages() {
		if m.Role != conversation.RoleSystem {
			got = append(got, string(m.Role)+": "+m.Text())
		}
	}
	require.Equal(t, []string{"user: u1", "assistant: a1"}, got)
	require.Equal(t, []string{"seed"}, texts(conversation.EffectiveSystem(log.Messages())), "not the edit made after a1")

	f := reopen(t, dst, model)
	turn(ctx, f, "u3")
	require.Equal(t, []string{"seed"}, model.lastSystem())
	require.Equal(t, []string{"user: u1", "assistant: a1", "user: u3"}, model.lastMessages())
}

// A path that holds a move (and a branch summary) forks too: their
// "from" names an entry the fork does not hold.
func TestForkAfterAMove(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("a1"), conversation.AssistantText("a2"), conversation.AssistantText("a3")}}
	s, path := newSession(t, model)
	ctx := context.Background()
	turn(ctx, s, "u1")
	turn(ctx, s, "u2")
	_, err := s.MoveTo(ctx, msgID(t, s, "a1"), MoveOptions{})
	require.NoError(t, err)
	turn(ctx, s, "u3")
	dst := filepath.Join(t.TempDir(), "fork.jsonl")
	_, err = Fork(path, "", dst, "")
	require.NoError(t, err)
	log, err := sessionlog.Read(dst)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	var got []string
	for _, m := range log.Messages() {
		if m.Role != conversation.RoleSystem {
			got = append(got, m.Text())
		}
	}
	require.Equal(t, []string{"u1", "a1", "u3", "a3"}, got)
}

// A label removed on another branch stays removed in a fork of the
// branch that holds the label entry: a fork has the labels in effect.
func TestForkKeepsOnlyTheLabelsInEffect(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("a1"), conversation.AssistantText("a2"), conversation.AssistantText("a3")}}
	s, path := newSession(t, model)
	ctx := context.Background()
	turn(ctx, s, "u1")
	u1, a1 := msgID(t, s, "u1"), msgID(t, s, "a1")
	_, err := s.Label(u1, "wrong label") // on the path to a2
	require.NoError(t, err)
	_, err = s.Label(a1, "kept")
	require.NoError(t, err)
	turn(ctx, s, "u2")
	a2 := msgID(t, s, "a2")
	_, err = s.MoveTo(ctx, a1, MoveOptions{})
	require.NoError(t, err)
	turn(ctx, s, "u3")
	_, err = s.Label(u1, "") // removed, on the other branch
	require.NoError(t, err)

	dst := filepath.Join(t.TempDir(), "fork.jsonl")
	_, err = Fork(path, a2, dst, "")
	require.NoError(t, err)
	log, err := sessionlog.Read(dst)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, map[string]string{a1: "kept"}, log.Tree().Labels())
}

// A label (or any entry that is not a message) between a reply's tool
// calls and their results is no place to continue from: the next
// message would follow the calls without their results. The reply's
// results are.
func TestMoveRefusedBetweenToolCallsAndResults(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	add := func(e sessionlog.Entry) string {
		t.Helper()
		out, err := w.Append(e)
		require.NoError(t, err)
		return out[0].ID
	}
	add(sessionlog.MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend)))
	u1 := add(sessionlog.MessageEntry(conversation.UserText("u1")))
	reply := add(sessionlog.MessageEntry(calls(use("c1", "read", `{}`))))
	label := add(sessionlog.LabelEntry(u1, "after the crash"))
	results := add(sessionlog.MessageEntry(conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{conversation.ToolResult("c1", "interrupted", true)}}))
	add(sessionlog.MessageEntry(conversation.AssistantText("a1")))
	require.NoError(t, w.Close())

	s := reopen(t, path, &script{})
	tree, err := s.Tree()
	require.NoError(t, err)
	for _, ref := range []string{reply, label} {
		_, err := s.MoveTo(context.Background(), ref, MoveOptions{})
		require.ErrorContains(t, err, "without results", ref)
		require.ErrorContains(t, err, "move to "+results[:8]+" (its results)", ref)
		_, err = CheckMove(tree, ref)
		require.Error(t, err)
	}
	// A fork may not end there either: its resume would record the
	// calls as interrupted, though they ran.
	_, err = Fork(path, reply, filepath.Join(t.TempDir(), "f.jsonl"), "")
	require.ErrorContains(t, err, "without results")
	_, err = Fork(path, results, filepath.Join(t.TempDir(), "f.jsonl"), "")
	require.NoError(t, err)
	_, err = s.MoveTo(context.Background(), results, MoveOptions{})
	require.NoError(t, err)
}

// A move to a branch that cannot be read (an entry on it is damaged, its
// head intact) fails and moves back: the log goes on from where the
// session is, and resumes there.
func TestMoveToADamagedBranchMovesBack(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("a1"), conversation.AssistantText("a2"),
		conversation.AssistantText("a3"), conversation.AssistantText("a4")}}
	s, path := newSession(t, model)
	ctx := context.Background()
	turn(ctx, s, "u1")
	turn(ctx, s, "u2")
	a1, a2 := msgID(t, s, "a1"), msgID(t, s, "a2")
	_, err := s.MoveTo(ctx, a1, MoveOptions{})
	require.NoError(t, err)
	turn(ctx, s, "u3")
	require.NoError(t, s.Close(ctx))

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	damaged := strings.Replace(string(data), `"text":"u2"`, `"text":u2`, 1)
	require.NotEqual(t, string(data), damaged)
	require.NoError(t, os.WriteFile(path, []byte(damaged), 0o600))

	s = reopen(t, path, model)
	_, err = s.MoveTo(ctx, a2, MoveOptions{})
	require.ErrorContains(t, err, "moved back")
	turn(ctx, s, "u4")
	require.Equal(t, []string{"user: u1", "assistant: a1", "user: u3", "assistant: a3", "user: u4"}, model.lastMessages())
	require.NoError(t, s.Close(ctx))
	log, err := sessionlog.Load(path)
	require.NoError(t, err)
	var got []string
	for _, m := range log.Messages() {
		if m.Role != conversation.RoleSystem {
			got = append(got, m.Text())
		}
	}
	require.Equal(t, []string{"u1", "a1", "u3", "a3", "u4", "a4"}, got)
}
