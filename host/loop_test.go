package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// script is a fake model: each Send returns the next reply and records
// the request.
type script struct {
	mu       sync.Mutex
	replies  []conversation.Message
	requests []serializers.Request
}

func (s *script) Send(ctx context.Context, req serializers.Request, _ serializers.DeltaFunc) (serializers.Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	if len(s.replies) == 0 {
		return serializers.Reply{}, fmt.Errorf("script exhausted")
	}
	m := s.replies[0]
	s.replies = s.replies[1:]
	return serializers.Reply{Message: m, StopReason: serializers.StopEndTurn}, nil
}

func calls(uses ...conversation.Block) conversation.Message {
	return conversation.Message{Role: conversation.RoleAssistant, Content: uses}
}

func use(id, name, input string) conversation.Block {
	return conversation.ToolUse(id, name, json.RawMessage(input))
}

// runner offers "slow" and "fast" tools; slow takes longer, so parallel
// runs finish out of call order.
type runner struct {
	mu      sync.Mutex
	started []string
	block   chan struct{} // when set, tools wait for it or for ctx
}

func (r *runner) Tools() []serializers.Tool {
	return []serializers.Tool{{Name: "fast"}, {Name: "slow"}}
}

func (r *runner) NarrowTools(_ context.Context, _ int, names []string) []string { return names }

func (r *runner) RunTool(ctx context.Context, call conversation.Block) conversation.Block {
	r.mu.Lock()
	r.started = append(r.started, call.ID)
	r.mu.Unlock()
	if r.block != nil {
		select {
		case <-r.block:
		case <-ctx.Done():
			return conversation.ToolResult(call.ID, "interrupted", true)
		}
	}
	if call.Name == "slow" {
		time.Sleep(50 * time.Millisecond)
	}
	return conversation.ToolResult(call.ID, call.Name+" done "+string(call.Input), false)
}

func newSession(t *testing.T) (*Session, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := OpenSession(path, "/p", "")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	_, err = s.Seed([]string{"seed"}, nil)
	require.NoError(t, err)
	return s, path
}

func TestLoopParallelCallsRecordedInCallOrder(t *testing.T) {
	t.Parallel()
	s, path := newSession(t)
	s.SetTools(&runner{})
	model := &script{replies: []conversation.Message{
		calls(use("a", "slow", `{"n":1}`), use("b", "fast", `{"n":2}`)),
		conversation.AssistantText("all done"),
	}}
	reply, err := s.Turn(context.Background(), model, serializers.Request{}, conversation.UserText("go"), nil)
	require.NoError(t, err)
	require.Equal(t, "all done", reply.Message.Text())
	require.Len(t, model.requests, 2)
	require.Equal(t, []string{"fast", "slow"}, names(model.requests[0].Tools))

	// The second request carries the results, in call order.
	last := model.requests[1].Messages
	res := last[len(last)-1]
	require.Equal(t, conversation.RoleTool, res.Role)
	require.Equal(t, "a", res.Content[0].ToolUseID)
	require.Equal(t, `slow done {"n":1}`, res.Content[0].ResultText())
	require.Equal(t, "b", res.Content[1].ToolUseID)

	// The log holds the same and rebuilds to it.
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	require.Equal(t, s.Messages(), log.Messages())
}

func TestLoopStopsAtMaxSteps(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t)
	s.SetTools(&runner{})
	s.SetMaxSteps(2)
	model := &script{replies: []conversation.Message{
		calls(use("1", "fast", `{}`)), calls(use("2", "fast", `{}`)), calls(use("3", "fast", `{}`)),
	}}
	_, err := s.Turn(context.Background(), model, serializers.Request{}, conversation.UserText("loop"), nil)
	require.ErrorIs(t, err, ErrMaxSteps)
	require.Len(t, model.requests, 2)
	msgs := s.Messages()
	last := msgs[len(msgs)-1]
	require.Equal(t, conversation.RoleTool, last.Role, "the last call has a result")
	require.True(t, last.Content[0].IsError)
	require.Contains(t, last.Content[0].ResultText(), "max_steps (2)")
}

func TestLoopWithoutToolsAnswersUnknown(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t)
	model := &script{replies: []conversation.Message{calls(use("x", "read", `{}`)), conversation.AssistantText("ok")}}
	_, err := s.Turn(context.Background(), model, serializers.Request{}, conversation.UserText("hi"), nil)
	require.NoError(t, err)
	require.Empty(t, model.requests[0].Tools)
	msgs := model.requests[1].Messages
	require.Contains(t, msgs[len(msgs)-1].Content[0].ResultText(), `unknown tool "read"`)
}

func TestLoopCancelledMidToolLeavesNoCallWithoutResult(t *testing.T) {
	t.Parallel()
	s, path := newSession(t)
	r := &runner{block: make(chan struct{})}
	s.SetTools(r)
	model := &script{replies: []conversation.Message{calls(use("a", "fast", `{}`), use("b", "slow", `{}`))}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := s.Turn(ctx, model, serializers.Request{}, conversation.UserText("go"), nil)
	require.ErrorIs(t, err, context.Canceled)

	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	msgs := log.Messages()
	last := msgs[len(msgs)-1]
	require.Equal(t, conversation.RoleTool, last.Role)
	require.Len(t, last.Content, 2, "both calls have a result")
	require.True(t, last.Content[0].IsError)
	require.Equal(t, "b", last.Content[1].ToolUseID)
}

func names(tools []serializers.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
