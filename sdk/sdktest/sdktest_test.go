package sdktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

// everything implements every hook; each one runs its func field, if set,
// and records the event it was given.
type everything struct {
	sdk.Base
	mu     sync.Mutex
	events []string
	run    func(ctx context.Context, h sdk.Host) error
}

var (
	_ sdk.SessionStarter      = (*everything)(nil)
	_ sdk.BeforeTurner        = (*everything)(nil)
	_ sdk.TurnEnder           = (*everything)(nil)
	_ sdk.SystemPromptWatcher = (*everything)(nil)
	_ sdk.SessionEnder        = (*everything)(nil)
	_ sdk.CommandProvider     = (*everything)(nil)
	_ sdk.Describer           = (*everything)(nil)
)

func (e *everything) hook(ctx context.Context, h sdk.Host, ev string) error {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
	if e.run != nil {
		return e.run(ctx, h)
	}
	return nil
}

func (e *everything) SessionStart(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	return sdk.SessionStartResponse{}, e.hook(ctx, h, fmt.Sprintf("session_start %s resumed=%t reseeded=%t", ev.SessionID, ev.Resumed, ev.Reseeded))
}

func (e *everything) BeforeTurn(ctx context.Context, h sdk.Host, ev sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	return sdk.BeforeTurnResponse{}, e.hook(ctx, h, "before_turn "+ev.UserText)
}

func (e *everything) TurnEnd(ctx context.Context, h sdk.Host, ev sdk.TurnEndEvent) (sdk.TurnEndResponse, error) {
	return sdk.TurnEndResponse{}, e.hook(ctx, h, "turn_end "+ev.Message.Text()+" "+ev.StopReason)
}

func (e *everything) SystemPromptChanged(ctx context.Context, h sdk.Host, ev sdk.SystemPromptChangedEvent) (sdk.SystemPromptChangedResponse, error) {
	return sdk.SystemPromptChangedResponse{}, e.hook(ctx, h, fmt.Sprintf("system_prompt_changed %s %s %s", ev.Mode, ev.Text, ev.By))
}

func (e *everything) SessionEnd(ctx context.Context, h sdk.Host, _ sdk.SessionEndEvent) (sdk.SessionEndResponse, error) {
	return sdk.SessionEndResponse{}, e.hook(ctx, h, "session_end")
}

func (e *everything) Describe() sdk.Info {
	return sdk.Info{Name: "everything", Version: "0.1.0", Description: "every hook"}
}

func (e *everything) Commands() []sdk.Command {
	return []sdk.Command{
		{Name: "append", Usage: "TEXT", Run: func(ctx context.Context, h sdk.Host, req sdk.CommandRequest) (sdk.CommandResponse, error) {
			return sdk.CommandResponse{Output: "ok"}, h.AddSystemMessage(ctx, req.Args)
		}},
		{Name: "replace", Usage: "TEXT", Run: func(ctx context.Context, h sdk.Host, req sdk.CommandRequest) (sdk.CommandResponse, error) {
			return sdk.CommandResponse{Output: "ok"}, h.ReplaceSystemMessage(ctx, req.Args)
		}},
		{Name: "fail", Run: func(context.Context, sdk.Host, sdk.CommandRequest) (sdk.CommandResponse, error) {
			return sdk.CommandResponse{Output: "partial"}, errors.New("it failed")
		}},
	}
}

func TestHooksReachTheExtensionInOrder(t *testing.T) {
	t.Parallel()
	ext := &everything{}
	h := sdktest.New(t, ext)
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{SessionID: "s1", Resumed: true, Reseeded: true}))
	require.NoError(t, h.BeforeTurn(sdk.BeforeTurnEvent{UserText: "hi"}))
	require.NoError(t, h.TurnEnd(sdk.TurnEndEvent{Message: conversation.AssistantText("hello"), StopReason: "end_turn"}))
	require.NoError(t, h.SystemPromptChanged(sdk.SystemPromptChangedEvent{Mode: conversation.ModeReplace, Text: "x", By: "panto"}))
	require.NoError(t, h.SessionEnd(sdk.SessionEndEvent{}))
	require.Equal(t, []string{
		"session_start s1 resumed=true reseeded=true",
		"before_turn hi",
		"turn_end hello end_turn",
		"system_prompt_changed replace x panto",
		"session_end",
	}, ext.events)
	require.Empty(t, h.Messages(), "the event methods add no messages")
}

