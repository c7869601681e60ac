package extension

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/internal/pb"
)

// The user calls (API v2): an extension asks the user a question —
// Confirm, Select, Input — or tells them something — Notify, SetStatus.
// panto hands each to the session (the Recorder), which hands it to the
// front end.
//
// Questions are bounded, so that no extension can keep the user from
// their session:
//   - an extension has one question on the screen at a time; the next
//     ones wait their turn in call order, at most MaxQueuedQuestions of
//     them (one more fails at once with ErrTooManyQuestions);
//   - a question waits at most MaxQuestionTimeout, its turn included;
//   - a hook's deadline stops while a question of its extension is on the
//     screen, for at most hookQuestionStops questions and
//     MaxQuestionTimeout in all per hook: a hook that runs on past that —
//     it hangs with a question open, or asks again and again — is held
//     to the hook deadline, and the extension is disabled when it passes;
//   - once the session closes, the Recorder answers ErrClosing at once.

// QuestionKind says what an extension asks.
type QuestionKind string

// The kinds of question.
const (
	AskConfirm QuestionKind = "confirm"
	AskSelect  QuestionKind = "select"
	AskInput   QuestionKind = "input"
)

// Question is what an extension asks the user.
type Question struct {
	Kind           QuestionKind
	Title, Message string
	// Options are a select's choices.
	Options []string
	// Placeholder is an input's hint.
	Placeholder string
	// Highlight are the parts of the question's text it is about, for a
	// front end to highlight (see host.Question): each occurs in the
	// Title, the Message or (a select's) an option, at most maxHighlights
	// of them.
	Highlight []string
	// Timeout bounds the wait; 0 means DefaultQuestionTimeout.
	Timeout time.Duration
	// ToolCall is the id of the tool call the question is about, so that
	// a front end can show the question with the call (an ACP client's
	// permission request): the call the extension names (the Go SDK
	// names the call of the hook or tool that asks), when it is checking
	// (its tool_call hook) or running (its tool) that call; else the one
	// call it is checking or running, when there is exactly one. Empty
	// otherwise.
	ToolCall string
}

// checks are the tool calls an extension is checking or running.
// Its zero value is ready.
type checks struct {
	mu  sync.Mutex
	ids map[string]int
}

// begin counts the call id in; the function returned counts it out.
func (c *checks) begin(id string) (end func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[string]int{}
	}
	c.ids[id]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.ids[id]--; c.ids[id] <= 0 {
			delete(c.ids, id)
		}
	}
}

// about is the call a question is about: claimed, when the extension
// names one it is checking or running; else the one it is checking or
// running, when there is exactly one; else none.
func (c *checks) about(claimed string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if claimed != "" && c.ids[claimed] > 0 {
		return claimed
	}
	if len(c.ids) != 1 {
		return ""
	}
	for id, n := range c.ids {
		if n == 1 {
			return id
		}
	}
	return ""
}

// DefaultQuestionTimeout is how long a question waits for an answer when
// the extension gives no timeout; MaxQuestionTimeout the longest it
// waits whatever the extension asks for, its turn in the queue included.
const (
	DefaultQuestionTimeout = 5 * time.Minute
	MaxQuestionTimeout     = 5 * time.Minute
)

// maxHighlights is how many parts of a question panto highlights.
const maxHighlights = 16

