// Package serializers holds what panto's wire formats share: the
// provider-neutral Request a turn is encoded from, the Reply a response or
// stream is decoded into, the live Delta callback, and APIError.
//
// Each wire format is a sub-package (anthropic, openai) that encodes a
// Request into that provider's JSON body and decodes its replies, plain
// JSON and SSE streams alike. Both derive the system prompt with
// conversation.EffectiveSystem and nothing else. HTTP policy (URLs,
// headers, retries, keys) does not belong here; it lives with the
// providers in the host.
package serializers

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/panto-dev/panto/conversation"
)

// Request is one model request, before it is put on a wire.
type Request struct {
	// Model is the provider's model name.
	Model string
	// Messages is the whole conversation; system messages included. The
	// serializer derives the system prompt from it.
	Messages []conversation.Message
	// MaxTokens caps the reply's length; 0 leaves the field out where the
	// wire format allows it (Anthropic requires it: a default applies).
	MaxTokens int
	// Tools are offered to the model, in this order.
	Tools []Tool
	// ToolChoice says whether and which tool the model must call. The zero
	// value leaves the field out (the provider's default, auto).
	ToolChoice ToolChoice
	// Stream asks for an SSE stream instead of one JSON body.
	Stream bool
	// ThinkingBudget enables extended thinking with this many tokens
	// (Anthropic: budget_tokens, at least 1024); 0 leaves it off.
	ThinkingBudget int
	// Temperature, when not nil, is sent as is.
	Temperature *float64
	// Cache asks the provider to cache the request's prefix. The zero
	// value asks for nothing: no marks, no key.
	Cache Cache
}

// Cache says how a request asks for prompt caching. Everything in it is
// part of the request's bytes, so a request rebuilt from the same values
// is encoded the same.
type Cache struct {
	// Mark puts cache breakpoints in the request where the wire has them
	// (Anthropic's cache_control; see the anthropic package for where).
	// OpenAI's wire has none: it caches every prefix by itself.
	Mark bool
	// Key groups requests that share a prefix (OpenAI's
	// prompt_cache_key; the host uses the session id). Sent only where
	// the encoder's options say the server takes it; empty sends none.
	Key string
}

// Tool describes one tool offered to the model.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the tool's input, an object schema.
	// Empty means {"type":"object"}.
	Parameters json.RawMessage
}

// ToolChoiceMode says how the model may use the tools.
type ToolChoiceMode string

// The tool-choice modes.
const (
	// ToolChoiceAuto lets the model decide.
	ToolChoiceAuto ToolChoiceMode = "auto"
	// ToolChoiceAny makes it call some tool (OpenAI: "required").
	ToolChoiceAny ToolChoiceMode = "any"
	// ToolChoiceNone forbids tool calls.
	ToolChoiceNone ToolChoiceMode = "none"
	// ToolChoiceTool makes it call the tool named in ToolChoice.Name.
	ToolChoiceTool ToolChoiceMode = "tool"
)

// ToolChoice says whether and which tool the model must call.
type ToolChoice struct {
	Mode ToolChoiceMode
	// Name is the tool to call when Mode is ToolChoiceTool.
	Name string
	// DisableParallel asks for at most one tool call per reply.
	DisableParallel bool
}

// StopReason says why the model stopped, in panto's words; each decoder
// maps its provider's values onto these and keeps the raw value in
// Reply.RawStopReason.
type StopReason string

// The stop reasons.
const (
	StopEndTurn      StopReason = "end_turn"      // the reply is complete
	StopToolUse      StopReason = "tool_use"      // the reply calls tools
	StopMaxTokens    StopReason = "max_tokens"    // cut at the token limit
	StopSequence     StopReason = "stop_sequence" // a stop sequence matched
	StopRefusal      StopReason = "refusal"       // refused or filtered
	StopPauseTurn    StopReason = "pause_turn"    // a long turn paused; send it back to go on
	StopContextLimit StopReason = "context_limit" // the context window is full
	StopOther        StopReason = "other"         // anything else; see RawStopReason
)

// Usage counts tokens as the provider reported them. Missing fields are 0.
type Usage struct {
	InputTokens      int `json:"input_tokens,omitempty"`
	OutputTokens     int `json:"output_tokens,omitempty"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// Reply is a complete assistant reply, decoded from a JSON body or from a
// stream that ran to its end.
type Reply struct {
	// Message is the assistant message, ready to append to the
	// conversation.
	Message       conversation.Message `json:"message"`
	StopReason    StopReason           `json:"stop_reason"`
	RawStopReason string               `json:"raw_stop_reason"`
	Usage         Usage                `json:"usage"`
	// ID and Model are the provider's response id and model name.
	ID    string `json:"id"`
	Model string `json:"model"`
}

// DeltaKind says what a Delta carries.
type DeltaKind string

// The delta kinds.
const (
	// DeltaText is a piece of reply text.
	DeltaText DeltaKind = "text"
	// DeltaThinking is a piece of visible reasoning.
	DeltaThinking DeltaKind = "thinking"
	// DeltaToolStart announces a tool call: ToolID and ToolName are set.
	DeltaToolStart DeltaKind = "tool_start"
	// DeltaToolInput is a piece of a tool call's JSON input.
	DeltaToolInput DeltaKind = "tool_input"
)

// Delta is one increment of a streamed reply, for live display. Index is
// the content block (Anthropic) or tool call (OpenAI) it belongs to; for
// OpenAI, text and thinking deltas have Index 0.
type Delta struct {
	Kind     DeltaKind `json:"kind"`
	Index    int       `json:"index"`
	Text     string    `json:"text,omitempty"`
	ToolID   string    `json:"tool_id,omitempty"`
	ToolName string    `json:"tool_name,omitempty"`
}

// DeltaFunc receives deltas as they arrive. It runs on the decoding
// goroutine and should return quickly. A nil DeltaFunc is allowed.
type DeltaFunc func(Delta)

// ErrTruncated is wrapped by a stream decoder's error when the stream ended
// before the provider said it was complete. What was received is not a
// reply; nothing of it should be recorded as one.
var ErrTruncated = errors.New("stream ended before the reply was complete")

// APIError is an error the provider reported: an HTTP error status with its
// body, or an error event inside a stream that began with 200.
type APIError struct {
	// Status is the HTTP status; 200 for an error event mid-stream.
	Status int
	// Type is the provider's error type or code (overloaded_error,
	// rate_limit_exceeded, ...); may be empty.
	Type string
	// Message is the provider's message.
	Message string
	// RequestID is the provider's request id, when known.
	RequestID string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	s := fmt.Sprintf("provider error (HTTP %d", e.Status)
	if e.Type != "" {
		s += ", " + e.Type
	}
	s += "): " + msg
	if e.RequestID != "" {
		s += " (request id " + e.RequestID + ")"
	}
	return s
}
