package extension

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The bounds on extensions' questions (issue 15 item 9), against
// testdata/plugins/askplug, a real extension that misuses them.

var askplugOnce struct {
	sync.Once
	err error
}

// askPlug returns the path of askplug run under name (built once, then a
// symlink by that name: the name picks its behaviour and is its
// extension name).
func askPlug(t testing.TB, name string) string {
	t.Helper()
	bin := filepath.Join(pluginDir, "askplug")
	askplugOnce.Do(func() {
		out, err := exec.Command("go", "build", "-o", bin, "./testdata/plugins/askplug").CombinedOutput()
		if err != nil {
			askplugOnce.err = errors.New("build askplug: " + err.Error() + "\n" + string(out))
		}
	})
	require.NoError(t, askplugOnce.err)
	dir := t.TempDir()
	link := filepath.Join(dir, name)
	require.NoError(t, os.Symlink(bin, link))
	return link
}

// askUser is a fake user at the recorder: it counts the questions that
// reach it and how many are on the screen at once.
type askUser struct {
	mu      sync.Mutex
	asked   []Question
	open    int
	maxOpen int
	// answer answers one question once it is on the screen.
	answer func(ctx context.Context, q Question) (Answer, error)
}

func (u *askUser) ask(ctx context.Context, _ string, q Question) (Answer, error) {
	u.mu.Lock()
	u.asked = append(u.asked, q)
	u.open++
	u.maxOpen = max(u.maxOpen, u.open)
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.open--
		u.mu.Unlock()
	}()
	return u.answer(ctx, q)
}

func (u *askUser) most() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.maxOpen
}

// user makes u the user of h's recorder.
func (u *askUser) user(h *harness) {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	h.rec.answer = u.ask
}

func (u *askUser) questions() []Question {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Question(nil), u.asked...)
}

// 1,000 Confirms at once: the user sees one at a time, at most a few
// wait their turn, and the rest fail at once with an error the extension
// can test for (sdk.ErrTooManyQuestions).
func TestQuestionsOneAtATimeWithAShortQueue(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	u := &askUser{answer: func(ctx context.Context, q Question) (Answer, error) {
		select {
		case <-release:
			return Answer{Yes: true}, nil
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		}
	}}
	h := startHarness(t, nil, Spec{Path: askPlug(t, "askflood"), Source: "test"})
	u.user(h)
	e := h.ext(t, "askflood")
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.m.BeforeTurn(context.Background(), "go")
	}()
	waitFor(t, 20*time.Second, "the queue fills", func() bool {
		e.questions.mu.Lock()
		defer e.questions.mu.Unlock()
		return len(e.questions.queue) == MaxQueuedQuestions
	})
	time.Sleep(time.Second) // the other calls arrive and are refused
	close(release)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the hook did not return")
	}
	require.Empty(t, h.errs.String())
	data := h.rec.Data()
	require.Len(t, data, 1)
	var got struct {
		Answered int `json:"answered"`
		TooMany  int `json:"too_many"`
		Other    int `json:"other"`
	}
	require.NoError(t, json.Unmarshal(data[0].Data, &got))
	require.Equal(t, 1, u.most(), "one question on the screen at a time")
	require.Equal(t, 1000, got.Answered+got.TooMany+got.Other)
	require.Zero(t, got.Other)
	require.Equal(t, len(u.questions()), got.Answered, "each question the user saw was answered")
	require.GreaterOrEqual(t, got.TooMany, 990, "all but a few were refused at once")
}

// A hook that hangs while its extension keeps a question on the screen
// — two goroutines asking in turn, so one always is — is disabled in
// bounded time: the deadline stops for a few questions only.
func TestAHookThatHangsAskingIsDisabled(t *testing.T) {
	t.Parallel()
	u := &askUser{answer: func(ctx context.Context, q Question) (Answer, error) {
		<-ctx.Done() // nobody answers
		return Answer{}, ErrNoAnswer
	}}
	h := startHarness(t, func(o *Options) { o.HookTimeout = 300 * time.Millisecond }, Spec{Path: askPlug(t, "askhang"), Source: "test"})
	u.user(h)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.m.BeforeTurn(context.Background(), "go")
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the hook was never disabled")
	}
	require.Contains(t, h.errs.String(), "extension askhang disabled for this session: it did not answer within the hook deadline")
	require.LessOrEqual(t, u.most(), 1)
}

