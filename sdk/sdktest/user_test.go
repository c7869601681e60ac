package sdktest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

// named is an extension with a name and a session_end that asks.
type named struct {
	sdk.Base
	name string
	err  error
}

func (n *named) Describe() sdk.Info { return sdk.Info{Name: n.name} }

func (n *named) SessionEnd(ctx context.Context, h sdk.Host, _ sdk.SessionEndEvent) (sdk.SessionEndResponse, error) {
	_, n.err = h.Confirm(ctx, "Save?", "")
	return sdk.SessionEndResponse{}, nil
}

// The harness refuses the names panto refuses.
func TestNewRejectsNamesPantoRefuses(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"panto", "PANTO", "two words", "new\nline", "dot.ted"} {
		tb := &fatalTB{TB: t}
		sdktest.New(tb, &named{name: name})
		require.Len(t, tb.fatal, 1, name)
		require.Contains(t, tb.fatal[0], "sdktest: panto would not load this extension: its name", name)
	}
	tb := &fatalTB{TB: t}
	sdktest.New(tb, &named{name: "my-ext_2"})
	require.Empty(t, tb.fatal)
}

// The harness records what a question highlights, and, as panto, asks
// nothing once the session is closing.
func TestHarnessQuestionsHighlightAndClosing(t *testing.T) {
	t.Parallel()
	e := &named{name: "asker"}
	h := sdktest.New(t, e).WithUser(sdktest.User{
		Confirm: func(string, string) (bool, error) { return true, nil },
		Select:  func(string, []string) (int, error) { return 0, nil },
	})
	yes, err := h.Host().Confirm(context.Background(), "Run?", "sudo ls", sdk.Highlight("sudo"))
	require.NoError(t, err)
	require.True(t, yes)
	_, err = h.Host().Select(context.Background(), "Pick", []string{"a", "b"})
	require.NoError(t, err)
	require.Equal(t, []sdktest.Question{
		{Kind: "confirm", Title: "Run?", Message: "sudo ls", Highlight: []string{"sudo"}},
		{Kind: "select", Title: "Pick", Options: []string{"a", "b"}},
	}, h.Questions())

	require.NoError(t, h.SessionEnd(sdk.SessionEndEvent{}))
	require.ErrorIs(t, e.err, sdk.ErrClosing, "session_end's question fails at once")
	_, err = h.Host().Input(context.Background(), "later", "")
	require.ErrorIs(t, err, sdk.ErrClosing)
	require.Len(t, h.Questions(), 2, "nothing was asked")
}

// A notice shows at the level panto shows it at: an unknown level is
// info, as in panto.
func TestHarnessNoticeLevelsArePantos(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &named{name: "teller"})
	ctx := context.Background()
	require.NoError(t, h.Host().Notify(ctx, "warning", "careful"))
	require.NoError(t, h.Host().Notify(ctx, "shouting", "loud"))
	require.NoError(t, h.Host().Notify(ctx, "error", "broken"))
	require.Equal(t, []sdktest.Notice{
		{Level: "warning", Text: "careful"},
		{Level: "info", Text: "loud"},
		{Level: "error", Text: "broken"},
	}, h.Notices())
}
