package acp

import (
	"context"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// replay sends the client the conversation of the session's active
// branch, as the model sees it now: from the latest compaction on (its
// summary as an agent message, then the messages kept and those after
// it), each message under its entry's id. Abandoned branches are not
// sent, nor are system entries (panto prompt and /tree show the
// prompt). Everything goes out before session/load answers.
func (s *session) replay(ctx context.Context) error {
	path := s.current().Info().Path
	if path == "" {
		return nil
	}
	l, err := sessionlog.Load(path)
	if err != nil {
		return &acpsdk.RequestError{Code: -32603, Message: fmt.Sprintf("replay the session: %v", err)}
	}
	for _, u := range replayUpdates(l) {
		if ctx.Err() != nil {
			return acpsdk.NewRequestCancelled(map[string]any{"error": "session/load was cancelled"})
		}
		s.update(u)
	}
	return nil
}

// replayUpdates are the updates that replay the loaded branch l.
func replayUpdates(l *sessionlog.Loaded) []acpsdk.SessionUpdate {
	entries := l.Entries
	// The latest compaction, and where the messages it kept begin.
	compaction := -1
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Type == sessionlog.TypeCompaction && entries[i].Compaction != nil {
			compaction = i
			break
		}
	}
	from := 0
	var out []acpsdk.SessionUpdate
	if compaction >= 0 {
		c := entries[compaction]
		out = append(out, withMessageID(acpsdk.UpdateAgentMessageText(c.Compaction.Summary), c.ID))
		from = compaction + 1
		if l.Cut != "" {
			for i := range entries {
				if entries[i].ID == l.Cut {
					from = i
					break
				}
			}
		}
	}
	ids := map[string]int{}
	callID := func(entry, use string) acpsdk.ToolCallId {
		ids[use]++
		if ids[use] > 1 || use == "" {
			return acpsdk.ToolCallId(entry + "/" + use)
		}
		return acpsdk.ToolCallId(use)
	}
	for i := from; i < len(entries); i++ {
		e := entries[i]
		if e.Message == nil || i == compaction {
			continue
		}
		m := e.Message
		switch m.Role {
		case conversation.RoleUser:
			if text := m.Typed(); strings.TrimSpace(text) != "" {
				out = append(out, withMessageID(acpsdk.UpdateUserMessageText(text), e.ID))
			}
		case conversation.RoleAssistant:
			for _, b := range m.Content {
				switch b.Type {
				case conversation.TypeThinking:
					if b.Thinking != "" {
						out = append(out, withMessageID(acpsdk.UpdateAgentThoughtText(b.Thinking), e.ID))
					}
				case conversation.TypeText:
					if b.Text != "" {
						out = append(out, withMessageID(acpsdk.UpdateAgentMessageText(b.Text), e.ID))
					}
				}
			}
			results := resultsAfter(entries, i)
			for _, u := range m.ToolUses() {
				id := callID(e.ID, u.ID)
				v := describe(u.Name, u.Input, l.Header.Cwd)
				out = append(out, acpsdk.StartToolCall(id, v.title, acpsdk.WithStartKind(v.kind),
					acpsdk.WithStartStatus(acpsdk.ToolCallStatusInProgress), acpsdk.WithStartLocations(v.locations), acpsdk.WithStartRawInput(v.raw)))
				r, ok := results[u.ID]
				switch {
				case !ok:
					out = append(out, acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusFailed),
						acpsdk.WithUpdateContent(resultContent("no result recorded"))))
				case r.IsError:
					out = append(out, acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusFailed),
						acpsdk.WithUpdateContent(resultContent(r.ResultText()))))
				default:
					out = append(out, acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusCompleted),
						acpsdk.WithUpdateContent(resultContent(r.ResultText()))))
				}
			}
		}
	}
	return out
}

// resultsAfter are the results of the tool calls of the reply at
// entries[i]: in the next message that is not a system one (ids repeat
// across replies).
func resultsAfter(entries []sessionlog.Entry, i int) map[string]conversation.Block {
	out := map[string]conversation.Block{}
	for _, e := range entries[i+1:] {
		if e.Message == nil || e.Message.Role == conversation.RoleSystem {
			continue
		}
		if e.Message.Role == conversation.RoleTool {
			for _, b := range e.Message.Content {
				if b.Type == conversation.TypeToolResult {
					out[b.ToolUseID] = b
				}
			}
		}
		break
	}
	return out
}

// withMessageID sets a chunk's message id.
func withMessageID(u acpsdk.SessionUpdate, id string) acpsdk.SessionUpdate {
	switch {
	case u.UserMessageChunk != nil:
		u.UserMessageChunk.MessageId = &id
	case u.AgentMessageChunk != nil:
		u.AgentMessageChunk.MessageId = &id
	case u.AgentThoughtChunk != nil:
		u.AgentThoughtChunk.MessageId = &id
	}
	return u
}
