package host

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// nextQuestion waits for the session's next Question event.
func nextQuestion(t *testing.T, events <-chan Event) Question {
	t.Helper()
	for {
		select {
		case ev := <-events:
			if q, ok := ev.(Question); ok {
				return q
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no question")
		}
	}
}

func TestAskWithNobodyToAskNeverWaits(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, &script{})
	ctx := context.Background()
	for _, k := range []extension.QuestionKind{extension.AskConfirm, extension.AskSelect, extension.AskInput} {
		_, err := s.ask(ctx, "x", extension.Question{Kind: k, Options: []string{"a"}, Timeout: time.Hour})
		require.ErrorIs(t, err, ErrNoUser, k)
	}
	s.confirm = "yes"
	a, err := s.ask(ctx, "x", extension.Question{Kind: extension.AskConfirm})
	require.NoError(t, err)
	require.True(t, a.Yes)
	_, err = s.ask(ctx, "x", extension.Question{Kind: extension.AskInput})
	require.ErrorIs(t, err, ErrNoUser, "the default answers confirms only")
}

func TestAskInteractive(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, &script{})
	events := s.Subscribe(t.Context())
	s.interactive.Store(true)
	ctx := context.Background()
	type result struct {
		a   extension.Answer
		err error
	}
	ask := func(q extension.Question) <-chan result {
		ch := make(chan result, 1)
		go func() {
			a, err := s.ask(ctx, "guard", q)
			ch <- result{a, err}
		}()
		return ch
	}

	// Answered.
	got := ask(extension.Question{Kind: extension.AskSelect, Title: "pick", Options: []string{"a", "b"}, Timeout: time.Minute})
	q := nextQuestion(t, events)
	require.Equal(t, "guard", q.By)
	require.Equal(t, []string{"a", "b"}, q.Options)
	require.WithinDuration(t, time.Now().Add(time.Minute), q.Deadline, 5*time.Second)
	q.Answer(extension.Answer{Index: 1})
	q.Answer(extension.Answer{Index: 0}) // a second answer is ignored
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, 1, r.a.Index)

	// Dismissed.
	got = ask(extension.Question{Kind: extension.AskInput, Timeout: time.Minute})
	nextQuestion(t, events).Dismiss()
	require.ErrorIs(t, (<-got).err, ErrDismissed)

	// Not answered in time: withdrawn, and the front end is told.
	got = ask(extension.Question{Kind: extension.AskConfirm, Timeout: 50 * time.Millisecond})
	q = nextQuestion(t, events)
	require.ErrorIs(t, (<-got).err, ErrNoAnswer)
	select {
	case ev := <-events:
		c, ok := ev.(QuestionClosed)
		require.True(t, ok, "%T", ev)
		require.Equal(t, q.ID, c.ID)
	case <-time.After(10 * time.Second):
		t.Fatal("no QuestionClosed")
	}
	q.Answer(extension.Answer{Yes: true}) // too late: ignored, never blocks
}

func TestNotifyLevels(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, &script{})
	events := s.Subscribe(t.Context())
	s.notify("guard", "warning", "careful")
	s.notify("guard", "shouting", "loud")
	s.setStatus("guard", "k", "1 blocked")
	var got []Event
	for len(got) < 3 {
		select {
		case ev := <-events:
			switch ev.(type) {
			case Notice, Status:
				got = append(got, ev)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("missing events")
		}
	}
	require.Equal(t, []Event{
		Notice{Level: NoticeWarning, Text: "careful", By: "guard"},
		Notice{Level: NoticeInfo, Text: "loud", By: "guard"},
		Status{By: "guard", Key: "k", Text: "1 blocked"},
	}, got)
}

func TestSetModelIsRecorded(t *testing.T) {
	t.Parallel()
	s, path := newSession(t, &script{})
	require.NoError(t, s.SetModel("other"))
	require.Equal(t, "other", s.Info().Model)
	require.NoError(t, s.SetModel("other"), "the model in use: nothing to record")
	require.Error(t, s.SetModel("  "))
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	var changes []string
	for _, e := range log.Entries {
		if e.ModelChange != nil {
			changes = append(changes, e.ModelChange.Model)
		}
	}
	require.Equal(t, []string{"m1", "other"}, changes)
}

// The user dismissing three of an extension's questions in a row mutes
// them for the session: the next fail at once, with ErrDismissed, and a
// notice says so once. A front end's own Dismiss (between turns, on
// quitting) does not count, nor does another extension's question; an
// answer starts the count again.
func TestAskMutedAfterTheUserDismissesThreeInARow(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, &script{})
	events := s.Subscribe(t.Context())
	s.interactive.Store(true)
	ask := func(by string, close func(Question)) error {
		t.Helper()
		got := make(chan error, 1)
		go func() {
			_, err := s.ask(context.Background(), by, extension.Question{Kind: extension.AskConfirm, Timeout: time.Minute})
			got <- err
		}()
		close(nextQuestion(t, events))
		return <-got
	}
	byUser := func(q Question) { q.DismissByUser() }
	for range 5 {
		require.ErrorIs(t, ask("nag", Question.Dismiss), ErrDismissed, "a front end's dismissal does not count")
	}
	require.ErrorIs(t, ask("nag", byUser), ErrDismissed)
	require.ErrorIs(t, ask("nag", byUser), ErrDismissed)
	require.NoError(t, ask("nag", func(q Question) { q.Answer(extension.Answer{}) }), "an answer starts the count again")
	require.ErrorIs(t, ask("nag", byUser), ErrDismissed)
	require.ErrorIs(t, ask("nag", byUser), ErrDismissed)
	require.ErrorIs(t, ask("guard", byUser), ErrDismissed, "another extension's")
	require.ErrorIs(t, ask("nag", byUser), ErrDismissed)

	var told []string
	for deadline := time.After(10 * time.Second); len(told) == 0; {
		select {
		case ev := <-events:
			if n, ok := ev.(Notice); ok {
				told = append(told, n.Text)
			}
		case <-deadline:
			t.Fatal("no notice")
		}
	}
	require.Equal(t, []string{mutedNotice("nag")}, told)
	require.Contains(t, told[0], "no more questions from nag in this session: you dismissed 3 of them in a row")

	// Muted: failed at once, nothing shown.
	start := time.Now()
	_, err := s.ask(context.Background(), "nag", extension.Question{Kind: extension.AskConfirm, Timeout: time.Minute})
	require.ErrorIs(t, err, ErrDismissed)
	require.Less(t, time.Since(start), time.Second)
	select {
	case ev := <-events:
		_, isQ := ev.(Question)
		require.False(t, isQ, "a muted extension's question is not shown")
	default:
	}
	// The others are still asked.
	require.NoError(t, ask("guard", func(q Question) { q.Answer(extension.Answer{Yes: true}) }))
}

func TestMutesCountOnlyDismissalsInARowThatComeSoon(t *testing.T) {
	t.Parallel()
	var m mutes
	t0 := time.Now()
	require.False(t, m.dismissed("x", t0))
	require.False(t, m.dismissed("x", t0.Add(muteWindow+time.Second)), "too late: a new count")
	require.False(t, m.dismissed("x", t0.Add(muteWindow+2*time.Second)))
	require.True(t, m.dismissed("x", t0.Add(muteWindow+3*time.Second)))
	require.True(t, m.muted("x"))
	require.False(t, m.dismissed("x", t0.Add(muteWindow+4*time.Second)), "muted once")
	require.False(t, m.muted("y"))
}
