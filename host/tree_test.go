package host

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
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
	require.NoError(t, s.EditSystem("persona", conversation.ModeReplace, "Be a pirate."))
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
	require.NoError(t, s.EditSystem("ext", conversation.ModeAppend, "Also this."))
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
	now, err := s.PromptAt(s.Leaf())
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
	require.NoError(t, s.EditSystem("ext", conversation.ModeAppend, "Later."))
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
