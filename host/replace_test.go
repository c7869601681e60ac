package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// Spec amendment 6: a replace wipes prose, not live sections. After an
// extension's replace that is not bare, the session records each section
// whose owner is loaded and still holds it again, right after the
// replace, in its earlier order, with its owner as source; after a bare
// one it records nothing. The derivation is conversation's, unchanged.

// replaceBy records an extension's replace through the recorder, as the
// extension host does.
func replaceBy(t *testing.T, s *Session, by, text string, bare bool) {
	t.Helper()
	require.NoError(t, recorder{s}.EditSystem(by, extension.Edit{Mode: conversation.ModeReplace, Text: text, Bare: bare}))
}

// idsFrom returns the log ids of the session's message whose text is
// text and of the n messages after it.
func idsFrom(t *testing.T, s *Session, text string, n int) []string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.conv.Messages {
		if len(m.Content) > 0 && m.Content[0].Text == text {
			require.LessOrEqual(t, i+n+1, len(s.msgIDs))
			return append([]string(nil), s.msgIDs[i:i+n+1]...)
		}
	}
	t.Fatalf("no message %q", text)
	return nil
}

// Two extensions, each holding sections, interleaved in the prompt; a
// third extension's replace: its text, then each live section again, in
// the order they stood, each with its owner as source and as who the
// front ends and the extensions are told changed it. The prose (an
// unkeyed block, the configured prompt) is gone. The config window is
// untouched, so the next resume with unchanged files records nothing but
// its lifecycle entry.
func TestReplaceRecordsTheLiveSectionsAgain(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	exts := guidance("tools", "env", "persona")
	s := open(t, path, exts, "seed", "more")
	require.NoError(t, recorder{s}.EditSystem("env", extension.Edit{Mode: conversation.ModeAppend, Text: "a note"}))
	before := systemLog(t, path)
	events := s.Subscribe(t.Context())
	changes := len(exts.changes)

	replaceBy(t, s, "persona", "You are a pirate.", false)
	require.Equal(t, []systemLine{
		{Mode: conversation.ModeReplace, Text: "You are a pirate.", Source: "extension persona"},
		{Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "Use the tools of tools.", Source: "extension tools"},
		{Mode: conversation.ModeAppend, Key: "env:guidance", Text: "Use the tools of env.", Source: "extension env"},
		{Mode: conversation.ModeAppend, Key: "persona:guidance", Text: "Use the tools of persona.", Source: "extension persona"},
		{Mode: conversation.ModeAppend, Key: "tools:env", Text: "cwd /p", Source: "extension tools"},
		{Mode: conversation.ModeAppend, Key: "env:env", Text: "cwd /p", Source: "extension env"},
		{Mode: conversation.ModeAppend, Key: "persona:env", Text: "cwd /p", Source: "extension persona"},
	}, systemLog(t, path)[len(before):], "the replacer's own sections are live too")
	require.Equal(t, []string{"You are a pirate.",
		"Use the tools of tools.", "Use the tools of env.", "Use the tools of persona.", "cwd /p", "cwd /p", "cwd /p",
	}, texts(s.EffectiveSystem()), "the prose is gone, the sections stay where they stood")

	var by []string
	for len(by) < 7 {
		ch := waitEvent[SystemChanged](t, events)
		if ch.By+" "+ch.Key == "persona " || len(by) > 0 { // what Open emitted comes first
			by = append(by, ch.By+" "+ch.Key)
		}
	}
	want := []string{"persona ", "tools tools:guidance", "env env:guidance", "persona persona:guidance",
		"tools tools:env", "env env:env", "persona persona:env"}
	require.Equal(t, want, by, "the front ends are told, each by its owner")
	by = nil
	for _, ch := range exts.changes[changes:] {
		by = append(by, ch.By+" "+ch.Key)
	}
	require.Equal(t, want, by, "and the extensions")

	// The config window is the configured blocks still: the sections came
	// after the extension's replace, which is no anchor (amendment 3).
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	require.Equal(t, []string{"seed", "more"}, ConfigWindow(log.Entries, nil))
	require.NoError(t, s.Close(context.Background()))

	// A no-op resume stays a no-op: the lifecycle entry alone.
	entries := len(systemLog(t, path))
	s = open(t, path, guidance("tools", "env", "persona"), "seed", "more")
	require.False(t, s.Info().Reseeded)
	require.Equal(t, []systemLine{{Lifecycle: sessionlog.LifecycleResumed}}, systemLog(t, path)[entries:])
	require.Equal(t, []string{"You are a pirate.",
		"Use the tools of tools.", "Use the tools of env.", "Use the tools of persona.", "cwd /p", "cwd /p", "cwd /p",
	}, texts(s.EffectiveSystem()))
}

