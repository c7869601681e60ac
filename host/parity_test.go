package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

// The same extension, run through sdk/sdktest and through the real host
// (the test binary started as the extension, over go-plugin), leaves the
// same prompt — its sections, their order and their sources included —,
// records the same edits (none for an unchanged section), and shows the
// same notices at the same levels: the harness applies panto's rules
// because both take them from one place (conversation's section rule,
// rules.NoticeLevel, rules.ProviderKeys).

// parityExtEnv makes the host's test binary serve parityExt instead of
// running the tests (see TestMain).
const parityExtEnv = "PANTO_HOST_TEST_PARITY_EXT"

func TestMain(m *testing.M) {
	if os.Getenv(parityExtEnv) == "1" {
		if err := sdk.Serve(&parityExt{}); err != nil {
			fmt.Fprintln(os.Stderr, "parity extension:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// parityExt sets, replaces in place and removes sections, adds and
// replaces system blocks (bare, and keeping its live section), renders a
// variable, tries an invalid key and a
// provider key as {{env.NAME}} (never rendered, set or not), and notifies at known and unknown levels, telling what
// Host.Sections returns.
type parityExt struct{ sdk.Base }

var (
	_ sdk.SessionStarter = (*parityExt)(nil)
	_ sdk.BeforeTurner   = (*parityExt)(nil)
)

func (*parityExt) Describe() sdk.Info { return sdk.Info{Name: "parity"} }

func (*parityExt) SessionStart(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	return sdk.SessionStartResponse{}, parityRun(ctx, h, []func() error{
		func() error { return h.SetSection(ctx, "tools", "Use the tools on {{os}}.") },
		func() error { return h.SetSection(ctx, "env", "cwd is /x") },
		func() error { return h.AddSystemMessage(ctx, "an unkeyed block") },
		func() error { return h.SetSection(ctx, "tools", "Use the tools well.") }, // in place
		func() error { return h.SetSection(ctx, "env", "cwd is /x") },             // unchanged: nothing recorded
		func() error { return h.RemoveSection(ctx, "absent") },                    // nothing there: nothing recorded
		func() error { return h.Notify(ctx, "shouting", "loud") },
		func() error { return h.Notify(ctx, "warning", "careful") },
		func() error { return parityTellSections(ctx, h, "info") },
	})
}

func (*parityExt) BeforeTurn(ctx context.Context, h sdk.Host, _ sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	return sdk.BeforeTurnResponse{}, parityRun(ctx, h, []func() error{
		func() error { return h.ReplaceSystemMessage(ctx, "Bare start.", sdk.Bare()) }, // sections go too
		func() error { return h.SetSection(ctx, "env", "cwd is /w") },
		func() error { return h.ReplaceSystemMessage(ctx, "You are replaced.") }, // env is recorded again after it
		func() error { return h.SetSection(ctx, "env", "cwd is /y") },            // in place
		func() error { return h.SetSection(ctx, "late", "temporary") },
		func() error { return h.AddSystemMessage(ctx, "after the replace") },
		func() error { return h.SetSection(ctx, "tools", "tools again") },
		func() error { return h.RemoveSection(ctx, "late") },
		func() error { return h.SetSection(ctx, "env", "cwd is /z") }, // in place, before tools
		func() error { return parityFails(ctx, h, h.SetSection(ctx, "bad key", "x")) },
		func() error { return parityFails(ctx, h, h.AddSystemMessage(ctx, "key: {{env.ANTHROPIC_API_KEY}}")) },
		func() error { return h.Notify(ctx, "", "no level") },
		func() error { return parityTellSections(ctx, h, "debug") },
	})
}

// parityRun runs the steps, stopping at the first error.
func parityRun(ctx context.Context, h sdk.Host, steps []func() error) error {
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return nil
}

// parityFails notifies whether err is the refusal it must be.
func parityFails(ctx context.Context, h sdk.Host, err error) error {
	if err == nil {
		return h.Notify(ctx, "error", "accepted")
	}
	return h.Notify(ctx, "error", "refused")
}

// parityTellSections notifies, at level, the sections Host.Sections gives.
func parityTellSections(ctx context.Context, h sdk.Host, level string) error {
	secs, err := h.Sections(ctx)
	if err != nil {
		return err
	}
	b, err := json.Marshal(secs)
	if err != nil {
		return err
	}
	return h.Notify(ctx, level, "sections "+string(b))
}

// parityOutcome is what the comparison looks at.
type parityOutcome struct {
	Prompt  []conversation.SystemText // Index cleared: the two record other messages between
	Edits   []conversation.Block      // the extension's system blocks, as recorded
	Notices []sdktest.Notice
}

func parityOf(msgs []conversation.Message, notices []sdktest.Notice) parityOutcome {
	var o parityOutcome
	for _, b := range conversation.EffectiveSystem(msgs) {
		b.Index = 0
		o.Prompt = append(o.Prompt, b)
	}
	for _, m := range msgs {
		if m.Role != conversation.RoleSystem {
			continue
		}
		for _, b := range m.Content {
			if b.Type == conversation.TypeSystem && b.Source == "extension parity" {
				o.Edits = append(o.Edits, conversation.Block{Type: b.Type, Text: b.Text, Mode: b.Mode, Key: b.Key, Source: b.Source})
			}
		}
	}
	o.Notices = notices
	return o
}

func TestSDKTestAndHostApplyTheSameRules(t *testing.T) {
	// Not parallel: a provider key is set, to show neither renders it.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-parity")
	seed := conversation.SystemMessage("seed", conversation.ModeAppend).WithSource("block 1")

	// Through the harness.
	h := sdktest.New(t, &parityExt{}).AddMessages(seed)
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	require.NoError(t, h.Turn("go", "ok"))
	viaHarness := parityOf(h.Messages(), h.Notices())

	// Through the host.
	self, err := os.Executable()
	require.NoError(t, err)
	model := &script{replies: []conversation.Message{conversation.AssistantText("ok")}}
	cfg := config(filepath.Join(t.TempDir(), "s.jsonl"), "seed")
	cfg.Provider = model
	cfg.CWD = t.TempDir() // the extension starts in it
	cfg.Vars = map[string]string{"os": runtime.GOOS}
	cfg.Env = rules.Env(os.Getenv)
	cfg.Extensions = []extension.Spec{{Path: self, Source: "test", Environ: append(os.Environ(), parityExtEnv+"=1")}}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	var notices []sdktest.Notice
	events := s.Subscribe(t.Context())
	// collect gathers the extension's notices up to the first event that
	// until accepts, and returns that event.
	collect := func(until func(Event) bool) Event {
		t.Helper()
		for ev := range events {
			if n, ok := ev.(Notice); ok && n.By == "parity" {
				notices = append(notices, sdktest.Notice{Level: string(n.Level), Text: n.Text})
			}
			if until(ev) {
				return ev
			}
		}
		t.Fatal("the events ended early")
		return nil
	}
	collect(func(ev Event) bool { _, ok := ev.(Opened); return ok })
	require.Len(t, notices, 3, "session_start's notices: %v", notices)
	require.NoError(t, s.Turn(context.Background(), "go"))
	last := collect(func(ev Event) bool { _, ok := ev.(TurnEnd); return ok })
	require.NoError(t, last.(TurnEnd).Err)
	viaHost := parityOf(s.Messages(), notices)

	require.Equal(t, viaHost, viaHarness, "the harness and the host disagree")

	// And both are what the rules say.
	src := "extension parity"
	require.Equal(t, []conversation.SystemText{
		{Text: "You are replaced.", Source: src},
		{Text: "cwd is /z", Key: "parity:env", Source: src},
		{Text: "after the replace", Source: src},
		{Text: "tools again", Key: "parity:tools", Source: src},
	}, viaHost.Prompt)
	require.Len(t, viaHost.Edits, 14, "an unchanged section and the removal of an absent one record nothing: %v", viaHost.Edits)
	require.Equal(t, []conversation.Block{
		{Type: conversation.TypeSystem, Text: "Bare start.", Mode: conversation.ModeReplace, Source: src},
		{Type: conversation.TypeSystem, Text: "cwd is /w", Mode: conversation.ModeAppend, Key: "parity:env", Source: src},
		{Type: conversation.TypeSystem, Text: "You are replaced.", Mode: conversation.ModeReplace, Source: src},
		{Type: conversation.TypeSystem, Text: "cwd is /w", Mode: conversation.ModeAppend, Key: "parity:env", Source: src},
	}, viaHost.Edits[4:8], "nothing after the bare replace; the live section again right after the other")
	require.Equal(t, []sdktest.Notice{
		{Level: "info", Text: "loud"},
		{Level: "warning", Text: "careful"},
		{Level: "info", Text: `sections [{"Key":"tools","Text":"Use the tools well.","Source":"extension parity"},{"Key":"env","Text":"cwd is /x","Source":"extension parity"}]`},
		{Level: "error", Text: "refused"},
		{Level: "error", Text: "refused"},
		{Level: "info", Text: "no level"},
		{Level: "info", Text: `sections [{"Key":"env","Text":"cwd is /z","Source":"extension parity"},{"Key":"tools","Text":"tools again","Source":"extension parity"}]`},
	}, viaHost.Notices)
}
