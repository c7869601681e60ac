package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// The names Options.MaxTokensField may take.
const (
	// FieldMaxTokens is the deprecated "max_tokens", the field every
	// OpenAI-compatible server understands. It is the default.
	FieldMaxTokens = "max_tokens"
	// FieldMaxCompletionTokens is "max_completion_tokens", which OpenAI's
	// reasoning models (o-series and later) require.
	FieldMaxCompletionTokens = "max_completion_tokens"
)

// Options tunes EncodeRequest for a server. The zero value suits local
// servers.
type Options struct {
	// MaxTokensField names the field Request.MaxTokens goes in:
	// FieldMaxTokens (the default, when empty) or FieldMaxCompletionTokens.
	MaxTokensField string
	// PromptCacheKey sends Request.Cache.Key as prompt_cache_key, which
	// OpenAI uses to route requests that share a prefix to the same
	// cache. Off, as for a server that rejects fields it does not know,
	// no key is sent.
	PromptCacheKey bool
}

// MaxPromptCacheKey is the longest prompt_cache_key OpenAI's schema
// allows (a session id is 36).
const MaxPromptCacheKey = 64

// imageBelow stands in, in a tool message, for an image block of its tool
// result, which a tool message cannot carry: the image follows the tool
// messages in a user message (see encoder.flushImages).
const imageBelow = "[image: in the user message after the tool results]"

// imagesOf introduces the images of one tool result in that user message.
const imagesOf = "The image(s) returned by tool call "

// errorPrefix starts the content of a tool message for a failed tool call.
const errorPrefix = "Error: "

// The request body. Field order is the order on the wire.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Tools               []chatTool     `json:"tools,omitempty"`
	ToolChoice          any            `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool          `json:"parallel_tool_calls,omitempty"`
	Stream              bool           `json:"stream,omitempty"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	PromptCacheKey      string         `json:"prompt_cache_key,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is any of the message kinds. Content is a string or a
// *string, a []contentPart (user messages with images or several texts),
// or nil, which is sent as null (an assistant message that only calls
// tools).
type chatMessage struct {
	Role       string         `json:"role"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Content    any            `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     *string   `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type namedToolChoice struct {
	Type     string            `json:"type"`
	Function namedToolFunction `json:"function"`
}

type namedToolFunction struct {
	Name string `json:"name"`
}

// EncodeRequest returns the Chat Completions request body for req.
//
// The effective system prompt (conversation.EffectiveSystem) leads the
// messages as one system message per block; the other messages follow in
// their order. See the package documentation for what the format cannot
// carry. The body is deterministic: the same request gives the same bytes.
func EncodeRequest(req serializers.Request, opts Options) ([]byte, error) {
	body, err := buildRequest(req, opts)
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	// An Encoder, because json.Marshal would escape <, > and & (common in
	// code) as \u003c and the like.
	var out sink
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	return bytes.TrimSuffix(out.b, []byte("\n")), nil
}

// sink keeps what an Encoder writes: one Write of the whole value, copied
// once into a slice of just the right size.
type sink struct{ b []byte }

