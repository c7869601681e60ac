package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// Host-level tests of what the session does with its extensions'
// sections, the prompt on resume and moves, with a fake extension host
// and a real log on disk: no binary.

// systemLine is a system entry as the tests compare it.
type systemLine struct {
	Mode       conversation.Mode
	Key, Text  string
	Source     string
	Lifecycle  sessionlog.LifecycleEvent
	ModelEntry bool
}

// systemLog returns the system, lifecycle and model_change entries of the
// log at path, in file order.
func systemLog(t *testing.T, path string) []systemLine {
	t.Helper()
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	var out []systemLine
	for _, e := range log.Entries {
		switch {
		case e.Lifecycle != nil:
			out = append(out, systemLine{Lifecycle: e.Lifecycle.Event})
		case e.Message != nil && e.Message.Role == conversation.RoleSystem:
			for _, b := range e.Message.Content {
				out = append(out, systemLine{Mode: b.Mode.Normalize(), Key: b.Key, Text: b.Text, Source: b.Source})
			}
		}
	}
	return out
}

// guidance returns a fake extension host whose extensions named each keep
// a guidance section, and set another in session_start.
func guidance(names ...string) *fakeExtensions {
	return &fakeExtensions{
		names: names,
		recordGuidance: func(rec extension.Recorder) {
			for _, n := range names {
				_ = rec.SetSection(n, extension.GuidanceKey, "Use the tools of "+n+".")
			}
		},
		sessionStart: func(_ context.Context, rec extension.Recorder, _ extension.SessionStart) {
			for _, n := range names {
				_ = rec.SetSection(n, "env", "cwd /p")
			}
		},
	}
}