// highlights returns the parts to highlight: the distinct, non-empty
// ones that occur in the question's texts, at most maxHighlights.
func highlights(parts []string, texts ...string) []string {
	var out []string
	for _, p := range parts {
		if len(out) == maxHighlights {
			break
		}
		if p == "" || slices.Contains(out, p) || !slices.ContainsFunc(texts, func(t string) bool { return strings.Contains(t, p) }) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// MaxQueuedQuestions is how many of one extension's questions may wait
// behind the one on the screen.
const MaxQueuedQuestions = 4

// hookQuestionStops is how many questions a hook's deadline stops for:
// enough for each of the questions one extension can have pending at
// once (its parallel tool-call hooks asking one each).
const hookQuestionStops = MaxQueuedQuestions + 1

// Answer is the user's answer to a Question.
type Answer struct {
	// Yes answers a confirm.
	Yes bool
	// Index is the option chosen in a select.
	Index int
	// Text is what the user typed in an input.
	Text string
}

// The errors of a question. Each travels to the extension as a domain
// error with a code (pb.Error.code) it can test for.
var (
	// ErrNoUser: nobody can answer — panto runs in print mode or with
	// --mode json. Nothing waited.
	ErrNoUser = errors.New("no interactive user to ask (panto runs in print mode or --mode json)")
	// ErrDismissed: the user closed the question without answering.
	ErrDismissed = errors.New("the user dismissed the question")
	// ErrNoAnswer: no answer within the question's timeout.
	ErrNoAnswer = errors.New("no answer in time")
	// ErrTooManyQuestions: the extension has a question on the screen and
	// MaxQueuedQuestions more waiting; nothing was asked. Ask again once
	// they are answered (or decide without the user).
	ErrTooManyQuestions = fmt.Errorf("too many questions: one is on the screen and %d more wait their turn; nothing was asked", MaxQueuedQuestions)
	// ErrClosing: the session is closing (session_end and after); nobody
	// will answer, and nothing was asked.
	ErrClosing = errors.New("the session is closing: no more questions")
)

// errCode is the pb.Error code of a question's error.
func errCode(err error) string {
	switch {
	case errors.Is(err, ErrNoUser):
		return "no_user"
	case errors.Is(err, ErrDismissed):
		return "dismissed"
	case errors.Is(err, ErrNoAnswer), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, ErrTooManyQuestions):
		return "too_many"
	case errors.Is(err, ErrClosing):
		return "closing"
	}
	return ""
}

func questionErr(err error) *pb.Error {
	if err == nil {
		return nil
	}
	return &pb.Error{Message: err.Error(), Code: errCode(err)}
}

// questions are one extension's questions to the user: one open (on the
// screen) at a time, up to MaxQueuedQuestions more waiting in call order.
type questions struct {
	// limit caps each question's wait (MaxQuestionTimeout).
	limit time.Duration

	mu    sync.Mutex
	open  *question
	queue []*question
}

// question is one question's place in its extension's queue.
type question struct {
	turn chan struct{} // closed when it is on the screen
	done chan struct{} // closed when it is off the screen again
}

// enter waits for q's turn: at once when no other question is open, in
// call order behind the waiting ones, ErrTooManyQuestions when
// MaxQueuedQuestions wait already. Call leave when it is answered.
func (qs *questions) enter(ctx context.Context) (*question, error) {
	q := &question{turn: make(chan struct{}), done: make(chan struct{})}
	qs.mu.Lock()
	switch {
	case qs.open == nil && len(qs.queue) == 0:
		qs.open = q
		close(q.turn)
		qs.mu.Unlock()
		return q, nil
	case len(qs.queue) >= MaxQueuedQuestions:
		qs.mu.Unlock()
		return nil, ErrTooManyQuestions
	}
	qs.queue = append(qs.queue, q)
	qs.mu.Unlock()
	select {
	case <-q.turn:
		return q, nil
	case <-ctx.Done():
	}
	qs.mu.Lock()
	if i := slices.Index(qs.queue, q); i >= 0 {
		qs.queue = slices.Delete(qs.queue, i, i+1)
		qs.mu.Unlock()
	} else {
		qs.mu.Unlock()
		qs.leave(q) // its turn came as it gave up: pass it on
	}
	return nil, fmt.Errorf("%w (%v, while it waited behind the extension's other questions)", ErrNoAnswer, context.Cause(ctx))
}

// leave takes q off the screen and gives the next one its turn.
func (qs *questions) leave(q *question) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	close(q.done)
	qs.open = nil
	if len(qs.queue) > 0 {
		qs.open = qs.queue[0]
		qs.queue = slices.Delete(qs.queue, 0, 1)
		close(qs.open.turn)
	}
}

// current returns the question on the screen, or nil.
func (qs *questions) current() *question {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.open
}

// ask puts q to the user on behalf of the calling extension, in its turn.
func (h *hostServer) ask(ctx context.Context, q Question) (Answer, error) {
	if !h.ext.ready.Load() {
		return Answer{}, errors.New(errNotReady.Message)
	}
	limit := h.ext.questions.limit
	if limit <= 0 {
		limit = MaxQuestionTimeout
	}
	if q.Timeout <= 0 {
		q.Timeout = DefaultQuestionTimeout
	}
	q.Timeout = min(q.Timeout, limit)
	ctx, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	turn, err := h.ext.questions.enter(ctx)
	if err != nil {
		return Answer{}, err
	}
	defer h.ext.questions.leave(turn)
	if d, ok := ctx.Deadline(); ok {
		q.Timeout = time.Until(d)
	}
	if q.Timeout <= 0 {
		return Answer{}, fmt.Errorf("%w (it waited behind the extension's other questions)", ErrNoAnswer)
	}
	q.ToolCall = h.ext.checking.about(q.ToolCall)
	return h.rec.Ask(ctx, h.ext.Name(), q)
}

func timeoutOf(ms uint32) time.Duration { return time.Duration(ms) * time.Millisecond }

func (h *hostServer) Confirm(ctx context.Context, req *pb.ConfirmRequest) (*pb.ConfirmResponse, error) {
	a, err := h.ask(ctx, Question{Kind: AskConfirm, Title: req.GetTitle(), Message: req.GetMessage(),
		Highlight: highlights(req.GetHighlight(), req.GetTitle(), req.GetMessage()), Timeout: timeoutOf(req.GetTimeoutMs()), ToolCall: req.GetToolCallId()})
	return &pb.ConfirmResponse{Yes: err == nil && a.Yes, Error: questionErr(err)}, nil
}

