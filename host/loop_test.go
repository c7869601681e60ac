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
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/rules"
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

func (r *runner) RunToolIn(ctx context.Context, call conversation.Block, _ *extension.Sandbox) extension.ToolRun {
	return extension.ToolRun{Result: r.RunTool(ctx, call)}
}

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

// newSession opens a session on a new log, seeded with "seed", that
// sends its requests to model.
func newSession(t *testing.T, model Sender) (*Session, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := Open(context.Background(), Config{
		Log: Log{Path: path}, CWD: "/p", Provider: model, ProviderName: "script", Model: Model{Name: "m1"},
		Prompt: func(rules.Vars) (Prompt, error) { return Prompt{Blocks: []PromptBlock{{Text: "seed"}}}, nil },
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, path
}

// turn runs one turn and returns its events, TurnEnd last; one that does
// not start gives a TurnEnd with the error.
func turn(ctx context.Context, s *Session, text string) []Event {
	sub, stop := context.WithCancel(context.Background())
	defer stop()
	events := s.Subscribe(sub)
	if err := s.Turn(ctx, text); err != nil {
		return []Event{TurnEnd{Err: err}}
	}
	var evs []Event
	for ev := range events {
		evs = append(evs, ev)
		if _, ok := ev.(TurnEnd); ok {
			break
		}
	}
	return evs
}

// end is the TurnEnd of a turn's events.
func end(t *testing.T, evs []Event) TurnEnd {
	t.Helper()
	require.NotEmpty(t, evs)
	e, ok := evs[len(evs)-1].(TurnEnd)
	require.True(t, ok, "the last event is TurnEnd, not %T", evs[len(evs)-1])
	return e
}

func TestLoopParallelCallsRecordedInCallOrder(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{
		calls(use("a", "slow", `{"n":1}`), use("b", "fast", `{"n":2}`)),
		conversation.AssistantText("all done"),
	}}
	s, path := newSession(t, model)
	s.tools = &runner{}
	e := end(t, turn(context.Background(), s, "go"))
	require.NoError(t, e.Err)
	require.Equal(t, "all done", e.Reply.Text())
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
	model := &script{replies: []conversation.Message{
		calls(use("1", "fast", `{}`)), calls(use("2", "fast", `{}`)), calls(use("3", "fast", `{}`)),
	}}
	s, _ := newSession(t, model)
	s.tools = &runner{}
	s.maxSteps = 2
	require.ErrorIs(t, end(t, turn(context.Background(), s, "loop")).Err, ErrMaxSteps)
	require.Len(t, model.requests, 2)
	msgs := s.Messages()
	last := msgs[len(msgs)-1]
	require.Equal(t, conversation.RoleTool, last.Role, "the last call has a result")
	require.True(t, last.Content[0].IsError)
	require.Contains(t, last.Content[0].ResultText(), "max_steps (2)")
}

func TestLoopWithoutToolsAnswersUnknown(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{calls(use("x", "read", `{}`)), conversation.AssistantText("ok")}}
	s, _ := newSession(t, model)
	require.NoError(t, end(t, turn(context.Background(), s, "hi")).Err)
	require.Empty(t, model.requests[0].Tools)
	msgs := model.requests[1].Messages
	require.Contains(t, msgs[len(msgs)-1].Content[0].ResultText(), `unknown tool "read"`)
}

func TestLoopCancelledMidToolLeavesNoCallWithoutResult(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{calls(use("a", "fast", `{}`), use("b", "slow", `{}`))}}
	s, path := newSession(t, model)
	s.tools = &runner{block: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	require.ErrorIs(t, end(t, turn(ctx, s, "go")).Err, context.Canceled)

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

// The events of a turn with parallel tool calls: the calls start in call
// order even though the second finishes first, every event comes between
// TurnStart and TurnEnd, and the usage of each request is told.
func TestTurnEventOrder(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{
		calls(use("a", "slow", `{"n":1}`), use("b", "fast", `{"n":2}`), use("c", "fast", `{"n":3}`)),
		conversation.AssistantText("all done"),
	}}
	s, _ := newSession(t, model)
	s.tools = &runner{}
	var kinds []string
	var started, ended []string
	for _, ev := range turn(context.Background(), s, "go") {
		kinds = append(kinds, ev.Kind())
		switch ev := ev.(type) {
		case ToolStart:
			started = append(started, ev.ID)
		case ToolEnd:
			ended = append(ended, ev.ID)
			require.False(t, ev.IsError)
			require.Positive(t, ev.Duration)
		case TurnEnd:
			require.NoError(t, ev.Err)
			require.Equal(t, "all done", ev.Reply.Text())
		}
	}
	require.Equal(t, []string{"a", "b", "c"}, started, "tool starts come in call order")
	require.Equal(t, "a", ended[2], "the slow call ends last")
	require.Equal(t, []string{
		"system_changed", "opened", // the seed, recorded by Open, on the first subscription
		"turn_start", "usage", "reply", "tool_start", "tool_start", "tool_start", "tool_end", "tool_end", "tool_end",
		"usage", "reply", "turn_end",
	}, kinds)
}

// A second turn asked for while one runs fails at once with ErrBusy, and
// starts nothing.
func TestOneTurnAtATime(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{calls(use("a", "fast", `{}`)), conversation.AssistantText("ok")}}
	s, _ := newSession(t, model)
	r := &runner{block: make(chan struct{})}
	s.tools = r
	events := s.Subscribe(t.Context())
	require.NoError(t, s.Turn(context.Background(), "one"))
	for ev := range events {
		if _, ok := ev.(ToolStart); ok {
			break
		}
	}
	require.ErrorIs(t, s.Turn(context.Background(), "two"), ErrBusy)
	require.True(t, s.Busy(), "Busy while the turn runs")
	close(r.block)
	var starts int
	for ev := range events {
		if _, ok := ev.(TurnStart); ok {
			starts++
		}
		if _, ok := ev.(TurnEnd); ok {
			break
		}
	}
	require.Zero(t, starts, "the refused turn started nothing")
	require.False(t, s.Busy(), "not Busy once TurnEnd came")
}

// A front end that saw TurnEnd may start the next turn (or a move, or a
// compaction) at once: the session is free by then, never busy.
func TestTurnEndFreesTheSession(t *testing.T) {
	t.Parallel()
	const n = 300
	model := &script{}
	for i := range n {
		model.replies = append(model.replies, conversation.AssistantText(fmt.Sprint("a", i)))
	}
	s, _ := newSession(t, model)
	ctx := context.Background()
	for i := range n {
		e := end(t, turn(ctx, s, fmt.Sprint("u", i)))
		require.NoError(t, e.Err, "turn %d", i)
		require.NotErrorIs(t, s.SetModel(fmt.Sprint("m", i)), ErrBusy, "after turn %d", i)
	}
}