// A question's texts reach the session exactly as the extension sent
// them (the front end sanitizes); its Highlight too, less the parts that
// are empty or not in the text; its wait is capped.
func TestQuestionTextsArriveUnchanged(t *testing.T) {
	t.Parallel()
	u := &askUser{answer: func(_ context.Context, q Question) (Answer, error) {
		return Answer{Yes: true, Text: "x"}, nil
	}}
	h := startHarness(t, func(o *Options) { o.questionTime = time.Minute }, Spec{Path: askPlug(t, "asktexts"), Source: "test"})
	u.user(h)
	h.m.BeforeTurn(context.Background(), "go")
	require.Empty(t, h.errs.String())
	qs := u.questions()
	require.Len(t, qs, 3)
	title := "Run \x1b]52;c;aGk=\x07this?\r"
	for _, q := range qs {
		require.Equal(t, title, q.Title)
		require.LessOrEqual(t, q.Timeout, time.Minute, "a question waits at most the limit")
		require.Greater(t, q.Timeout, 50*time.Second)
	}
	require.Equal(t, AskConfirm, qs[0].Kind)
	require.Equal(t, "git status\x1b[2K\x1b[1G\nrm -rf ~ \u202e\u0085\u009b", qs[0].Message)
	require.Equal(t, []string{"rm -rf ~"}, qs[0].Highlight)
	require.Equal(t, []string{"\x1b[31mred\x1b[0m", "plain"}, qs[1].Options)
	require.Equal(t, []string{"red"}, qs[1].Highlight)
	require.Equal(t, "\x1bP+q\x1b\\", qs[2].Placeholder)
	require.Empty(t, qs[2].Highlight)
}

// An extension named panto (in any case), or with a newline, a space or
// a dot in its name, does not start: the error names the file.
func TestExtensionNamesFollowTheToolNameRule(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"panto", "PANTO", "Panto", "guard\npanto: all clear", "a b", "dot.ted"} {
		path := askPlug(t, name)
		h := startHarness(t, nil, Spec{Path: path, Source: "test"})
		require.Empty(t, h.m.Extensions(), "%q was loaded", name)
		errs := h.errs.String()
		require.Contains(t, errs, "panto: extension did not start: "+shownPath(path)+" (test): init: its name ", name)
		require.NotContains(t, errs, "\npanto: all clear", "no line of its poses as panto's")
		require.Contains(t, errs, "give it another name", name)
	}
	h := startHarness(t, nil, Spec{Path: askPlug(t, "pantomime"), Source: "test"})
	require.Equal(t, []string{"pantomime"}, h.m.Names(), h.errs.String())
}

// The queue: call order, a cap, and a caller that gives up leaves it.
func TestQuestionQueue(t *testing.T) {
	t.Parallel()
	var qs questions
	ctx := context.Background()
	first, err := qs.enter(ctx)
	require.NoError(t, err)
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	gaveUp, giveUp := context.WithCancel(ctx)
	for i := range MaxQueuedQuestions {
		c := ctx
		if i == 1 {
			c = gaveUp
		}
		wg.Go(func() {
			q, err := qs.enter(c)
			if err != nil {
				require.ErrorIs(t, err, ErrNoAnswer)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			qs.leave(q)
		})
		waitFor(t, 5*time.Second, "queued", func() bool {
			qs.mu.Lock()
			defer qs.mu.Unlock()
			return len(qs.queue) == i+1
		})
	}
	_, err = qs.enter(ctx)
	require.ErrorIs(t, err, ErrTooManyQuestions, "a fifth in the queue is refused at once")
	giveUp()
	waitFor(t, 5*time.Second, "left the queue", func() bool {
		qs.mu.Lock()
		defer qs.mu.Unlock()
		return len(qs.queue) == MaxQueuedQuestions-1
	})
	qs.leave(first)
	wg.Wait()
	require.Equal(t, []int{0, 2, 3}, order, "in call order, less the one that gave up")
	require.Nil(t, qs.current())
}

// The hook deadline stands still while a question is on the screen — for
// hookQuestionStops questions and the question limit in all.
func TestHookDeadlineStopsForAFewQuestions(t *testing.T) {
	t.Parallel()
	const d = 100 * time.Millisecond
	m := &Manager{opts: Options{HookTimeout: d, questionTime: time.Minute}}

	t.Run("one long question", func(t *testing.T) {
		t.Parallel()
		e := &Ext{}
		hctx, cancel := m.hookContext(context.Background(), e)
		defer cancel()
		q, _ := e.questions.enter(context.Background())
		time.Sleep(5 * d)
		require.NoError(t, hctx.Err(), "it stands still while the user reads")
		e.questions.leave(q)
		require.Eventually(t, func() bool { return timedOut(hctx) }, 30*d, d/10, "it runs again once answered")
	})

	t.Run("a question asked again and again", func(t *testing.T) {
		t.Parallel()
		e := &Ext{}
		hctx, cancel := m.hookContext(context.Background(), e)
		defer cancel()
		var asked atomic.Int32
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				q, _ := e.questions.enter(context.Background())
				asked.Add(1)
				time.Sleep(d * 3 / 2)
				e.questions.leave(q)
			}
		}()
		select {
		case <-hctx.Done():
		case <-time.After(time.Minute):
			t.Fatal("never ran out")
		}
		require.True(t, timedOut(hctx))
		require.LessOrEqual(t, int(asked.Load()), hookQuestionStops+2)
	})

	t.Run("the time in all", func(t *testing.T) {
		t.Parallel()
		m := &Manager{opts: Options{HookTimeout: d, questionTime: 4 * d}}
		e := &Ext{}
		hctx, cancel := m.hookContext(context.Background(), e)
		defer cancel()
		q, _ := e.questions.enter(context.Background())
		defer e.questions.leave(q)
		select {
		case <-hctx.Done():
		case <-time.After(time.Minute):
			t.Fatal("never ran out")
		}
		require.True(t, timedOut(hctx))
	})
}
