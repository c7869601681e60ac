package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sessionlog"
)

// The session's bounds on what extensions ask and tell (issue 15 item
// 9): no questions once it closes, notices rate-limited, the event queue
// bounded.

// A flood of notices from one extension: a burst is shown, the rest are
// dropped and counted, and panto says how many.
func TestNotifyFloodIsBounded(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, &script{})
	events := s.Subscribe(t.Context())
	start := time.Now()
	const sent = 10000
	for i := range sent {
		s.notify("flood", "info", fmt.Sprint("notice ", i))
	}
	elapsed := time.Since(start)
	shown, dropped := 0, 0
	deadline := time.After(10 * time.Second)
	for dropped == 0 {
		select {
		case ev := <-events:
			n, ok := ev.(Notice)
			if !ok {
				continue
			}
			switch {
			case n.By == "flood":
				shown++
			case n.By == "" && strings.Contains(n.Text, "notices from flood dropped"):
				_, err := fmt.Sscanf(n.Text, "%d notices", &dropped)
				require.NoError(t, err, n.Text)
				require.Equal(t, NoticeWarning, n.Level)
			}
		case <-deadline:
			t.Fatalf("no notice of the drops; %d shown", shown)
		}
	}
	require.LessOrEqual(t, shown, noticeBurst+1+int(elapsed.Seconds()*noticeRate), "a burst, then a few a second")
	require.Equal(t, sent, shown+dropped, "every notice shown or counted")
	// Later, at the rate allowed, notices pass again.
	time.Sleep(time.Second)
	s.notify("flood", "info", "after")
	s.notify("other", "info", "another extension is not held back")
	var got []string
	for len(got) < 2 {
		select {
		case ev := <-events:
			if n, ok := ev.(Notice); ok {
				got = append(got, n.By+":"+n.Text)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("missing notices; got %v", got)
		}
	}
	require.Equal(t, []string{"flood:after", "other:another extension is not held back"}, got)
}

// An extension has a few status segments; a segment's newest text
// replaces the one waiting to be shown.
func TestStatusFloodIsBounded(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, &script{})
	for i := range 1000 {
		s.setStatus("busy", "progress", fmt.Sprint(i))
		s.setStatus("busy", fmt.Sprint("key", i), "x")
	}
	var got []Status
	for _, ev := range closeAndRead(t, s) {
		if st, ok := ev.(Status); ok {
			got = append(got, st)
		}
	}
	require.Equal(t, maxStatusKeys, len(got), "one event per segment, at most %d segments", maxStatusKeys)
	require.Equal(t, Status{By: "busy", Key: "progress", Text: "999"}, got[0], "the newest text")
}

// However slowly the events are read, one extension's notices wait in
// a bounded queue; panto's own are never dropped. Once there is room
// again, panto says how many were dropped, before the next one.
func TestSubscriptionBoundsAnExtensionsNotices(t *testing.T) {
	t.Parallel()
	h := newHub()
	for i := range 1000 {
		h.emit(Notice{Level: NoticeInfo, Text: fmt.Sprint(i), By: "x"})
		h.emit(Notice{Level: NoticeInfo, Text: fmt.Sprint(i)})
	}
	events := h.subscribe(t.Context())
	var mine, pantos int
	for range maxQueuedNotices + 1000 {
		switch n := (<-events).(Notice); {
		case n.By == "x":
			mine++
		default:
			pantos++
		}
	}
	require.Equal(t, maxQueuedNotices, mine)
	require.Equal(t, 1000, pantos)
	h.emit(Notice{Text: "again", By: "x"})
	require.Equal(t, Notice{Level: NoticeWarning, Text: "936 notices from x dropped (more than 64 waited to be shown)"}, <-events)
	require.Equal(t, Notice{Text: "again", By: "x"}, <-events, "the count starts again once read")
}