func TestHookErrorsAreReturned(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	h := sdktest.New(t, &everything{run: func(context.Context, sdk.Host) error { return boom }})
	require.ErrorIs(t, h.SessionStart(sdk.SessionStartEvent{}), boom)
	require.ErrorIs(t, h.BeforeTurn(sdk.BeforeTurnEvent{}), boom)
	require.ErrorIs(t, h.TurnEnd(sdk.TurnEndEvent{}), boom)
	require.ErrorIs(t, h.SystemPromptChanged(sdk.SystemPromptChangedEvent{}), boom)
	require.ErrorIs(t, h.SessionEnd(sdk.SessionEndEvent{}), boom)
}

func TestUnimplementedHooksAreNoOps(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &struct{ sdk.Base }{})
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	require.NoError(t, h.BeforeTurn(sdk.BeforeTurnEvent{}))
	require.NoError(t, h.TurnEnd(sdk.TurnEndEvent{}))
	require.NoError(t, h.SystemPromptChanged(sdk.SystemPromptChangedEvent{}))
	require.NoError(t, h.SessionEnd(sdk.SessionEndEvent{}))
	require.NoError(t, h.Turn("hi", "hello"))
	require.Empty(t, h.Edits())
	require.Empty(t, h.Commands())
	require.Equal(t, sdk.Info{}, h.Info())
	_, err := h.Command("anything", "")
	require.EqualError(t, err, "sdktest: unknown command /anything")
}

func TestEditsAndPrompt(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &everything{}).WithSystem("seed", "project")
	require.Equal(t, []string{"seed", "project"}, h.Prompt())
	require.Empty(t, h.Edits(), "the seed is not the extension's edit")

	resp, err := h.Command("/append", "one")
	require.NoError(t, err)
	require.Equal(t, "ok", resp.Output)
	require.Equal(t, []string{"seed", "project", "one"}, h.Prompt())

	_, err = h.Command("replace", "fresh")
	require.NoError(t, err)
	_, err = h.Command("append", "two")
	require.NoError(t, err)
	require.Equal(t, []sdktest.Edit{
		{Mode: conversation.ModeAppend, Text: "one"},
		{Mode: conversation.ModeReplace, Text: "fresh"},
		{Mode: conversation.ModeAppend, Text: "two"},
	}, h.Edits())
	require.Equal(t, []string{"fresh", "two"}, h.Prompt())

	// The Host answers from the same conversation.
	prompt, err := h.Host().SystemPrompt(context.Background())
	require.NoError(t, err)
	require.Equal(t, h.Prompt(), prompt)
	msgs, err := h.Host().Messages(context.Background())
	require.NoError(t, err)
	require.Len(t, msgs, 5, "2 seed blocks + 3 edits, the discarded ones included")
	require.Equal(t, conversation.SystemMessage("fresh", conversation.ModeReplace).WithSource("extension everything"), msgs[3],
		"recorded as panto records it: with the extension as its source")

	// Changing what Messages returned changes nothing.
	msgs[0].Content[0].Text = "tampered"
	require.Equal(t, "seed", h.Messages()[0].Content[0].Text)
}