func (s *sink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

func buildRequest(req serializers.Request, opts Options) (*chatRequest, error) {
	body := &chatRequest{Model: req.Model, Temperature: req.Temperature}
	switch opts.MaxTokensField {
	case "", FieldMaxTokens:
		body.MaxTokens = req.MaxTokens
	case FieldMaxCompletionTokens:
		body.MaxCompletionTokens = req.MaxTokens
	default:
		return nil, fmt.Errorf("unknown MaxTokensField %q (want %q or %q)",
			opts.MaxTokensField, FieldMaxTokens, FieldMaxCompletionTokens)
	}
	if req.MaxTokens < 0 {
		return nil, fmt.Errorf("negative MaxTokens %d", req.MaxTokens)
	}
	body.ReasoningEffort = reasoningEffort(req.ThinkingBudget)

	var e encoder
	if err := e.encodeMessages(req.Messages); err != nil {
		return nil, err
	}
	body.Messages = e.msgs

	// tool_choice is checked even when it cannot be sent, so a mistake
	// shows up before the first request with tools.
	choice, err := encodeToolChoice(req.ToolChoice)
	if err != nil {
		return nil, err
	}
	if len(req.Tools) > 0 {
		body.Tools = make([]chatTool, len(req.Tools))
		for i, t := range req.Tools {
			ct, err := encodeTool(t)
			if err != nil {
				return nil, fmt.Errorf("tool %d: %w", i, err)
			}
			body.Tools[i] = ct
		}
		body.ToolChoice = choice
		if req.ToolChoice.DisableParallel {
			body.ParallelToolCalls = new(false)
		}
	}
	if req.Stream {
		body.Stream = true
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if opts.PromptCacheKey {
		if len(req.Cache.Key) > MaxPromptCacheKey {
			return nil, fmt.Errorf("prompt cache key is %d bytes, want at most %d", len(req.Cache.Key), MaxPromptCacheKey)
		}
		body.PromptCacheKey = req.Cache.Key
	}
	return body, nil
}

// reasoningEffort maps a thinking budget onto reasoning_effort; see the
// package documentation.
func reasoningEffort(budget int) string {
	switch {
	case budget <= 0:
		return ""
	case budget < 4096:
		return "low"
	case budget < 16384:
		return "medium"
	}
	return "high"
}

func encodeTool(t serializers.Tool) (chatTool, error) {
	if t.Name == "" {
		return chatTool{}, errors.New("name is required")
	}
	params := t.Parameters
	if isBlank(params) {
		params = json.RawMessage(`{"type":"object"}`)
	} else if !isObject(params) {
		return chatTool{}, fmt.Errorf("%s: parameters are not a JSON object", t.Name)
	}
	return chatTool{Type: "function", Function: toolFunction{
		Name: t.Name, Description: t.Description, Parameters: params,
	}}, nil
}

func encodeToolChoice(tc serializers.ToolChoice) (any, error) {
	switch tc.Mode {
	case "":
		return nil, nil
	case serializers.ToolChoiceAuto:
		return "auto", nil
	case serializers.ToolChoiceAny:
		return "required", nil
	case serializers.ToolChoiceNone:
		return "none", nil
	case serializers.ToolChoiceTool:
		if tc.Name == "" {
			return nil, errors.New("tool choice: mode tool needs a Name")
		}
		return namedToolChoice{Type: "function", Function: namedToolFunction{Name: tc.Name}}, nil
	}
	return nil, fmt.Errorf("tool choice: unknown mode %q", tc.Mode)
}

// encoder turns messages into wire messages. The tool calls of all
// messages are carved from one slice, and text content points into the
// request where it can, so that a long conversation costs few allocations.
type encoder struct {
	msgs  []chatMessage
	calls []chatToolCall
	// images are the tool results' images waiting for the user message
	// after the tool messages, each result's after a text naming its call.
	images []contentPart
}

// flushImages emits the tool results' images gathered since the last
// flush as one user message: a tool message carries text only, and
// nothing but tool messages may come between an assistant's tool calls
// and their results, so the images come right after the results.
func (e *encoder) flushImages() {
	if len(e.images) == 0 {
		return
	}
	e.msgs = append(e.msgs, chatMessage{Role: "user", Content: e.images})
	e.images = nil
}

// encodeMessages hoists the effective system prompt to the front, then
// encodes every other message in order.
func (e *encoder) encodeMessages(msgs []conversation.Message) error {
	system := conversation.EffectiveSystem(msgs)
	n, calls := len(system), 0
	for i := range msgs {
		for j := range msgs[i].Content {
			switch msgs[i].Content[j].Type {
			case conversation.TypeToolUse:
				calls++
			case conversation.TypeToolResult:
				n++
			}
		}
		n++
	}
	e.msgs = make([]chatMessage, 0, n)
	e.calls = make([]chatToolCall, 0, calls)
	for i := range system {
		e.msgs = append(e.msgs, chatMessage{Role: "system", Content: &system[i].Text})
	}
	for i := range msgs {
		m := &msgs[i]
		var err error
		if m.Role == conversation.RoleAssistant {
			e.flushImages()
		}
		switch m.Role {
		case conversation.RoleSystem:
			continue // already hoisted
		case conversation.RoleUser:
			err = e.user(m)
		case conversation.RoleAssistant:
			err = e.assistant(m)
		case conversation.RoleTool:
			err = e.toolResults(m)
		default:
			err = fmt.Errorf("unknown role %q", m.Role)
		}
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
	}
	e.flushImages()
	return nil
}

// user emits a user message's tool results as tool messages, then the rest
// as one user message.
func (e *encoder) user(m *conversation.Message) error {
	var texts, images, results int
	for i := range m.Content {
		switch m.Content[i].Type {
		case conversation.TypeText:
			texts++
		case conversation.TypeImage:
			images++
		case conversation.TypeToolResult:
			results++
		default:
			return fmt.Errorf("content[%d]: a user message cannot hold a %q block", i, m.Content[i].Type)
		}
	}
	if results > 0 {
		if err := e.toolResults(m); err != nil {
			return err
		}
	}
	e.flushImages()
	if results > 0 && texts+images == 0 {
		return nil
	}
	if images == 0 && texts <= 1 {
		e.msgs = append(e.msgs, chatMessage{Role: "user", Content: textContent(m)})
		return nil
	}
	parts := make([]contentPart, 0, texts+images)
	for i := range m.Content {
		b := &m.Content[i]
		switch b.Type {
		case conversation.TypeText:
			parts = append(parts, contentPart{Type: "text", Text: &b.Text})
		case conversation.TypeImage:
			if b.MediaType == "" || b.Data == "" {
				return fmt.Errorf("content[%d]: image block: media_type and data are required", i)
			}
			url := "data:" + b.MediaType + ";base64," + b.Data
			parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: url}})
		}
	}
	e.msgs = append(e.msgs, chatMessage{Role: "user", Content: parts})
	return nil
}