// open opens the session at path with exts (nil: none) and the prompt
// blocks given.
func open(t *testing.T, path string, exts *fakeExtensions, blocks ...string) *Session {
	t.Helper()
	cfg := config(path, blocks...)
	if exts != nil {
		cfg.startExtensions = exts.start
	}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// The open order, on a fresh log: the configured prompt, the lifecycle
// entry (with the model), then each extension's tool guidance, then what
// session_start sets; a section set again with the same text is not
// recorded again, and the extensions hear of every change (by whom).
func TestOpenOrderAndSections(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	exts := guidance("tools")
	s := open(t, path, exts, "seed", "append")
	require.NoError(t, recorder{s}.SetSection("tools", "env", "cwd /p"), "unchanged: nothing recorded")
	require.Equal(t, []systemLine{
		{Mode: conversation.ModeAppend, Text: "seed", Source: "block 1"},
		{Mode: conversation.ModeAppend, Text: "append", Source: "block 2"},
		{Lifecycle: sessionlog.LifecycleStarted},
		{Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "Use the tools of tools.", Source: "extension tools"},
		{Mode: conversation.ModeAppend, Key: "tools:env", Text: "cwd /p", Source: "extension tools"},
	}, systemLog(t, path))
	require.Equal(t, []extension.Section{
		{Key: "guidance", Text: "Use the tools of tools.", Source: "extension tools"},
		{Key: "env", Text: "cwd /p", Source: "extension tools"},
	}, recorder{s}.Sections("tools"))
	var by []string
	for _, ch := range exts.changes {
		by = append(by, ch.By+" "+ch.Key)
	}
	require.Equal(t, []string{"panto ", "panto ", "tools tools:guidance", "tools tools:env"}, by)
}

// Sections go with their owner: on a resume without it, panto removes
// them (on its behalf, saying why), and those of an extension disabled
// mid-session go the same way; the others stay.
func TestSectionsOfAnExtensionGoneAreRemoved(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	s := open(t, path, guidance("tools", "env"), "seed")
	require.NoError(t, s.Close(context.Background()))

	s = open(t, path, guidance("tools"), "seed") // env is not loaded
	require.Equal(t, []string{"seed", "Use the tools of tools.", "cwd /p"}, texts(s.EffectiveSystem()))
	removed := systemLog(t, path)
	require.Contains(t, removed, systemLine{Mode: conversation.ModeAppend, Key: "env:guidance", Source: "panto: removed because extension env is not loaded"})
	require.Contains(t, removed, systemLine{Mode: conversation.ModeAppend, Key: "env:env", Source: "panto: removed because extension env is not loaded"})

	// Disabled mid-session (it crashed): the extension host asks panto to
	// take its sections out.
	require.NoError(t, recorder{s}.DisposeSections("tools", "extension tools was disabled (it crashed)"))
	require.Equal(t, []string{"seed"}, texts(s.EffectiveSystem()))
	require.Empty(t, recorder{s}.Sections("tools"))
	last := systemLog(t, path)
	require.Equal(t, systemLine{Mode: conversation.ModeAppend, Key: "tools:env", Source: "panto: removed because extension tools was disabled (it crashed)"}, last[len(last)-1])
}

// Resume reconciliation (spec amendments 2, 3 and 6): a persona's
// replace is followed at once by the live sections, recorded again, so an
// unchanged resume records nothing but its lifecycle entry — the
// sections come after the extension's replace, outside the config window
// — and the persona survives it; a changed file re-seeds — a replace and
// the appends — which wipes the prose, and the sections of the
// extensions still loaded are set again after it, so tools are never
// offered without their guidance.
func TestResumeReconciliation(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	s := open(t, path, guidance("tools"), "seed", "more")
	entries := len(systemLog(t, path))
	require.NoError(t, recorder{s}.EditSystem("persona", extension.Edit{Mode: conversation.ModeReplace, Text: "You are a pirate."}))
	require.Equal(t, []systemLine{
		{Mode: conversation.ModeReplace, Text: "You are a pirate.", Source: "extension persona"},
		{Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "Use the tools of tools.", Source: "extension tools"},
		{Mode: conversation.ModeAppend, Key: "tools:env", Text: "cwd /p", Source: "extension tools"},
	}, systemLog(t, path)[entries:], "the replace, then the live sections again, in their order")
	require.NoError(t, s.Close(context.Background()))
	entries = len(systemLog(t, path))

	// Unchanged: only the lifecycle entry; the persona's replace stands,
	// with the sections.
	s = open(t, path, guidance("tools"), "seed", "more")
	require.False(t, s.Info().Reseeded)
	after := systemLog(t, path)
	require.Equal(t, []systemLine{{Lifecycle: sessionlog.LifecycleResumed}}, after[entries:],
		"a no-op resume stays a no-op: the sections were recorded after the persona's replace")
	require.Equal(t, []string{"You are a pirate.", "Use the tools of tools.", "cwd /p"}, texts(s.EffectiveSystem()),
		"the persona's replace survives an unchanged resume")
	require.NoError(t, s.Close(context.Background()))
	entries = len(after)

	// Changed: a re-seed, then the live sections again.
	s = open(t, path, guidance("tools"), "new seed", "more")
	require.True(t, s.Info().Reseeded)
	require.Equal(t, []systemLine{
		{Mode: conversation.ModeReplace, Text: "new seed", Source: ReseedSource + "block 1"},
		{Mode: conversation.ModeAppend, Text: "more", Source: "block 2"},
		{Lifecycle: sessionlog.LifecycleResumed},
		{Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "Use the tools of tools.", Source: "extension tools"},
		{Mode: conversation.ModeAppend, Key: "tools:env", Text: "cwd /p", Source: "extension tools"},
	}, systemLog(t, path)[entries:])
	require.Equal(t, []string{"new seed", "more", "Use the tools of tools.", "cwd /p"}, texts(s.EffectiveSystem()))
	require.NoError(t, s.Close(context.Background()))

	// And the next unchanged resume is a no-op again (amendment 2).
	entries = len(systemLog(t, path))
	s = open(t, path, guidance("tools"), "new seed", "more")
	require.False(t, s.Info().Reseeded)
	require.Len(t, systemLog(t, path), entries+1, "the lifecycle entry alone")
}

// A move continues from an earlier entry under the prompt as it was
// there, kept current for what runs now: the sections of an extension
// no longer loaded are removed on the new path as well, the tool
// guidance is recorded there, and after_move's edits land on it.
func TestMoveKeepsSectionsCurrent(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	model := &script{replies: []conversation.Message{conversation.AssistantText("a1"), conversation.AssistantText("a2")}}
	cfg := config(path, "seed")
	cfg.Provider, cfg.startExtensions = model, guidance("tools", "env").start
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, end(t, turn(context.Background(), s, "one")).Err)
	reply := msgID(t, s, "a1")
	require.NoError(t, s.Close(context.Background()))

	// Resumed without env: its sections go; then a persona wipes the
	// whole prompt on this branch (a bare replace).
	exts := guidance("tools")
	moved := 0
	exts.afterMove = func(_ context.Context, rec extension.Recorder, mv extension.Move) {
		moved++
		require.Equal(t, reply, mv.To)
		require.NoError(t, rec.SetSection("tools", "where", "moved to "+mv.To[:8]))
	}
	cfg.Provider, cfg.startExtensions = model, exts.start
	s, err = Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	require.NoError(t, recorder{s}.EditSystem("persona", extension.Edit{Mode: conversation.ModeReplace, Text: "Be brief.", Bare: true}))
	require.Equal(t, []string{"Be brief."}, texts(s.EffectiveSystem()), "a bare replace: nothing recorded after it")

	events := s.Subscribe(t.Context())
	res, err := s.MoveTo(context.Background(), reply, MoveOptions{})
	require.NoError(t, err)
	require.Equal(t, reply, res.To)
	require.Equal(t, 1, moved)
	require.Equal(t, []string{"seed", "Use the tools of tools.", "cwd /p", "moved to " + reply[:8]}, texts(s.EffectiveSystem()),
		"the prompt as it was at the reply, without env's sections, with what after_move set")
	require.Equal(t, Moved{res}, waitEvent[Moved](t, events))

	// The next turn is sent under that prompt, from that point.
	require.NoError(t, end(t, turn(context.Background(), s, "two")).Err)
	require.Equal(t, []string{"seed", "Use the tools of tools.", "cwd /p", "moved to " + reply[:8]}, model.lastSystem())
	require.Equal(t, []string{"user: one", "assistant: a1", "user: two"}, model.lastMessages())
}
