package acp

import (
	"context"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// An extension's confirm (the guard's "run this?") goes to the client as
// session/request_permission, with the tool call it is about; the
// answer is the user's, in the editor's own dialog. "Always" answers are
// kept for the session: the same question of the same extension is
// answered so again without asking. A select or an input has no
// permission form: it gets "no interactive user", as in print mode.

// The permission options panto offers.
const (
	optAllow        = "allow"
	optAllowAlways  = "allow_always"
	optReject       = "reject"
	optRejectAlways = "reject_always"
)

var permissionOptions = []acpsdk.PermissionOption{
	{OptionId: optAllow, Name: "Allow", Kind: acpsdk.PermissionOptionKindAllowOnce},
	{OptionId: optAllowAlways, Name: "Allow for this session", Kind: acpsdk.PermissionOptionKindAllowAlways},
	{OptionId: optReject, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
	{OptionId: optRejectAlways, Name: "Reject for this session", Kind: acpsdk.PermissionOptionKindRejectAlways},
}

// asks is the key of what a question asks, for the answers kept.
func asks(q host.Question) string { return q.By + "\x00" + q.Title + "\x00" + q.Message }

// ask puts q to the client; the pump goes on meanwhile.
func (s *session) ask(q host.Question) {
	if q.Type != extension.AskConfirm {
		q.NoUser()
		return
	}
	s.mu.Lock()
	yes, kept := s.always[asks(q)]
	s.mu.Unlock()
	if kept {
		q.Answer(extension.Answer{Yes: yes})
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	if !q.Deadline.IsZero() {
		cancel()
		ctx, cancel = context.WithDeadline(context.Background(), q.Deadline)
	}
	s.mu.Lock()
	s.asked[q.ID] = cancel
	s.mu.Unlock()
	go func() {
		defer s.withdraw(q.ID)
		resp, err := s.a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
			SessionId: acpsdk.SessionId(s.id), ToolCall: permissionCall(q), Options: permissionOptions,
		})
		if err != nil || resp.Outcome.Selected == nil {
			// Cancelled (session/cancel, the question withdrawn) or the
			// client failed: not a yes.
			q.Dismiss()
			return
		}
		switch string(resp.Outcome.Selected.OptionId) {
		case optAllow:
			q.Answer(extension.Answer{Yes: true})
		case optAllowAlways:
			s.keep(q, true)
			q.Answer(extension.Answer{Yes: true})
		case optRejectAlways:
			s.keep(q, false)
			q.Answer(extension.Answer{Yes: false})
		default:
			q.Answer(extension.Answer{Yes: false})
		}
	}()
}

func (s *session) keep(q host.Question, yes bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always[asks(q)] = yes
}

// withdraw stops asking the client question id.
func (s *session) withdraw(id int64) {
	s.mu.Lock()
	cancel := s.asked[id]
	delete(s.asked, id)
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// permissionCall is the tool call a permission request is about: the
// call being checked when the extension asked while checking one, with
// the question as its title and content; otherwise a call of its own.
func permissionCall(q host.Question) acpsdk.ToolCallUpdate {
	id := acpsdk.ToolCallId(q.ToolCallID)
	if id == "" {
		id = questionCallID(q.ID)
	}
	title := strings.TrimSpace(q.Title)
	if title == "" {
		title = q.By + " asks"
	}
	text := q.Message
	if q.By != "" {
		text += "\n\n(asked by the " + q.By + " extension)"
	}
	return acpsdk.ToolCallUpdate{
		ToolCallId: id,
		Title:      acpsdk.Ptr(cut(title, maxTitle)),
		Content:    resultContent(strings.TrimSpace(text)),
	}
}