func (e *encoder) assistant(m *conversation.Message) error {
	start, texts := len(e.calls), 0
	for i := range m.Content {
		b := &m.Content[i]
		switch b.Type {
		case conversation.TypeText:
			texts++
		case conversation.TypeThinking, conversation.TypeRedactedThinking:
			// Not sent: Chat Completions has no field for them.
		case conversation.TypeToolUse:
			if b.ID == "" || b.Name == "" {
				return fmt.Errorf("content[%d]: tool_use block: id and name are required", i)
			}
			args := "{}"
			if !isBlank(b.Input) {
				if !isObject(b.Input) {
					return fmt.Errorf("content[%d]: tool call %s (%s): input is not a JSON object", i, b.ID, b.Name)
				}
				args = string(b.Input)
			}
			e.calls = append(e.calls, chatToolCall{ID: b.ID, Type: "function",
				Function: functionCall{Name: b.Name, Arguments: args}})
		default:
			return fmt.Errorf("content[%d]: an assistant message cannot hold a %q block", i, b.Type)
		}
	}
	msg := chatMessage{Role: "assistant"}
	if end := len(e.calls); end > start {
		msg.ToolCalls = e.calls[start:end:end]
	}
	switch {
	case texts > 0:
		msg.Content = textContent(m)
	case msg.ToolCalls == nil:
		// Neither text nor tool calls (thinking only, or empty): servers
		// want one or the other, so send empty text rather than null.
		msg.Content = ""
	}
	e.msgs = append(e.msgs, msg)
	return nil
}

// toolResults emits one tool message per ToolResult block of m, in order.
// Other blocks are the caller's business (a user message's text); in a
// tool-role message they are an error.
func (e *encoder) toolResults(m *conversation.Message) error {
	for i := range m.Content {
		b := &m.Content[i]
		if b.Type != conversation.TypeToolResult {
			if m.Role == conversation.RoleTool {
				return fmt.Errorf("content[%d]: a tool message cannot hold a %q block", i, b.Type)
			}
			continue
		}
		if b.ToolUseID == "" {
			return fmt.Errorf("content[%d]: tool_result block: tool_use_id is required", i)
		}
		text, err := resultText(b)
		if err != nil {
			return fmt.Errorf("content[%d]: tool result %s: %w", i, b.ToolUseID, err)
		}
		if err := e.resultImages(b); err != nil {
			return fmt.Errorf("content[%d]: tool result %s: %w", i, b.ToolUseID, err)
		}
		e.msgs = append(e.msgs, chatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: text})
	}
	return nil
}

// resultImages adds the images of the tool result b to those waiting for
// the user message after the tool messages.
func (e *encoder) resultImages(b *conversation.Block) error {
	first := true
	for i := range b.Content {
		c := &b.Content[i]
		if c.Type != conversation.TypeImage {
			continue
		}
		if c.MediaType == "" || c.Data == "" {
			return fmt.Errorf("content[%d]: image block: media_type and data are required", i)
		}
		if first {
			intro := imagesOf + b.ToolUseID + ":"
			e.images = append(e.images, contentPart{Type: "text", Text: &intro})
			first = false
		}
		url := "data:" + c.MediaType + ";base64," + c.Data
		e.images = append(e.images, contentPart{Type: "image_url", ImageURL: &imageURL{URL: url}})
	}
	return nil
}

// textContent returns m's text blocks, concatenated, as message content: a
// pointer into m when there is a single one (no copy), else a new string.
func textContent(m *conversation.Message) any {
	var only *string
	for i := range m.Content {
		if m.Content[i].Type != conversation.TypeText {
			continue
		}
		if only != nil {
			return m.Text()
		}
		only = &m.Content[i].Text
	}
	if only == nil {
		return ""
	}
	return only
}

// resultText flattens a tool result's content to text: texts as they are,
// images as imageBelow, joined by newlines; prefixed when it failed.
// A lone text is returned as a pointer into b (no copy).
func resultText(b *conversation.Block) (any, error) {
	var prefix string
	if b.IsError {
		prefix = errorPrefix
	}
	if len(b.Content) == 1 && b.Content[0].Type == conversation.TypeText {
		if prefix == "" {
			return &b.Content[0].Text, nil
		}
		return prefix + b.Content[0].Text, nil
	}
	buf := []byte(prefix)
	for i, c := range b.Content {
		if i > 0 {
			buf = append(buf, '\n')
		}
		switch c.Type {
		case conversation.TypeText:
			buf = append(buf, c.Text...)
		case conversation.TypeImage:
			buf = append(buf, imageBelow...)
		default:
			return nil, fmt.Errorf("content[%d] is %q (want text or image)", i, c.Type)
		}
	}
	return string(buf), nil
}

// isObject reports whether raw is valid JSON whose value is an object.
func isObject(raw []byte) bool {
	for i, c := range raw {
		if !isSpace(c) {
			return c == '{' && json.Valid(raw[i:])
		}
	}
	return false
}

// isBlank reports whether raw is empty or only JSON white space.
func isBlank(raw []byte) bool {
	for _, c := range raw {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