// Once Close begins, a question on the screen is withdrawn and every new
// one fails at once with ErrClosing, however the extension asks again.
func TestCloseEndsQuestions(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, &script{})
	events := s.Subscribe(t.Context())
	s.interactive.Store(true)
	first := make(chan error, 1)
	go func() {
		_, err := s.ask(context.Background(), "loop", extension.Question{Kind: extension.AskConfirm, Title: "again?", Timeout: time.Hour})
		first <- err
	}()
	q := nextQuestion(t, events)
	require.NoError(t, s.Close(context.Background()))
	select {
	case err := <-first:
		require.ErrorIs(t, err, ErrClosing)
	case <-time.After(10 * time.Second):
		t.Fatal("the question on the screen was not withdrawn")
	}
	var closed *QuestionClosed
	for ev := range events {
		if c, ok := ev.(QuestionClosed); ok {
			closed = &c
		}
	}
	require.NotNil(t, closed)
	require.Equal(t, q.ID, closed.ID)
	require.ErrorIs(t, closed.Err, ErrClosing)
	for range 100 {
		_, err := s.ask(context.Background(), "loop", extension.Question{Kind: extension.AskConfirm, Timeout: time.Hour})
		require.ErrorIs(t, err, ErrClosing)
	}
	s.confirm = "yes"
	s.interactive.Store(false)
	_, err := s.ask(context.Background(), "loop", extension.Question{Kind: extension.AskConfirm})
	require.ErrorIs(t, err, ErrClosing, "not even a configured default answers")
}

var askplug struct {
	sync.Once
	path string
	err  error
}

// askPlugin builds host/extension's test extension askplug once and
// returns a symlink to it named name (its behaviour and its name).
func askPlugin(t *testing.T, name string) string {
	t.Helper()
	askplug.Do(func() {
		dir, err := os.MkdirTemp("", "panto-host-askplug")
		if err != nil {
			askplug.err = err
			return
		}
		askplug.path = filepath.Join(dir, "askplug")
		out, err := exec.Command("go", "build", "-o", askplug.path, "./extension/testdata/plugins/askplug").CombinedOutput()
		if err != nil {
			askplug.err = fmt.Errorf("build askplug: %v\n%s", err, out)
		}
	})
	require.NoError(t, askplug.err)
	link := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Symlink(askplug.path, link))
	return link
}

// A session whose extensions ask in a loop, and ask again in
// session_end, closes in bounded time with nobody answering: the loop
// gets ErrClosing at once, and so does session_end's Confirm.
func TestCloseIsBoundedWhileExtensionsAsk(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := Open(context.Background(), Config{
		Log: Log{Path: path}, CWD: t.TempDir(), Provider: &script{}, ProviderName: "script", Model: Model{Name: "m1"},
		Prompt:      func(rules.Vars) (Prompt, error) { return Prompt{Blocks: []PromptBlock{{Text: "seed"}}}, nil },
		Extensions:  []extension.Spec{{Path: askPlugin(t, "askloop"), Source: "test"}, {Path: askPlugin(t, "askend"), Source: "test"}},
		Interactive: true,
	})
	require.NoError(t, err)
	events := s.Subscribe(t.Context())
	q := nextQuestion(t, events) // askloop's, on the screen; nobody answers
	require.Equal(t, "askloop", q.By)
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("Close did not finish")
	}
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	var data []json.RawMessage
	for _, e := range log.Entries {
		if e.ExtensionData != nil && e.ExtensionData.Extension == "askend" {
			data = append(data, e.ExtensionData.Data)
		}
	}
	require.Len(t, data, 1)
	var end struct {
		Error   string `json:"error"`
		Closing bool   `json:"closing"`
	}
	require.NoError(t, json.Unmarshal(data[0], &end))
	require.True(t, end.Closing, "session_end's Confirm got sdk.ErrClosing: %s", end.Error)
	require.Contains(t, end.Error, "the session is closing")
	for _, st := range s.ExtensionStops() {
		require.NotEqual(t, extension.StopKilled, st.Kind, "%s: %s", st.Name, st.Stop)
	}
}
