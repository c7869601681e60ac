package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// A message steered into a turn while its tool runs is recorded after
// the tool's result, and the turn's next request carries it: the model
// reads it before it goes on, in the same turn.
func TestSteerIsDeliveredBeforeTheNextRequest(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{
		calls(use("a", "fast", `{}`)),
		conversation.AssistantText("ok, in Go then"),
	}}
	s, path := newSession(t, model)
	r := &runner{block: make(chan struct{})}
	s.tools = r
	require.ErrorIs(t, s.Steer("too early"), ErrNoTurn, "no turn runs to take it")

	sub, stop := context.WithCancel(context.Background())
	defer stop()
	events := s.Subscribe(sub)
	require.NoError(t, s.Turn(context.Background(), "write it"))
	var steered []string
	var last TurnEnd
	for ev := range events {
		switch ev := ev.(type) {
		case ToolStart:
			require.NoError(t, s.Steer("use Go"))
			close(r.block)
		case Steered:
			steered = append(steered, ev.Text)
		case TurnEnd:
			last = ev
		}
		if last.Reply.Role != "" || last.Err != nil {
			break
		}
	}
	require.NoError(t, last.Err)
	require.Empty(t, last.Unsent)
	require.Equal(t, []string{"use Go"}, steered)
	require.Len(t, model.requests, 2)
	second := model.requests[1].Messages
	require.Equal(t, "use Go", second[len(second)-1].Text(), "the second request ends with the steered message")
	require.Equal(t, conversation.RoleTool, second[len(second)-2].Role, "after the tool's result")

	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	msgs := log.Messages()
	require.Equal(t, conversation.RoleUser, msgs[len(msgs)-2].Role)
	require.Equal(t, "use Go", msgs[len(msgs)-2].Text(), "recorded as the user's")
	require.ErrorIs(t, s.Steer("late"), ErrNoTurn, "the turn is over")
}

// A turn that ends without another request hands back what was steered
// into it (the front end sends it next); TakeSteered takes a message
// back before it is delivered.
func TestSteerUndeliveredComesBack(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{calls(use("a", "fast", `{}`)), conversation.AssistantText("done")}}
	s, _ := newSession(t, model)
	r := &runner{block: make(chan struct{})}
	s.tools = r
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, stop := context.WithCancel(context.Background())
	defer stop()
	events := s.Subscribe(sub)
	require.NoError(t, s.Turn(ctx, "go"))
	var last TurnEnd
	for ev := range events {
		if _, ok := ev.(ToolStart); ok {
			require.NoError(t, s.Steer("first"))
			require.NoError(t, s.Steer("second"))
			require.Equal(t, []string{"first", "second"}, s.TakeSteered())
			require.NoError(t, s.Steer("third"))
			cancel() // Esc: the turn stops with the tool
		}
		if e, ok := ev.(TurnEnd); ok {
			last = e
			break
		}
	}
	require.ErrorIs(t, last.Err, context.Canceled)
	require.Equal(t, []string{"third"}, last.Unsent, "the stopped turn delivered nothing")
	require.Len(t, model.requests, 1)
}
