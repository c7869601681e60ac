package sdktest

import (
	"context"
	"maps"
	"slices"

	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sdk"
)

// User scripts the user an extension asks (Host.Confirm, Select, Input):
// each non-nil func answers its kind of question; a nil one answers as
// panto does with nobody to ask, sdk.ErrNoUser. Return sdk.ErrDismissed
// to play a user who closes the question.
type User struct {
	Confirm func(title, message string) (bool, error)
	Select  func(title string, options []string) (int, error)
	Input   func(title, placeholder string) (string, error)
}

// Question is one question the extension asked, in order.
type Question struct {
	// Kind is "confirm", "select" or "input".
	Kind           string
	Title, Message string
	Options        []string
	Placeholder    string
	// Highlight are the parts it marked with sdk.Highlight (nil: none).
	Highlight []string
}

// Notice is one Host.Notify call, as panto shows it: Level is "info",
// "warning" or "error", an unknown level being info (rules.NoticeLevel).
type Notice struct {
	Level, Text string
}

// WithUser scripts the user for the calls that follow, and returns h.
// Without it there is nobody to ask, as in panto's print mode.
func (h *Harness) WithUser(u User) *Harness {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.user = u
	return h
}

// Questions returns the questions the extension asked, in order.
func (h *Harness) Questions() []Question {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.questions)
}

// Notices returns the extension's Host.Notify calls, in order.
func (h *Harness) Notices() []Notice {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.notices)
}

// Status returns the extension's status segments, by key.
func (h *Harness) Status() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.status)
}

// asked records q and returns the user who answers it; false once the
// session is closing (nothing is asked then).
func (f *fakeHost) asked(q Question) (User, bool) {
	h := f.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return User{}, false
	}
	h.questions = append(h.questions, q)
	return h.user, true
}

// ask runs the scripted answer with the hook clock stopped.
func ask[T any](f *fakeHost, answer func() (T, error)) (T, error) {
	f.askMu.Lock()
	f.asking++
	f.askMu.Unlock()
	defer func() {
		f.askMu.Lock()
		f.asking--
		var then []func()
		if f.asking == 0 {
			then, f.then = f.then, nil
		}
		f.askMu.Unlock()
		for _, g := range then {
			g()
		}
	}()
	return answer()
}

// waiting reports whether a question waits on the user; if so, g runs
// when the last is answered.
func (f *fakeHost) waiting(g func()) bool {
	f.askMu.Lock()
	defer f.askMu.Unlock()
	if f.asking == 0 {
		return false
	}
	f.then = append(f.then, g)
	return true
}

func (f *fakeHost) Confirm(ctx context.Context, title, message string, opts ...sdk.AskOption) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	u, ok := f.asked(Question{Kind: "confirm", Title: title, Message: message, Highlight: sdk.ApplyAskOptions(opts...).Highlight})
	if !ok {
		return false, sdk.ErrClosing
	}
	if u.Confirm == nil {
		return false, sdk.ErrNoUser
	}
	yes, err := ask(f, func() (bool, error) { return u.Confirm(title, message) })
	if err == sdk.ErrDismissed {
		return false, nil // as the real Host: closing a yes/no question is a no
	}
	return yes && err == nil, err
}

func (f *fakeHost) Select(ctx context.Context, title string, options []string, opts ...sdk.AskOption) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	u, ok := f.asked(Question{Kind: "select", Title: title, Options: slices.Clone(options), Highlight: sdk.ApplyAskOptions(opts...).Highlight})
	if !ok {
		return 0, sdk.ErrClosing
	}
	if u.Select == nil {
		return 0, sdk.ErrNoUser
	}
	return ask(f, func() (int, error) { return u.Select(title, options) })
}

func (f *fakeHost) Input(ctx context.Context, title, placeholder string, opts ...sdk.AskOption) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	u, ok := f.asked(Question{Kind: "input", Title: title, Placeholder: placeholder, Highlight: sdk.ApplyAskOptions(opts...).Highlight})
	if !ok {
		return "", sdk.ErrClosing
	}
	if u.Input == nil {
		return "", sdk.ErrNoUser
	}
	return ask(f, func() (string, error) { return u.Input(title, placeholder) })
}

func (f *fakeHost) Notify(ctx context.Context, level, text string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h := f.h
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notices = append(h.notices, Notice{Level: rules.NoticeLevel(level), Text: text})
	return nil
}

func (f *fakeHost) SetStatus(ctx context.Context, key, text string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h := f.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.status == nil {
		h.status = map[string]string{}
	}
	if text == "" {
		delete(h.status, key)
	} else {
		h.status[key] = text
	}
	return nil
}
