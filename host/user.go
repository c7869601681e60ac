package host

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/panto-dev/panto/host/extension"
)

// What extensions ask the user, and tell them. A front end that can ask
// (Config.Interactive) gets a Question event and answers it; without
// one, a confirm gets Config.ConfirmDefault when set, and every other
// question fails at once with ErrNoUser: panto never waits on a user who
// is not there.

// The errors an extension's question can end with.
var (
	ErrNoUser    = extension.ErrNoUser
	ErrDismissed = extension.ErrDismissed
	ErrNoAnswer  = extension.ErrNoAnswer
)

// Question is an extension's question to the user: a confirm (yes or
// no), a select (one of Options) or an input (a line of text). Answer it
// once, with Answer (or Dismiss); it is withdrawn — a QuestionClosed
// event says so — when its deadline passes or the extension stops
// waiting.
type Question struct {
	ID int64
	By string
	// Type is confirm, select or input.
	Type extension.QuestionKind
	// Title and Message are what to ask; Options a select's choices;
	// Placeholder an input's hint.
	Title, Message string
	Options        []string
	Placeholder    string
	// Highlight are parts of Message the extension marks as what the
	// question is about (the part of a command a guard matched); a front
	// end shows them highlighted wherever they occur.
	Highlight []string
	// Deadline is when it stops waiting.
	Deadline time.Time

	answer chan<- answer
}

type answer struct {
	a         extension.Answer
	dismissed bool
}

// Answer answers a confirm (Yes), a select (Index) or an input (Text).
// A second answer, or one after the question was withdrawn, is ignored.
func (q Question) Answer(a extension.Answer) { q.send(answer{a: a}) }

// Dismiss closes the question without answering it.
func (q Question) Dismiss() { q.send(answer{dismissed: true}) }

func (q Question) send(a answer) {
	select {
	case q.answer <- a:
	default:
	}
}

// QuestionClosed says a question was withdrawn before it was answered:
// its deadline passed, or the extension stopped waiting. Take it off the
// screen.
type QuestionClosed struct {
	ID  int64
	Err error
}

// Status is an extension's status segment: Text empty clears it.
type Status struct {
	By, Key, Text string
}

var questionIDs atomic.Int64

// Ask puts an extension's question to the user (see Question).
func (s *Session) Ask(ctx context.Context, by string, q extension.Question) (extension.Answer, error) {
	if !s.interactive {
		if q.Kind == extension.AskConfirm && s.confirmDefault != "" {
			return extension.Answer{Yes: s.confirmDefault == "yes"}, nil
		}
		return extension.Answer{}, ErrNoUser
	}
	ctx, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	ch := make(chan answer, 1)
	ev := Question{ID: questionIDs.Add(1), By: by, Type: q.Kind, Title: q.Title, Message: q.Message,
		Options: q.Options, Placeholder: q.Placeholder, answer: ch}
	if d, ok := ctx.Deadline(); ok {
		ev.Deadline = d
	}
	s.emit(ev)
	select {
	case a := <-ch:
		if a.dismissed {
			return extension.Answer{}, ErrDismissed
		}
		return a.a, nil
	case <-ctx.Done():
		err := fmt.Errorf("%w (%v)", ErrNoAnswer, context.Cause(ctx))
		s.emit(QuestionClosed{ID: ev.ID, Err: err})
		return extension.Answer{}, err
	}
}

// Notify shows an extension's notice.
// A level other than info, warning or error is info.
func (s *Session) Notify(by, level, text string) {
	l := NoticeLevel(level)
	switch l {
	case NoticeWarning, NoticeError:
	default:
		l = NoticeInfo
	}
	s.emit(Notice{Level: l, Text: text, By: by})
}

// SetStatus sets an extension's status segment.
func (s *Session) SetStatus(by, key, text string) {
	s.emit(Status{By: by, Key: key, Text: text})
}
