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
