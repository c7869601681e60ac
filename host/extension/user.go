package extension

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/panto-dev/panto/internal/pb"
)

// The user calls (API v2): an extension asks the user a question —
// Confirm, Select, Input — or tells them something — Notify, SetStatus.
// panto hands each to the session (the Recorder), which hands it to the
// front end; while a question waits for its answer, the hook that asked
// it is not held to the hook deadline.

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
	// Timeout bounds the wait; 0 means DefaultQuestionTimeout.
	Timeout time.Duration
}

// DefaultQuestionTimeout is how long a question waits for an answer when
// the extension gives no timeout.
const DefaultQuestionTimeout = 5 * time.Minute

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
	}
	return ""
}

func questionErr(err error) *pb.Error {
	if err == nil {
		return nil
	}
	return &pb.Error{Message: err.Error(), Code: errCode(err)}
}

// ask puts q to the user on behalf of the calling extension, its hook
// deadline suspended meanwhile.
func (h *hostServer) ask(ctx context.Context, q Question) (Answer, error) {
	if !h.ext.ready.Load() {
		return Answer{}, errors.New(errNotReady.Message)
	}
	if q.Timeout <= 0 {
		q.Timeout = DefaultQuestionTimeout
	}
	h.ext.asking.Add(1)
	defer func() {
		h.ext.asking.Add(-1)
		h.ext.answered()
	}()
	return h.rec.Ask(ctx, h.ext.Name(), q)
}

func timeoutOf(ms uint32) time.Duration { return time.Duration(ms) * time.Millisecond }

func (h *hostServer) Confirm(ctx context.Context, req *pb.ConfirmRequest) (*pb.ConfirmResponse, error) {
	a, err := h.ask(ctx, Question{Kind: AskConfirm, Title: req.GetTitle(), Message: req.GetMessage(), Timeout: timeoutOf(req.GetTimeoutMs())})
	return &pb.ConfirmResponse{Yes: err == nil && a.Yes, Error: questionErr(err)}, nil
}

func (h *hostServer) Select(ctx context.Context, req *pb.SelectRequest) (*pb.SelectResponse, error) {
	if len(req.GetOptions()) == 0 {
		return &pb.SelectResponse{Error: &pb.Error{Message: "select: no options to choose from"}}, nil
	}
	a, err := h.ask(ctx, Question{Kind: AskSelect, Title: req.GetTitle(), Options: req.GetOptions(), Timeout: timeoutOf(req.GetTimeoutMs())})
	if err == nil && (a.Index < 0 || a.Index >= len(req.GetOptions())) {
		err = fmt.Errorf("select: the answer %d is not an option", a.Index)
	}
	return &pb.SelectResponse{Index: int32(a.Index), Error: questionErr(err)}, nil
}

func (h *hostServer) Input(ctx context.Context, req *pb.InputRequest) (*pb.InputResponse, error) {
	a, err := h.ask(ctx, Question{Kind: AskInput, Title: req.GetTitle(), Placeholder: req.GetPlaceholder(), Timeout: timeoutOf(req.GetTimeoutMs())})
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

// hookContext bounds one hook or command of e by the hook deadline —
// except while e waits for the user's answer to a question it asked: the
// deadline then starts again when the answer comes.
func (m *Manager) hookContext(ctx context.Context, e *Ext) (context.Context, context.CancelFunc) {
	hctx, cancel := context.WithCancelCause(ctx)
	d := m.opts.HookTimeout
	var (
		mu sync.Mutex // orders t's assignment before expire reads it
		t  *time.Timer
	)
	expire := func() {
		mu.Lock()
		timer := t
		mu.Unlock()
		if e.asking.Load() > 0 {
			e.onAnswer(func() { timer.Reset(d) })
			return
		}
		cancel(errHookDeadline)
	}
	mu.Lock()
	t = time.AfterFunc(d, expire)
	mu.Unlock()
	return hctx, func() {
		t.Stop()
		cancel(nil)
	}
}

// timedOut reports whether hctx, from hookContext, ran out of time.
func timedOut(hctx context.Context) bool { return errors.Is(context.Cause(hctx), errHookDeadline) }
