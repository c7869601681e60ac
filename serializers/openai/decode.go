package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// chatCompletion is a chat.completion body; a chat.completion.chunk has the
// same shape with delta in place of message. Only what panto reads is
// here; every field may be missing or null.
type chatCompletion struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Index        int          `json:"index"`
	Message      *wireMessage `json:"message"`
	Delta        *wireMessage `json:"delta"`
	FinishReason *string      `json:"finish_reason"`
}

// wireMessage is a reply's message or a chunk's delta.
type wireMessage struct {
	Content *string `json:"content"`
	Refusal *string `json:"refusal"`
	// ReasoningContent (DeepSeek, older vLLM) and Reasoning (Ollama,
	// OpenRouter, newer vLLM) carry visible reasoning. When a server sends
	// both, they hold the same text: ReasoningContent wins.
	ReasoningContent *string        `json:"reasoning_content"`
	Reasoning        *string        `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

func (m *wireMessage) reasoning() string {
	if m.ReasoningContent != nil && *m.ReasoningContent != "" {
		return *m.ReasoningContent
	}
	if m.Reasoning != nil {
		return *m.Reasoning
	}
	return ""
}

type wireToolCall struct {
	// Index is only in stream deltas; nil when a server leaves it out.
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *usage) toUsage() serializers.Usage {
	if u == nil {
		return serializers.Usage{}
	}
	out := serializers.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CacheReadTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

// wireError is the error object of an error body or stream chunk. Code is
// a string at OpenAI, a number or null elsewhere.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// apiError turns an error object (or a bare error string, as some servers
// send) into an APIError; ok is false when raw is neither.
func apiError(status int, raw json.RawMessage, requestID string) (*serializers.APIError, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &serializers.APIError{Status: status, Message: s, RequestID: requestID}, true
	}
	var we wireError
	if json.Unmarshal(raw, &we) != nil {
		return nil, false
	}
	return we.apiError(status, requestID), true
}

func (we *wireError) apiError(status int, requestID string) *serializers.APIError {
	typ := we.Type
	var code string
	if json.Unmarshal(we.Code, &code) == nil && code != "" {
		typ = code
	}
	return &serializers.APIError{Status: status, Type: typ, Message: we.Message, RequestID: requestID}
}

func hasError(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// DecodeResponse decodes a chat.completion body into a Reply. A body that
// holds an error object instead is returned as a *serializers.APIError
// with Status 200.
func DecodeResponse(body []byte) (serializers.Reply, error) {
	var cc chatCompletion
	if err := json.Unmarshal(body, &cc); err != nil {
		return serializers.Reply{}, fmt.Errorf("openai: decode response: %w", err)
	}
	if hasError(cc.Error) {
		return serializers.Reply{}, fmt.Errorf("openai: decode response: %w", DecodeError(200, body, ""))
	}
	var r replyBuilder
	r.id, r.model, r.usage = cc.ID, cc.Model, cc.Usage.toUsage()
	found := false
	for _, c := range cc.Choices {
		if c.Index != 0 {
			continue
		}
		found = true
		if c.FinishReason != nil {
			r.finish = *c.FinishReason
		}
		if m := c.Message; m != nil {
			r.thinking.WriteString(m.reasoning())
			if m.Content != nil {
				r.text.WriteString(*m.Content)
			}
			if m.Refusal != nil && *m.Refusal != "" {
				r.text.WriteString(*m.Refusal)
				r.refused = true
			}
			for i, tc := range m.ToolCalls {
				r.calls = append(r.calls, &toolCall{index: i, id: tc.ID,
					name: tc.Function.Name, args: []byte(tc.Function.Arguments)})
			}
		}
		break
	}
	if !found {
		return serializers.Reply{}, errors.New("openai: decode response: no choice with index 0")
	}
	reply, err := r.reply()
	if err != nil {
		return serializers.Reply{}, fmt.Errorf("openai: decode response: %w", err)
	}
	return reply, nil
}

// toolCall is a tool call being assembled.
type toolCall struct {
	index    int
	id, name string
	args     []byte
}

// replyBuilder collects a reply's parts, from a body or a stream.
type replyBuilder struct {
	id, model      string
	thinking, text strings.Builder
	calls          []*toolCall // in index order when reply is called
	finish         string
	refused        bool
	usage          serializers.Usage
}

// reply assembles the Reply: thinking, text, then tool calls; it checks
// every tool call's arguments.
func (r *replyBuilder) reply() (serializers.Reply, error) {
	blocks := make([]conversation.Block, 0, 2+len(r.calls))
	if r.thinking.Len() > 0 {
		blocks = append(blocks, conversation.Thinking(r.thinking.String(), ""))
	}
	if r.text.Len() > 0 {
		blocks = append(blocks, conversation.Text(r.text.String()))
	}
	for _, c := range r.calls {
		id := c.id
		if id == "" {
			id = "panto_call_" + strconv.Itoa(c.index)
		}
		if c.name == "" {
			return serializers.Reply{}, fmt.Errorf("tool call %d (id %s): no function name", c.index, id)
		}
		input := json.RawMessage(`{}`)
		if !isBlank(c.args) {
			if !json.Valid(c.args) {
				return serializers.Reply{}, fmt.Errorf("tool call %d (%s, id %s): arguments are not valid JSON: %s",
					c.index, c.name, id, snippet(c.args))
			}
			if !isObject(c.args) {
				return serializers.Reply{}, fmt.Errorf("tool call %d (%s, id %s): arguments are not a JSON object: %s",
					c.index, c.name, id, snippet(c.args))
			}
			input = c.args
		}
		blocks = append(blocks, conversation.ToolUse(id, c.name, input))
	}
	stop := stopReason(r.finish)
	if r.refused {
		stop = serializers.StopRefusal
	}
	return serializers.Reply{
		Message:       conversation.Message{Role: conversation.RoleAssistant, Content: blocks},
		StopReason:    stop,
		RawStopReason: r.finish,
		Usage:         r.usage,
		ID:            r.id,
		Model:         r.model,
	}, nil
}

// stopReason maps a finish_reason onto panto's stop reasons.
func stopReason(finish string) serializers.StopReason {
	switch finish {
	case "stop":
		return serializers.StopEndTurn
	case "tool_calls", "function_call":
		return serializers.StopToolUse
	case "length":
		return serializers.StopMaxTokens
	case "content_filter":
		return serializers.StopRefusal
	}
	return serializers.StopOther
}

// DecodeError turns an HTTP error response into an APIError. It reads
// OpenAI's {"error":{"message","type","param","code"}} (Type is the code
// when that is a string, else the type), a bare {"error":"..."} and vLLM's
// top-level {"message","type","code"}; any other body, HTML included,
// becomes the Message as a trimmed snippet.
func DecodeError(status int, body []byte, requestID string) *serializers.APIError {
	var env struct {
		Error json.RawMessage `json:"error"`
		wireError
	}
	if json.Unmarshal(body, &env) == nil {
		var e *serializers.APIError
		if hasError(env.Error) {
			e, _ = apiError(status, env.Error, requestID)
		} else if env.Message != "" {
			e = env.apiError(status, requestID)
		}
		if e != nil && (e.Message != "" || e.Type != "") {
			if e.Message == "" {
				e.Message = snippet(body)
			}
			return e
		}
	}
	msg := snippet(body)
	if msg == "" {
		msg = "empty error body"
	}
	return &serializers.APIError{Status: status, Message: msg, RequestID: requestID}
}

// snippetMax is how much of an unexpected body an error quotes.
const snippetMax = 300

// snippet returns b with runs of white space folded to one space, cut to
// snippetMax bytes on a rune boundary.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) <= snippetMax {
		return s
	}
	cut := snippetMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