// A bare replace is the text alone: nothing is recorded after it, and
// the sections come back only when their extensions set them again.
func TestBareReplaceRecordsNothingAfterIt(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	s := open(t, path, guidance("tools"), "seed")
	before := len(systemLog(t, path))
	replaceBy(t, s, "persona", "Answer yes or no.", true)
	require.Equal(t, []systemLine{
		{Mode: conversation.ModeReplace, Text: "Answer yes or no.", Source: "extension persona"},
	}, systemLog(t, path)[before:])
	require.Equal(t, []string{"Answer yes or no."}, texts(s.EffectiveSystem()))
	require.Empty(t, recorder{s}.Sections("tools"))

	// An append is never followed by anything, bare or not.
	require.NoError(t, recorder{s}.EditSystem("persona", extension.Edit{Mode: conversation.ModeAppend, Text: "Briefly.", Bare: true}))
	require.NoError(t, recorder{s}.EditSystem("persona", extension.Edit{Mode: conversation.ModeAppend, Text: "Kindly."}))
	require.Equal(t, []string{"Answer yes or no.", "Briefly.", "Kindly."}, texts(s.EffectiveSystem()))
}

// Only live sections are recorded again: not those whose owner is not
// loaded (a section the prompt holds for an extension gone), nor those
// of an extension disabled mid-session whose removal has not been
// recorded yet; and a replace with no live section records itself alone.
func TestReplaceSkipsSectionsOfExtensionsNotLoaded(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	exts := guidance("tools", "env")
	s := open(t, path, exts, "seed")
	require.NoError(t, recorder{s}.SetSection("ghost", "notes", "from an extension not loaded"))
	exts.Disable([]string{"env"}) // disabled: its removal not recorded yet
	require.Equal(t, []string{"seed", "Use the tools of tools.", "Use the tools of env.", "cwd /p", "cwd /p", "from an extension not loaded"},
		texts(s.EffectiveSystem()))

	before := len(systemLog(t, path))
	replaceBy(t, s, "tools", "You are terse.", false)
	require.Equal(t, []systemLine{
		{Mode: conversation.ModeReplace, Text: "You are terse.", Source: "extension tools"},
		{Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "Use the tools of tools.", Source: "extension tools"},
		{Mode: conversation.ModeAppend, Key: "tools:env", Text: "cwd /p", Source: "extension tools"},
	}, systemLog(t, path)[before:], "env is disabled and ghost not loaded: theirs are not recorded again")

	// Nothing live: the replace alone.
	exts.Disable([]string{"tools"})
	before = len(systemLog(t, path))
	replaceBy(t, s, "persona", "Alone.", false)
	require.Equal(t, []systemLine{{Mode: conversation.ModeReplace, Text: "Alone.", Source: "extension persona"}}, systemLog(t, path)[before:])

	// In memory (no log, no extensions) the same rule: nothing is loaded.
	mem, err := Open(context.Background(), config("", "seed"))
	require.NoError(t, err)
	t.Cleanup(func() { mem.Close(context.Background()) })
	require.NoError(t, recorder{mem}.SetSection("ghost", "notes", "x"))
	replaceBy(t, mem, "persona", "Alone.", false)
	require.Equal(t, []string{"Alone."}, texts(mem.EffectiveSystem()))
}

// The prompt as of any entry is the derivation over the path to it,
// unchanged: as of the replace itself, the replace's text alone; as of
// each section recorded again, the sections so far; as of the last, the
// whole. Before the replace, the prompt as it was.
func TestPromptAtBetweenTheReplaceAndItsSections(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	s := open(t, path, guidance("tools", "env"), "seed")
	prior := s.EffectiveSystem()
	replaceBy(t, s, "persona", "You are a pirate.", false)
	ids := idsFrom(t, s, "You are a pirate.", 4)

	wants := [][]string{
		{"You are a pirate."},
		{"You are a pirate.", "Use the tools of tools."},
		{"You are a pirate.", "Use the tools of tools.", "Use the tools of env."},
		{"You are a pirate.", "Use the tools of tools.", "Use the tools of env.", "cwd /p"},
		{"You are a pirate.", "Use the tools of tools.", "Use the tools of env.", "cwd /p", "cwd /p"},
	}
	for i, id := range ids {
		got, err := s.PromptAt(id)
		require.NoError(t, err)
		require.Equal(t, wants[i], texts(got), "as of entry %d after the replace", i)
	}
	require.Equal(t, wants[4], texts(s.EffectiveSystem()))

	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	var beforeReplace string
	for i, e := range log.Entries {
		if e.ID == ids[0] {
			beforeReplace = log.Entries[i-1].ID
		}
	}
	got, err := s.PromptAt(beforeReplace)
	require.NoError(t, err)
	require.Equal(t, texts(prior), texts(got))
}