// A replace wipes the prose, not the live sections (spec amendment 6):
// as panto does, the harness records each section the prompt held again
// right after a replace, in its order, with its owner as source — another
// extension's and the extension's own. With sdk.Bare it records nothing
// after it, and Edits says the replace was bare.
func TestReplaceKeepsTheLiveSections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := sdktest.New(t, &everything{}).WithSystem("seed").AddMessages(
		conversation.KeyedSystemMessage("tools:guidance", "Use bash.").WithSource("extension tools"))
	require.NoError(t, h.Host().SetSection(ctx, "mood", "calm"))
	require.NoError(t, h.Host().AddSystemMessage(ctx, "prose"))
	before := len(h.Messages())

	require.NoError(t, h.Host().ReplaceSystemMessage(ctx, "You are a pirate."))
	require.Equal(t, []string{"You are a pirate.", "Use bash.", "calm"}, h.Prompt())
	require.Equal(t, []conversation.Message{
		conversation.SystemMessage("You are a pirate.", conversation.ModeReplace).WithSource("extension everything"),
		conversation.KeyedSystemMessage("tools:guidance", "Use bash.").WithSource("extension tools"),
		conversation.KeyedSystemMessage("everything:mood", "calm").WithSource("extension everything"),
	}, h.Messages()[before:])
	require.Equal(t, []sdk.Section{{Key: "mood", Text: "calm", Source: "extension everything"}}, h.Sections())

	before = len(h.Messages())
	require.NoError(t, h.Host().ReplaceSystemMessage(ctx, "Answer yes or no.", sdk.Bare()))
	require.Equal(t, []string{"Answer yes or no."}, h.Prompt())
	require.Len(t, h.Messages(), before+1, "nothing after a bare replace")
	require.Empty(t, h.Sections())

	require.Equal(t, []sdktest.Edit{
		{Mode: conversation.ModeAppend, Key: "mood", Text: "calm"},
		{Mode: conversation.ModeAppend, Text: "prose"},
		{Mode: conversation.ModeReplace, Text: "You are a pirate."},
		{Mode: conversation.ModeReplace, Text: "Answer yes or no.", Bare: true},
	}, h.Edits(), "the sections recorded again are panto's, not the extension's edits")
}

func TestAddMessagesReplaceAndTurn(t *testing.T) {
	t.Parallel()
	ext := &everything{}
	h := sdktest.New(t, ext).WithSystem("old").AddMessages(conversation.SystemMessage("new", conversation.ModeReplace))
	require.Equal(t, []string{"new"}, h.Prompt())
	require.NoError(t, h.Turn("question", "answer"))
	require.Equal(t, []string{"before_turn question", "turn_end answer end_turn"}, ext.events)
	msgs := h.Messages()
	require.Len(t, msgs, 4)
	require.Equal(t, conversation.UserText("question"), msgs[2])
	require.Equal(t, conversation.AssistantText("answer"), msgs[3])
}

func TestCommands(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &everything{})
	var names []string
	for _, c := range h.Commands() {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"append", "replace", "fail"}, names)
	require.Equal(t, "everything", h.Info().Name)

	resp, err := h.Command("fail", "")
	require.EqualError(t, err, "it failed")
	require.Equal(t, "partial", resp.Output, "the response comes back with the error")

	_, err = h.Command("/nope", "x")
	require.EqualError(t, err, "sdktest: unknown command /nope")
}

func TestData(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &everything{})
	ctx := context.Background()
	require.NoError(t, h.Host().AppendData(ctx, map[string]int{"n": 1}))
	require.NoError(t, h.Host().AppendData(ctx, "two"))
	require.Equal(t, []json.RawMessage{json.RawMessage(`{"n":1}`), json.RawMessage(`"two"`)}, h.Data())
	require.ErrorContains(t, h.Host().AppendData(ctx, make(chan int)), "append data: encode")
	require.Len(t, h.Data(), 2)
	require.Empty(t, h.Messages(), "data is not a message")
}

func TestHostFuncsOverride(t *testing.T) {
	t.Parallel()
	full := errors.New("disk full")
	h := sdktest.New(t, &everything{run: func(ctx context.Context, h sdk.Host) error {
		return h.AddSystemMessage(ctx, "note")
	}}).WithHostFuncs(sdktest.HostFuncs{
		AddSystemMessage: func(context.Context, string) error { return full },
		SystemPrompt:     func(context.Context) ([]string, error) { return []string{"fake"}, nil },
	})
	require.ErrorIs(t, h.SessionStart(sdk.SessionStartEvent{}), full)
	require.Empty(t, h.Edits(), "an overridden method records nothing")
	prompt, err := h.Host().SystemPrompt(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"fake"}, prompt)
	// The methods not overridden keep recording.
	_, err = h.Command("replace", "r")
	require.NoError(t, err)
	require.Equal(t, []sdktest.Edit{{Mode: conversation.ModeReplace, Text: "r"}}, h.Edits())
}

