package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// wireMessage is the Message object of a response body and of a stream's
// message_start event. Content blocks stay raw so that a block of a type
// panto does not know cannot fail the whole message.
type wireMessage struct {
	ID         string            `json:"id"`
	Type       string            `json:"type"`
	Role       string            `json:"role"`
	Model      string            `json:"model"`
	Content    []json.RawMessage `json:"content"`
	StopReason *string           `json:"stop_reason"`
	Usage      *wireUsage        `json:"usage"`
}

// wireBlock is a response content block of a type panto keeps.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// wireUsage is a usage object. Every field is optional and may be null;
// in a stream each one present is a running total that replaces the last.
type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

// apply overwrites the counts of dst that u reports.
func (u *wireUsage) apply(dst *serializers.Usage) {
	if u == nil {
		return
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&dst.InputTokens, u.InputTokens)
	set(&dst.OutputTokens, u.OutputTokens)
	set(&dst.CacheWriteTokens, u.CacheCreationInputTokens)
	set(&dst.CacheReadTokens, u.CacheReadInputTokens)
}

// wireError is an error body, and the data of a stream's error event.
type wireError struct {
	Type  string `json:"type"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

// DecodeResponse decodes the JSON body of a non-streaming Messages API
// response into a Reply. Content blocks of types panto does not know
// (server tools, ...) are skipped. A body that is an error object gives a
// *serializers.APIError with Status 200.
func DecodeResponse(body []byte) (serializers.Reply, error) {
	var m wireMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return serializers.Reply{}, fmt.Errorf("anthropic: decode response: %w", err)
	}
	if m.Type == "error" {
		return serializers.Reply{}, DecodeError(200, body, "")
	}
	if m.Type != "message" {
		return serializers.Reply{}, fmt.Errorf("anthropic: decode response: type is %q, want message", m.Type)
	}
	if m.Role != "" && m.Role != string(conversation.RoleAssistant) {
		return serializers.Reply{}, fmt.Errorf("anthropic: decode response: role is %q, want assistant", m.Role)
	}
	reply := serializers.Reply{
		Message: conversation.Message{
			Role:    conversation.RoleAssistant,
			Content: make([]conversation.Block, 0, len(m.Content)),
		},
		ID:    m.ID,
		Model: m.Model,
	}
	for i, raw := range m.Content {
		blk, ok, err := decodeBlock(raw)
		if err != nil {
			return serializers.Reply{}, fmt.Errorf("anthropic: decode response: content[%d]: %w", i, err)
		}
		if !ok {
			continue
		}
		if blk.Type == conversation.TypeToolUse {
			if blk.Input, err = toolInput(blk.Input); err != nil {
				return serializers.Reply{}, fmt.Errorf("anthropic: decode response: content[%d]: tool_use %s: input: %w", i, blk.ID, err)
			}
		}
		reply.Message.Content = append(reply.Message.Content, blk)
	}
	if m.StopReason != nil {
		reply.RawStopReason = *m.StopReason
	}
	reply.StopReason = mapStopReason(reply.RawStopReason)
	m.Usage.apply(&reply.Usage)
	return reply, nil
}

// decodeBlock decodes a content block of a type panto keeps; ok is false
// for a block of any other type, which is skipped.
func decodeBlock(raw []byte) (blk conversation.Block, ok bool, err error) {
	var w wireBlock
	if err := json.Unmarshal(raw, &w); err != nil {
		// A block panto does not know may have fields that do not fit
		// wireBlock; only a known block's error is an error.
		var t struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &t) == nil && !knownBlock(t.Type) {
			return conversation.Block{}, false, nil
		}
		return conversation.Block{}, false, err
	}
	switch w.Type {
	case "text":
		return conversation.Text(w.Text), true, nil
	case "thinking":
		return conversation.Thinking(w.Thinking, w.Signature), true, nil
	case "redacted_thinking":
		return conversation.RedactedThinking(w.Data), true, nil
	case "tool_use":
		if w.ID == "" || w.Name == "" {
			return conversation.Block{}, false, errors.New("tool_use: id and name are required")
		}
		return conversation.Block{Type: conversation.TypeToolUse, ID: w.ID, Name: w.Name, Input: w.Input}, true, nil
	}
	return conversation.Block{}, false, nil
}

func knownBlock(t string) bool {
	switch t {
	case "text", "thinking", "redacted_thinking", "tool_use":
		return true
	}
	return false
}

// toolInput checks a tool call's input: a JSON object, where nothing or
// null mean the empty object.
func toolInput(raw []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid(trimmed) {
		return nil, errNotJSON
	}
	if trimmed[0] != '{' {
		return nil, errNotObject
	}
	return json.RawMessage(trimmed), nil
}

// mapStopReason maps an Anthropic stop_reason onto panto's StopReason;
// values it does not know (and none at all) are StopOther.
func mapStopReason(raw string) serializers.StopReason {
	switch raw {
	case "end_turn":
		return serializers.StopEndTurn
	case "tool_use":
		return serializers.StopToolUse
	case "max_tokens":
		return serializers.StopMaxTokens
	case "stop_sequence":
		return serializers.StopSequence
	case "refusal":
		return serializers.StopRefusal
	case "pause_turn":
		return serializers.StopPauseTurn
	case "model_context_window_exceeded":
		return serializers.StopContextLimit
	}
	return serializers.StopOther
}

// maxSnippet is how much of a body that is not an error object an APIError
// quotes.
const maxSnippet = 300

// DecodeError decodes an error response: the body {type:"error",
// error:{type, message}, request_id} of a non-2xx status. requestID is the
// request-id header; when empty, the body's request_id is used. A body
// that is not such an object (a proxy's HTML page, say) still gives an
// APIError with the status, its Message a trimmed snippet of the body.
func DecodeError(status int, body []byte, requestID string) *serializers.APIError {
	e := &serializers.APIError{Status: status, RequestID: requestID}
	var w wireError
	if json.Unmarshal(body, &w) == nil && w.Error != nil && (w.Error.Type != "" || w.Error.Message != "") {
		e.Type, e.Message = w.Error.Type, w.Error.Message
		if e.RequestID == "" {
			e.RequestID = w.RequestID
		}
		return e
	}
	e.Message = snippet(body)
	return e
}

// snippet returns body on one line, valid UTF-8, at most maxSnippet bytes.
func snippet(body []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "\uFFFD")), " ")
	if s == "" {
		return "empty response body"
	}
	if len(s) <= maxSnippet {
		return "response body: " + s
	}
	cut := maxSnippet
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return "response body: " + s[:cut] + "…"
}