// A move to before the replace continues under the prompt as it was
// there; a move to after the sections recorded again (a message that
// followed) under the persona with every section; a move to the replace
// entry itself under the derivation there — the persona alone — kept
// current as every move is: the tool guidance is recorded again, the
// other sections come back as their extensions set them.
func TestMoveAroundAReplace(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	model := &script{replies: []conversation.Message{
		conversation.AssistantText("a1"), conversation.AssistantText("a2"),
		conversation.AssistantText("a3"), conversation.AssistantText("a4"), conversation.AssistantText("a5"),
	}}
	cfg := config(path, "seed")
	cfg.Provider, cfg.startExtensions = model, guidance("tools", "env").start
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	ctx := context.Background()
	sections := []string{"Use the tools of tools.", "Use the tools of env.", "cwd /p", "cwd /p"}
	require.NoError(t, end(t, turn(ctx, s, "one")).Err)
	a1 := msgID(t, s, "a1")
	replaceBy(t, s, "persona", "You are a pirate.", false)
	replace := idsFrom(t, s, "You are a pirate.", 0)[0]
	require.NoError(t, end(t, turn(ctx, s, "two")).Err)
	require.Equal(t, append([]string{"You are a pirate."}, sections...), model.lastSystem(),
		"the request after the replace still has the tools' guidance")
	a2 := msgID(t, s, "a2")

	// Before the replace.
	_, err = s.MoveTo(ctx, a1, MoveOptions{})
	require.NoError(t, err)
	require.NoError(t, end(t, turn(ctx, s, "three")).Err)
	require.Equal(t, append([]string{"seed"}, sections...), model.lastSystem())

	// After it.
	_, err = s.MoveTo(ctx, a2, MoveOptions{})
	require.NoError(t, err)
	require.NoError(t, end(t, turn(ctx, s, "four")).Err)
	require.Equal(t, append([]string{"You are a pirate."}, sections...), model.lastSystem())
	require.Equal(t, []string{"user: one", "assistant: a1", "user: two", "assistant: a2", "user: four"}, model.lastMessages())

	// The replace entry itself: the derivation there, and the guidance
	// the move records again.
	_, err = s.MoveTo(ctx, replace, MoveOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"You are a pirate.", "Use the tools of tools.", "Use the tools of env."}, texts(s.EffectiveSystem()))
	require.NoError(t, end(t, turn(ctx, s, "five")).Err)
	require.Equal(t, []string{"user: one", "assistant: a1", "user: five"}, model.lastMessages())
}

// A log written before amendment 6 — an extension's replace with no
// section after it — reads back as it was written: the derivation did
// not change, only what a replace now records.
func TestALogFromBeforeReadsBackUnchanged(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	w, _, err := sessionlog.Open(path)
	require.NoError(t, err)
	_, err = w.Append(
		sessionlog.MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend).WithSource("block 1")),
		sessionlog.LifecycleEntry(sessionlog.LifecycleStarted, false, []string{"tools", "persona"}),
		sessionlog.MessageEntry(conversation.KeyedSystemMessage("tools:guidance", "Use the tools of tools.").WithSource("extension tools")),
		sessionlog.MessageEntry(conversation.SystemMessage("You are a pirate.", conversation.ModeReplace).WithSource("extension persona")),
	)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	got, err := PromptAt(log.Tree(), log.Entries[len(log.Entries)-1].ID)
	require.NoError(t, err)
	require.Equal(t, []string{"You are a pirate."}, texts(got))

	s, err := Open(context.Background(), func() Config { c := config(path, "seed"); c.Log.ReadOnly = true; return c }())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	require.Equal(t, []string{"You are a pirate."}, texts(s.EffectiveSystem()))
}