func TestLogger(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &everything{run: func(_ context.Context, h sdk.Host) error {
		h.Logger().Info("hello from the hook", "n", 3)
		return nil
	}})
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	require.Contains(t, h.Log(), "[INFO]  everything: hello from the hook: n=3")
}

// The Host is safe to use from any goroutine, as panto's is.
func TestHostConcurrentUse(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &everything{})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Go(func() {
			errs <- h.Host().AddSystemMessage(context.Background(), fmt.Sprint(i))
			_, err := h.Host().SystemPrompt(context.Background())
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, h.Edits(), 20)
	require.Len(t, h.Prompt(), 20)
}

// fatalTB records Fatalf instead of stopping the test.
type fatalTB struct {
	testing.TB
	mu    sync.Mutex
	fatal []string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fatal = append(f.fatal, fmt.Sprintf(format, args...))
}

type badCommands struct {
	sdk.Base
	cmds []sdk.Command
}

func (b *badCommands) Commands() []sdk.Command { return b.cmds }

func TestNewRejectsCommandsPantoCannotRun(t *testing.T) {
	t.Parallel()
	run := func(context.Context, sdk.Host, sdk.CommandRequest) (sdk.CommandResponse, error) {
		return sdk.CommandResponse{}, nil
	}
	for _, tc := range []struct {
		name string
		cmds []sdk.Command
		want string
	}{
		{"empty", []sdk.Command{{Name: "", Run: run}}, `sdktest: command "": a name is one word without the slash`},
		{"slash", []sdk.Command{{Name: "/go", Run: run}}, `sdktest: command "/go": a name is one word without the slash`},
		{"space", []sdk.Command{{Name: "go on", Run: run}}, `sdktest: command "go on": a name is one word without the slash`},
		{"no run", []sdk.Command{{Name: "go"}}, "sdktest: command /go has no Run"},
		{"twice", []sdk.Command{{Name: "go", Run: run}, {Name: "go", Run: run}}, "sdktest: command /go is declared twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tb := &fatalTB{TB: t}
			sdktest.New(tb, &badCommands{cmds: tc.cmds})
			require.Equal(t, []string{tc.want}, tb.fatal)
		})
	}
	tb := &fatalTB{TB: t}
	sdktest.New(tb, &badCommands{cmds: []sdk.Command{{Name: "go-on_2", Run: run}}})
	require.Empty(t, tb.fatal)
}

// A hook runs under the hook deadline, as in panto; one that misses it
// is an error.
func TestHookDeadline(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, &everything{run: func(ctx context.Context, _ sdk.Host) error {
		<-ctx.Done()
		return nil // a hook that hides the timeout is still late
	}}).WithHookTimeout(20 * time.Millisecond)
	err := h.BeforeTurn(sdk.BeforeTurnEvent{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.EqualError(t, err, "sdktest: BeforeTurn did not return within the 20ms hook deadline; panto would disable the extension: context deadline exceeded")

	h = sdktest.New(t, &slow{}).WithHookTimeout(20 * time.Millisecond)
	_, err = h.Command("wait", "")
	require.EqualError(t, err, "sdktest: /wait did not return within the 20ms hook deadline; panto would disable the extension: context deadline exceeded")
}

type slow struct{ sdk.Base }

func (slow) Commands() []sdk.Command {
	return []sdk.Command{{Name: "wait", Run: func(ctx context.Context, _ sdk.Host, _ sdk.CommandRequest) (sdk.CommandResponse, error) {
		<-ctx.Done()
		return sdk.CommandResponse{}, ctx.Err()
	}}}
}

// As over gRPC, a hook's context ends when the hook returns: a goroutine
// the hook starts must not keep using it.
func TestHookContextEndsWithTheHook(t *testing.T) {
	t.Parallel()
	var ctx context.Context
	var during error
	h := sdktest.New(t, &everything{run: func(c context.Context, _ sdk.Host) error {
		ctx, during = c, c.Err()
		return nil
	}})
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	require.NoError(t, during)
	require.ErrorIs(t, ctx.Err(), context.Canceled)
}
