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

// panto's own sections (Prompt.Sections, the skills' index): recorded
// after the configured prompt, updated in place only when their text
// changed, never disposed of as an absent extension's, live across an
// extension's replace, and out of every extension's reach.

func openOwn(t *testing.T, path string, exts *fakeExtensions, index string) *Session {
	t.Helper()
	cfg := config(path, "seed")
	inner := cfg.Prompt
	cfg.Prompt = func(v rules.Vars) (Prompt, error) {
		p, err := inner(v)
		p.Sections = []PromptSection{{Key: "skills:index", Text: index, Source: "panto: skills index"}}
		return p, err
	}
	if exts != nil {
		cfg.startExtensions = exts.start
	}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	return s
}

func TestOwnSectionsRecordedOnceAndUpdatedInPlace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := openOwn(t, path, nil, "- pdf: PDFs")
	require.NoError(t, s.Close(context.Background()))
	first := systemLog(t, path)
	require.Equal(t, []systemLine{
		{Mode: conversation.ModeAppend, Text: "seed", Source: "block 1"},
		{Lifecycle: sessionlog.LifecycleStarted},
		{Mode: conversation.ModeAppend, Key: "skills:index", Text: "- pdf: PDFs", Source: "panto: skills index"},
	}, first)

	// Unchanged: nothing but the lifecycle entry; no extension called
	// skills is loaded, and the section stays.
	s = openOwn(t, path, guidance("tools"), "- pdf: PDFs")
	require.NoError(t, s.Close(context.Background()))
	after := systemLog(t, path)[len(first):]
	require.Equal(t, systemLine{Lifecycle: sessionlog.LifecycleResumed}, after[0])
	for _, l := range after {
		require.NotEqual(t, "skills:index", l.Key, "an unchanged index is not recorded again")
	}

	// Changed: one keyed append, which sets the section in place.
	n := len(systemLog(t, path))
	s = openOwn(t, path, nil, "- pdf: PDFs\n- xlsx: sheets")
	prompt := s.EffectiveSystem()
	require.NoError(t, s.Close(context.Background()))
	var updates []systemLine
	for _, l := range systemLog(t, path)[n:] {
		if l.Key == "skills:index" {
			updates = append(updates, l)
		}
	}
	require.Equal(t, []systemLine{{Mode: conversation.ModeAppend, Key: "skills:index", Text: "- pdf: PDFs\n- xlsx: sheets", Source: "panto: skills index"}}, updates)
	require.Equal(t, "seed", prompt[0].Text)
	require.Equal(t, "skills:index", prompt[1].Key, "in place: right after the seed, where it was")

	// None left: removed.
	s = openOwn(t, path, nil, "")
	prompt = s.EffectiveSystem()
	require.NoError(t, s.Close(context.Background()))
	require.Len(t, prompt, 1)
}

func TestOwnSectionsAreLiveAcrossAReplaceAndNoExtensionsToSet(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	exts := guidance("persona", "skills")
	s := openOwn(t, path, exts, "- pdf: PDFs")
	defer s.Close(context.Background())
	for _, b := range s.EffectiveSystem() {
		require.NotEqual(t, "skills:guidance", b.Key, "an extension named skills cannot set panto's sections")
	}
	replaceBy(t, s, "persona", "You are a pirate.", false)
	var keys []string
	for _, b := range s.EffectiveSystem() {
		keys = append(keys, b.Key)
	}
	require.Contains(t, keys, "skills:index")
}

// TurnWith: what panto adds is recorded as added blocks before what was
// typed, the typed text is what before_turn and Typed see, and a model
// given is this turn's only.
func TestTurnWithAddedBlocksAndModel(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("one"), conversation.AssistantText("two")}}
	s, _ := newSession(t, model)
	sub, stop := context.WithCancel(context.Background())
	defer stop()
	events := s.Subscribe(sub)
	require.NoError(t, s.TurnWith(context.Background(), TurnInput{
		Text:  "/review main.go",
		Added: []PromptBlock{{Text: "Review main.go.", Source: "user /u/prompts/review.md"}},
		Model: "m-fast",
	}))
	for ev := range events {
		if _, ok := ev.(TurnEnd); ok {
			break
		}
	}
	require.NoError(t, end(t, turn(context.Background(), s, "plain")).Err)
	msgs := s.Messages()
	var user conversation.Message
	for _, m := range msgs {
		if m.Role == conversation.RoleUser {
			user = m
			break
		}
	}
	require.Equal(t, []conversation.Block{
		conversation.AddedText("Review main.go.", "user /u/prompts/review.md"),
		conversation.Text("/review main.go"),
	}, user.Content)
	require.Equal(t, "/review main.go", user.Typed())
	require.Len(t, model.requests, 2)
	require.Equal(t, "m-fast", model.requests[0].Model)
	require.Equal(t, "m1", model.requests[1].Model, "the template's model is for its turn only")
}
