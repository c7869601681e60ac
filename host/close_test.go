package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
	"github.com/panto-dev/panto/serializers/openai"
	"github.com/panto-dev/panto/sessionlog"
)

// halfStream is a model whose reply streams its first piece and then
// never comes (a slow stream): a turn cut while it streams has half a
// reply on the screen and none to record.
type halfStream struct{}

func (halfStream) Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error) {
	if fn != nil {
		fn(serializers.Delta{Kind: serializers.DeltaText, Text: "half a rep"})
	}
	<-ctx.Done()
	return serializers.Reply{}, fmt.Errorf("stream: %w", ctx.Err())
}

// waitEvent reads events until one of type T comes, and returns it.
func waitEvent[T Event](t *testing.T, events <-chan Event) T {
	t.Helper()
	for ev := range events {
		if e, ok := ev.(T); ok {
			return e
		}
	}
	var zero T
	t.Fatalf("the events ended before a %T", zero)
	return zero
}

// readRest reads events to their end and returns the turn's end.
func readRest(t *testing.T, events <-chan Event) (end *TurnEnd, kinds []string) {
	t.Helper()
	for ev := range events {
		kinds = append(kinds, ev.Kind())
		if e, ok := ev.(TurnEnd); ok {
			end = &e
		}
	}
	return end, kinds
}

// logMessages reads the log at path and returns its current branch's
// messages.
func logMessages(t *testing.T, path string) []conversation.Message {
	t.Helper()
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	return log.Messages()
}

// checkResumes opens the log at path again, as a resume, runs a turn
// and checks the request it sent: every tool call in it has its result
// right after it, and both wire formats encode it.
func checkResumes(t *testing.T, path string) {
	t.Helper()
	model := &script{replies: []conversation.Message{conversation.AssistantText("resumed")}}
	cfg := config(path, "seed")
	cfg.Provider = model
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	defer s.Close(context.Background())
	require.NoError(t, end(t, turn(context.Background(), s, "go on")).Err)
	require.Len(t, model.requests, 1)
	req := model.requests[0]
	var open []string // tool calls waiting for their results
	for _, m := range req.Messages {
		switch m.Role {
		case conversation.RoleSystem:
			continue
		case conversation.RoleTool:
			var got []string
			for _, b := range m.Content {
				got = append(got, b.ToolUseID)
			}
			require.ElementsMatch(t, open, got, "a tool message answers the calls before it")
			open = nil
			continue
		}
		require.Empty(t, open, "calls %v have no results", open)
		for _, u := range m.ToolUses() {
			open = append(open, u.ID)
		}
	}
	require.Empty(t, open)
	_, err = anthropic.EncodeRequest(req, anthropic.Options{})
	require.NoError(t, err)
	_, err = openai.EncodeRequest(req, openai.Options{})
	require.NoError(t, err)
}

// checkClosed checks that nothing reaches a closed session: every
// operation, and an extension's change, fails with ErrClosed, and the log
// and the conversation in memory stay as they were.
func checkClosed(t *testing.T, s *Session, path string) {
	t.Helper()
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	msgs := s.Messages()
	ctx := context.Background()
	require.ErrorIs(t, s.Turn(ctx, "after"), ErrClosed)
	_, err = s.MoveTo(ctx, "anything", MoveOptions{})
	require.ErrorIs(t, err, ErrClosed)
	_, err = s.Label("anything", "x")
	require.ErrorIs(t, err, ErrClosed)
	_, err = s.Compact(ctx)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, s.SetModel("other"), ErrClosed)
	_, err = s.RunCommand(ctx, "cmd", "")
	require.ErrorIs(t, err, ErrClosed)
	rec := recorder{s}
	require.ErrorIs(t, rec.EditSystem("ext", extension.Edit{Mode: conversation.ModeAppend, Text: "late"}), ErrClosed)
	require.ErrorIs(t, rec.SetSection("ext", "k", "late"), ErrClosed)
	require.ErrorIs(t, rec.AppendData("ext", json.RawMessage(`{}`)), ErrClosed)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "nothing written after Close")
	require.Equal(t, msgs, s.Messages(), "nothing recorded in memory either")
	require.NoError(t, s.Close(ctx), "a second Close is a no-op")
}

// Close during a reply that streams: the turn is cut as an interrupt
// cuts it — its user message recorded, no half reply — and its TurnEnd
// says the session closed; the log is complete and valid (it resumes,
// and both wire formats take the next request), the conversation in
// memory is the log's, and nothing is recorded afterwards.
func TestCloseMidStream(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	cfg := config(path, "seed")
	cfg.Provider, cfg.Model.Stream = halfStream{}, true
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	events := s.Subscribe(t.Context())
	require.NoError(t, s.Turn(context.Background(), "hello"))
	require.Equal(t, TextDelta{Text: "half a rep"}, waitEvent[TextDelta](t, events))

	require.NoError(t, s.Close(context.Background()))
	end, kinds := readRest(t, events)
	require.NotNil(t, end, "the turn's end came before the events ended")
	require.ErrorIs(t, end.Err, ErrClosed)
	require.NotContains(t, kinds, "reply")

	msgs := logMessages(t, path)
	require.Equal(t, []conversation.Role{conversation.RoleSystem, conversation.RoleUser}, roles(msgs), "no half reply")
	require.Equal(t, msgs, s.Messages(), "memory and log agree")
	checkClosed(t, s, path)
	checkResumes(t, path)
}

// Close while tool calls run: they are cut short (each gets an error
// result, as an interrupt gives it) and recorded before the log closes,
// so no call is left without a result.
func TestCloseMidTool(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	cfg := config(path, "seed")
	cfg.Provider = &script{replies: []conversation.Message{calls(use("a", "slow", `{}`), use("b", "fast", `{}`))}}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	s.tools = &runner{block: make(chan struct{})} // the calls wait for their context
	events := s.Subscribe(t.Context())
	require.NoError(t, s.Turn(context.Background(), "run them"))
	waitEvent[ToolStart](t, events)

	require.NoError(t, s.Close(context.Background()))
	end, kinds := readRest(t, events)
	require.NotNil(t, end)
	require.ErrorIs(t, end.Err, ErrClosed)
	require.Contains(t, kinds, "tool_end")

	msgs := logMessages(t, path)
	require.Equal(t, []conversation.Role{conversation.RoleSystem, conversation.RoleUser, conversation.RoleAssistant, conversation.RoleTool}, roles(msgs))
	results := msgs[3].Content
	require.Len(t, results, 2)
	for i, id := range []string{"a", "b"} {
		require.Equal(t, id, results[i].ToolUseID)
		require.True(t, results[i].IsError, "a call cut short has an error result")
	}
	require.Equal(t, msgs, s.Messages())
	checkClosed(t, s, path)
	checkResumes(t, path)
}

func roles(msgs []conversation.Message) []conversation.Role {
	var out []conversation.Role
	for _, m := range msgs {
		out = append(out, m.Role)
	}
	return out
}