func (h *hostServer) Select(ctx context.Context, req *pb.SelectRequest) (*pb.SelectResponse, error) {
	if len(req.GetOptions()) == 0 {
		return &pb.SelectResponse{Error: &pb.Error{Message: "select: no options to choose from"}}, nil
	}
	a, err := h.ask(ctx, Question{Kind: AskSelect, Title: req.GetTitle(), Options: req.GetOptions(),
		Highlight: highlights(req.GetHighlight(), append([]string{req.GetTitle()}, req.GetOptions()...)...), Timeout: timeoutOf(req.GetTimeoutMs()), ToolCall: req.GetToolCallId()})
	if err == nil && (a.Index < 0 || a.Index >= len(req.GetOptions())) {
		err = fmt.Errorf("select: the answer %d is not an option", a.Index)
	}
	return &pb.SelectResponse{Index: int32(a.Index), Error: questionErr(err)}, nil
}

func (h *hostServer) Input(ctx context.Context, req *pb.InputRequest) (*pb.InputResponse, error) {
	a, err := h.ask(ctx, Question{Kind: AskInput, Title: req.GetTitle(), Placeholder: req.GetPlaceholder(),
		Highlight: highlights(req.GetHighlight(), req.GetTitle()), Timeout: timeoutOf(req.GetTimeoutMs()), ToolCall: req.GetToolCallId()})
	return &pb.InputResponse{Text: a.Text, Error: questionErr(err)}, nil
}

func (h *hostServer) Notify(_ context.Context, req *pb.NotifyRequest) (*pb.NotifyResponse, error) {
	if h.ext.ready.Load() {
		h.rec.Notify(h.ext.Name(), req.GetLevel(), req.GetText())
	}
	return &pb.NotifyResponse{}, nil
}

func (h *hostServer) SetStatus(_ context.Context, req *pb.SetStatusRequest) (*pb.SetStatusResponse, error) {
	if h.ext.ready.Load() {
		h.rec.SetStatus(h.ext.Name(), req.GetKey(), req.GetText())
	}
	return &pb.SetStatusResponse{}, nil
}

// errHookDeadline is the cause of a hook's context when it ran out of
// time.
var errHookDeadline = errors.New("hook deadline")

// hookContext bounds one hook or command of e by the hook deadline. The
// deadline stops while a question of e's is on the screen — for at most
// hookQuestionStops questions and the question limit in all — and starts
// again from zero when it is answered.
func (m *Manager) hookContext(ctx context.Context, e *Ext) (context.Context, context.CancelFunc) {
	hctx, cancel := context.WithCancelCause(ctx)
	c := &hookClock{d: m.opts.HookTimeout, budget: m.opts.questionTime, qs: &e.questions, ctx: hctx, cancel: cancel}
	if c.budget <= 0 {
		c.budget = MaxQuestionTimeout
	}
	c.mu.Lock()
	c.t = time.AfterFunc(c.d, c.expire)
	c.mu.Unlock()
	return hctx, c.stop
}

// hookClock is one hook's deadline.
type hookClock struct {
	d, budget time.Duration
	qs        *questions
	ctx       context.Context
	cancel    context.CancelCauseFunc

	mu    sync.Mutex // guards what follows, and orders t's assignment before expire reads it
	t     *time.Timer
	stops int           // questions it stopped for
	used  time.Duration // time it stood still
	ended bool
}

// expire is the deadline passing: the hook ends, unless a question is on
// the screen and the hook has stops left.
func (c *hookClock) expire() {
	open := c.qs.current()
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	if open == nil || c.stops >= hookQuestionStops || c.used >= c.budget {
		c.mu.Unlock()
		c.cancel(errHookDeadline)
		return
	}
	c.stops++
	left := c.budget - c.used
	c.mu.Unlock()
	go c.suspend(open, left)
}

// suspend waits for open to leave the screen, at most left; then the
// deadline starts again.
func (c *hookClock) suspend(open *question, left time.Duration) {
	t0 := time.Now()
	limit := time.NewTimer(left)
	defer limit.Stop()
	select {
	case <-open.done:
		c.mu.Lock()
		c.used += time.Since(t0)
		if !c.ended {
			c.t.Reset(c.d)
		}
		c.mu.Unlock()
	case <-limit.C:
		c.cancel(errHookDeadline)
	case <-c.ctx.Done():
	}
}

func (c *hookClock) stop() {
	c.mu.Lock()
	c.ended = true
	c.t.Stop()
	c.mu.Unlock()
	c.cancel(nil)
}

// timedOut reports whether hctx, from hookContext, ran out of time.
func timedOut(hctx context.Context) bool { return errors.Is(context.Cause(hctx), errHookDeadline) }
