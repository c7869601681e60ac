package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/provider"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// A request's body is its settings (the wire and its options, the
// model, max tokens, thinking, temperature, stream, the tools offered)
// and its conversation. The conversation is in the log already; the
// settings are recorded as a request_settings entry before each request
// whose settings differ from the branch's last. Together they rebuild
// the body of any reply's request (RequestAt).

// settingsOf is the recorded form of req's settings. The wire is the
// provider's (ok false for a Sender that does not name one, a test's
// fake: nothing is recorded for it).
func (s *Session) settingsOf(req serializers.Request) (rs sessionlog.RequestSettings, ok bool) {
	p, isProvider := s.prov.(provider.Provider)
	if !isProvider || p.Name() == "" {
		return rs, false
	}
	rs = sessionlog.RequestSettings{Provider: s.providerName, Wire: p.Name(), Options: provider.WireOptions(p),
		Model: req.Model, MaxTokens: req.MaxTokens, ThinkingBudget: req.ThinkingBudget, Temperature: req.Temperature,
		Stream: req.Stream, Tools: []sessionlog.OfferedTool{}}
	if rs.Provider == "" {
		rs.Provider = rs.Wire
	}
	if tc := req.ToolChoice; tc != (serializers.ToolChoice{}) {
		rs.ToolChoice = &sessionlog.ToolChoice{Mode: string(tc.Mode), Name: tc.Name, DisableParallel: tc.DisableParallel}
	}
	if c := req.Cache; c != (serializers.Cache{}) {
		rs.Cache = &sessionlog.RequestCache{Marks: c.Mark, Key: c.Key}
	}
	owners := map[string]string{}
	for _, set := range s.Tools() {
		for _, t := range set.Tools {
			if _, seen := owners[t.Name]; !seen {
				owners[t.Name] = set.Extension
			}
		}
	}
	for _, t := range req.Tools {
		rs.Tools = append(rs.Tools, sessionlog.OfferedTool{Owner: owners[t.Name],
			ToolDef: sessionlog.ToolDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	return rs, true
}

// lastRequestSettings is the current path's last request_settings, or
// nil.
func (s *Session) lastRequestSettings() *sessionlog.RequestSettings {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.entries) - 1; i >= 0; i-- {
		if r := s.entries[i].RequestSettings; r != nil {
			return r
		}
	}
	return nil
}

// noteRequest records req's settings when they differ from the path's
// last, just before req is sent.
func (s *Session) noteRequest(req serializers.Request) error {
	s.cacheWarned.Store(false) // a change from here on is the next request's
	rs, ok := s.settingsOf(req)
	if !ok {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.lastRequestSettings().Same(&rs) {
		return nil
	}
	if err := s.writeLocked([]sessionlog.Entry{sessionlog.RequestSettingsEntry(rs)}, nil); err != nil {
		return fmt.Errorf("record the request settings: %w", err)
	}
	return nil
}

// Replay is the request behind a recorded reply, rebuilt from the log.
type Replay struct {
	// Reply is the reply's entry id; SettingsID the request_settings
	// entry its request ran under.
	Reply, SettingsID string
	Settings          sessionlog.RequestSettings
	// Request is the request, conversation included.
	Request serializers.Request
}

// ErrNoRequestSettings says a log does not hold what a request was sent with:
// it was written before panto recorded request settings.
var ErrNoRequestSettings = errors.New("the log does not record this request's settings: it was written by a panto from before they were recorded (the conversation is there, but the model settings and tools sent with it are not), so the request cannot be rebuilt exactly")

// RequestAt rebuilds the request whose reply is the entry of tree that
// ref names (an id or a unique prefix): the request settings in force on
// its path, and the conversation before it as requests send it (the
// compaction summary and branch summaries in place). Body encodes it.
func RequestAt(tree *sessionlog.Tree, ref string) (Replay, error) {
	id, err := tree.Resolve(strings.TrimSpace(ref))
	if err != nil {
		return Replay{}, err
	}
	chain, err := tree.Chain(id)
	if err != nil {
		return Replay{}, err
	}
	entries, err := tree.Entries(chain...)
	if err != nil {
		return Replay{}, err
	}
	last := entries[len(entries)-1]
	if last.Message == nil || last.Message.Role != conversation.RoleAssistant {
		what := string(last.Type) + " entry"
		if last.Message != nil {
			what = string(last.Message.Role) + " message"
		}
		return Replay{}, fmt.Errorf("entry %s is a %s, not a reply: a request is named by the model reply it produced", short(id), what)
	}
	before := entries[:len(entries)-1]
	r := Replay{Reply: id}
	found := false
	for i := len(before) - 1; i >= 0; i-- {
		if rs := before[i].RequestSettings; rs != nil {
			r.Settings, r.SettingsID, found = *rs, before[i].ID, true
			break
		}
	}
	if !found {
		return r, ErrNoRequestSettings
	}
	b := branchOf(before)
	r.Request = requestOf(r.Settings, requestMessagesOf(b.msgs, b.notes, b.summary, b.keptFrom))
	return r, nil
}

// requestOf is the request rs and msgs make.
func requestOf(rs sessionlog.RequestSettings, msgs []conversation.Message) serializers.Request {
	req := serializers.Request{Model: rs.Model, Messages: msgs, MaxTokens: rs.MaxTokens,
		ThinkingBudget: rs.ThinkingBudget, Temperature: rs.Temperature, Stream: rs.Stream}
	if tc := rs.ToolChoice; tc != nil {
		req.ToolChoice = serializers.ToolChoice{Mode: serializers.ToolChoiceMode(tc.Mode), Name: tc.Name, DisableParallel: tc.DisableParallel}
	}
	if c := rs.Cache; c != nil {
		req.Cache = serializers.Cache{Mark: c.Marks, Key: c.Key}
	}
	for _, t := range rs.Tools {
		req.Tools = append(req.Tools, serializers.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return req
}

// Body is the request body of r, as its wire puts it.
func (r Replay) Body() ([]byte, error) {
	return provider.Encode(r.Settings.Wire, r.Settings.Options, r.Request)
}

// NextRequest is the request the session would send next, now: its
// model settings, the tools offered to a turn's first request (the
// extensions narrow them as they would), and the conversation as it
// stands (a turn's user message would come at its end).
func (s *Session) NextRequest(ctx context.Context) serializers.Request {
	req := s.settings().request(s.id)
	req.Tools = s.offer(ctx, 1)
	req.Messages = s.requestMessages()
	return req
}
