package acp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// An extension's confirm (the guard's "run this?") goes to the client as
// session/request_permission, with the tool call it is about; the
// answer is the user's, in the editor's own dialog. "Always" answers are
// kept for the session: the same question of the same extension is
// answered so again without asking. A select or an input is a form
// (elicit).

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
	if len(q.Permission) > 0 && len(q.Permission) == len(q.Options) {
		s.askPermission(q)
		return
	}
	if q.Type != extension.AskConfirm {
		s.elicit(q)
		return
	}
	s.mu.Lock()
	yes, kept := s.always[asks(q)]
	s.mu.Unlock()
	if kept {
		q.Answer(extension.Answer{Yes: yes})
		return
	}
	ctx, cancel := questionContext(q)
	s.asking(q.ID, cancel)
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

// askPermission puts panto's own question of whether a tool call may run
// to the client as session/request_permission, each choice an option of
// its kind; the one picked answers the select. No "always" is kept here:
// panto records a grant itself.
func (s *session) askPermission(q host.Question) {
	opts := make([]acpsdk.PermissionOption, len(q.Options))
	for i, o := range q.Options {
		opts[i] = acpsdk.PermissionOption{OptionId: acpsdk.PermissionOptionId(strconv.Itoa(i)), Name: o, Kind: acpsdk.PermissionOptionKind(q.Permission[i])}
	}
	ctx, cancel := questionContext(q)
	s.asking(q.ID, cancel)
	go func() {
		defer s.withdraw(q.ID)
		resp, err := s.a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
			SessionId: acpsdk.SessionId(s.id), ToolCall: permissionCall(q), Options: opts,
		})
		if err != nil || resp.Outcome.Selected == nil {
			q.Dismiss() // cancelled: not allowed
			return
		}
		i, err := strconv.Atoi(string(resp.Outcome.Selected.OptionId))
		if err != nil || i < 0 || i >= len(q.Options) {
			q.Dismiss() // an option panto did not offer
			return
		}
		q.Answer(extension.Answer{Index: i})
	}()
}

// questionContext bounds asking the client by the question's deadline.
func questionContext(q host.Question) (context.Context, context.CancelFunc) {
	if q.Deadline.IsZero() {
		return context.WithCancel(context.Background())
	}
	return context.WithDeadline(context.Background(), q.Deadline)
}

// asking records a request of the client's for question id, cancelled
// when the question is withdrawn.
func (s *session) asking(id int64, cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked[id] = cancel
}

// A select or an input goes to the client as a form (elicitation/create)
// when it advertises forms: a select's options as a single-select field,
// an input as a text field. Without forms it gets "no interactive user",
// as in print mode. acp-go-sdk v0.13.5's form request lacks the session
// scope the schema requires, so panto sends its own (wire.request).

// The form fields panto asks for.
const (
	fieldChoice = "choice"
	fieldText   = "text"
)

// elicit asks the client for a select's choice or an input's text.
func (s *session) elicit(q host.Question) {
	s.a.mu.Lock()
	forms := s.a.caps.Elicitation != nil && s.a.caps.Elicitation.Form != nil
	s.a.mu.Unlock()
	if !forms {
		q.NoUser()
		return
	}
	field, prop := fieldText, map[string]any{"type": "string", "title": strings.TrimSpace(q.Title)}
	if q.Placeholder != "" {
		prop["description"] = q.Placeholder
	}
	if q.Type == extension.AskSelect {
		field = fieldChoice
		opts := make([]map[string]any, len(q.Options))
		for i, o := range q.Options {
			opts[i] = map[string]any{"const": strconv.Itoa(i), "title": o}
		}
		prop["oneOf"] = opts
	}
	message := strings.TrimSpace(q.Title)
	if q.Message != "" {
		message += "\n\n" + q.Message
	}
	if q.By != "" {
		message += "\n\n(asked by the " + q.By + " extension)"
	}
	params := map[string]any{
		"sessionId": s.id, "mode": "form", "message": strings.TrimSpace(message),
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{field: prop}, "required": []string{field}},
	}
	if q.ToolCallID != "" {
		params["toolCallId"] = q.ToolCallID
	}
	ctx, cancel := questionContext(q)
	s.asking(q.ID, cancel)
	go func() {
		defer s.withdraw(q.ID)
		raw, err := s.a.wire.request(ctx, "elicitation/create", params)
		if err != nil {
			q.Dismiss()
			return
		}
		var resp struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		}
		switch {
		case json.Unmarshal(raw, &resp) != nil:
			q.Dismiss()
			return
		case resp.Action != "accept":
			q.DismissByUser() // the user declined or closed the form
			return
		}
		v, _ := resp.Content[field].(string)
		if q.Type != extension.AskSelect {
			q.Answer(extension.Answer{Text: v})
			return
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= len(q.Options) {
			q.Dismiss() // not one of the choices offered
			return
		}
		q.Answer(extension.Answer{Index: i})
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
	if subject := firstLine(q.Message); subject != "" {
		// A client may show the title alone: the subject goes in it too.
		title += " " + subject
	}
	text := q.Message
	if q.By != "" && len(q.Permission) == 0 {
		text += "\n\n(asked by the " + q.By + " extension)"
	}
	return acpsdk.ToolCallUpdate{
		ToolCallId: id,
		Title:      acpsdk.Ptr(cut(title, maxTitle)),
		Content:    resultContent(strings.TrimSpace(text)),
	}
}
