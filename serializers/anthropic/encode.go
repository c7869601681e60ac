package anthropic

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/serializers"
)

// maxToolName is the longest tool name the Messages API accepts
// (^[a-zA-Z0-9_-]{1,128}$).
const maxToolName = 128

// The API versions EncodeRequest knows. The version is sent by the caller
// as the anthropic-version header; it matters here because the two accept
// different bodies.
const (
	// DefaultVersion is the API version a zero Options means.
	DefaultVersion = "2023-06-01"
	// Version20261021 rejects temperature (and top_p, top_k, which panto
	// does not send); EncodeRequest refuses a Temperature under it.
	Version20261021 = "2026-10-21"
)

const (
	// DefaultMaxTokens is sent as max_tokens when Request.MaxTokens is 0:
	// the Messages API requires the field.
	DefaultMaxTokens = 8192
	// MinThinkingBudget is the smallest budget_tokens the API accepts.
	MinThinkingBudget = 1024
	// SystemSeparator joins the surviving system blocks into the one
	// system string (design doc §1.4).
	SystemSeparator = "\n\n---\n\n"
)

// Options says which variant of the wire format to write.
type Options struct {
	// Version is the anthropic-version the body is for; empty means
	// DefaultVersion.
	Version string
}

// toolNamePattern is the published constraint on a tool definition's name.

// EncodeRequest encodes req as a Messages API request body.
//
// The system prompt is derived with conversation.EffectiveSystem; each
// surviving block loses its trailing newlines ("\n", "\r\n"), blocks left
// empty are skipped, and the rest are joined with SystemSeparator into the
// top-level system string, which is left out when empty. The other
// messages follow in order; consecutive ones that map to the same wire
// role (tool results travel as user content) are merged into one wire
// message, tool results first, and empty text blocks are dropped, as are
// messages left with nothing to send.
//
// With req.Cache.Mark set, the system prompt is sent as an array of one
// text block, and it and up to two message blocks carry cache_control
// breakpoints (see cache.go for which); req.Cache.Key is not part of this
// wire. The marks depend on req alone, so the same request gives the same
// bytes.
//
// Errors name the operation and, for a message, its index in
// req.Messages: "anthropic: encode request: message 12: ...".
func EncodeRequest(req serializers.Request, opts Options) ([]byte, error) {
	b, err := encodeRequest(make([]byte, 0, sizeHint(req)), &req, opts)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	return b, nil
}

func encodeRequest(b []byte, req *serializers.Request, opts Options) ([]byte, error) {
	version := opts.Version
	if version == "" {
		version = DefaultVersion
	}
	if version != DefaultVersion && version != Version20261021 {
		return nil, fmt.Errorf("unknown API version %q (want %s or %s)", version, DefaultVersion, Version20261021)
	}
	if req.Model == "" {
		return nil, errors.New("model is required")
	}
	maxTokens := req.MaxTokens
	switch {
	case maxTokens < 0:
		return nil, fmt.Errorf("max tokens is %d, want 0 (default) or more", maxTokens)
	case maxTokens == 0:
		maxTokens = DefaultMaxTokens
	}
	if req.ThinkingBudget < 0 || req.ThinkingBudget > 0 && req.ThinkingBudget < MinThinkingBudget {
		return nil, fmt.Errorf("thinking budget is %d, want 0 (off) or at least %d", req.ThinkingBudget, MinThinkingBudget)
	}
	if req.ThinkingBudget >= maxTokens {
		return nil, fmt.Errorf("thinking budget %d must be less than max tokens %d", req.ThinkingBudget, maxTokens)
	}
	if t := req.Temperature; t != nil {
		if version == Version20261021 {
			return nil, fmt.Errorf("temperature is not accepted by API version %s", version)
		}
		if math.IsNaN(*t) || *t < 0 || *t > 1 {
			return nil, fmt.Errorf("temperature is %v, want 0..1", *t)
		}
	}

	b = append(b, '{')
	b = appendKey(b, "model", true)
	b = appendString(b, req.Model)
	b = appendKey(b, "max_tokens", false)
	b = appendInt(b, maxTokens)
	m := noMarks
	if req.Cache.Mark {
		m = planMarks(req.Messages)
	}
	b = appendSystem(b, conversation.EffectiveSystem(req.Messages), req.Cache.Mark)
	b, err := appendMessages(b, req.Messages, m)
	if err != nil {
		return nil, err
	}
	if len(req.Tools) > 0 {
		if b, err = appendTools(b, req.Tools); err != nil {
			return nil, err
		}
	}
	if req.ToolChoice.Mode != "" {
		if b, err = appendToolChoice(b, req.ToolChoice, req.Tools); err != nil {
			return nil, err
		}
	}
	if req.ThinkingBudget > 0 {
		b = appendKey(b, "thinking", false)
		b = append(b, `{"type":"enabled","budget_tokens":`...)
		b = appendInt(b, req.ThinkingBudget)
		b = append(b, '}')
	}
	if req.Temperature != nil {
		b = appendKey(b, "temperature", false)
		b = strconv.AppendFloat(b, *req.Temperature, 'f', -1, 64)
	}
	if req.Stream {
		b = appendKey(b, "stream", false)
		b = append(b, "true"...)
	}
	return append(b, '}'), nil
}

// sizeHint estimates the body's size from the text it will carry, so the
// buffer is allocated once.
func sizeHint(req serializers.Request) int {
	n := 512 + 256*len(req.Tools)
	for i := range req.Messages {
		n += 64
		for j := range req.Messages[i].Content {
			blk := &req.Messages[i].Content[j]
			n += 96 + len(blk.Text) + len(blk.Thinking) + len(blk.Signature) + len(blk.Data) + len(blk.Input)
			for k := range blk.Content {
				n += 48 + len(blk.Content[k].Text) + len(blk.Content[k].Data)
			}
		}
	}
	return n + n/8 // room for escapes, so the buffer rarely grows
}

// appendSystem appends the "system" field for the derived blocks, or
// nothing when no block has text left. With mark set it is an array of
// one text block that carries a cache breakpoint (a string cannot), the
// same text either way.
func appendSystem(b []byte, blocks []conversation.SystemText, mark bool) []byte {
	text := SystemText(blocks)
	switch {
	case text == "":
		return b
	case mark:
		b = appendKey(b, "system", false)
		b = append(b, `[{"type":"text","text":"`...)
		b = appendEscaped(b, text)
		b = append(b, '"')
		b = append(b, cacheControl...)
		return append(b, '}', ']')
	default:
		b = appendKey(b, "system", false)
		b = append(b, '"')
		b = appendEscaped(b, text)
		return append(b, '"')
	}
}

// SystemText is the system prompt as one text, as a request sends it:
// each block without its trailing newlines ("\n" and "\r\n"; a lone
// "\r" stays), empty blocks left out, joined by SystemSeparator.
func SystemText(blocks []conversation.SystemText) string {
	var b strings.Builder
	for _, blk := range blocks {
		text := blk.Text
		for {
			if t, ok := strings.CutSuffix(text, "\r\n"); ok {
				text = t
			} else if t, ok := strings.CutSuffix(text, "\n"); ok {
				text = t
			} else {
				break
			}
		}
		if text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(SystemSeparator)
		}
		b.WriteString(text)
	}
	return b.String()
}

// wireRole returns the Messages API role a conversation message travels
// as; ok is false for system messages, which travel in "system".
func wireRole(r conversation.Role) (role string, ok bool) {
	switch r {
	case conversation.RoleUser, conversation.RoleTool:
		return "user", true
	case conversation.RoleAssistant:
		return "assistant", true
	}
	return "", false
}

// sendable reports whether blk is put on the wire: everything but empty
// text (a text block's text has minLength 1).
func sendable(blk *conversation.Block) bool {
	switch blk.Type {
	case conversation.TypeText:
		return blk.Text != ""
	case conversation.TypeThinking:
		// Anthropic rejects unsigned thinking; reasoning decoded from an
		// OpenAI-compatible server carries no signature.
		return blk.Signature != ""
	}
	return true
}

// hasSendable reports whether m has at least one block to send.
func hasSendable(m *conversation.Message) bool {
	for i := range m.Content {
		if sendable(&m.Content[i]) {
			return true
		}
	}
	return false
}

// appendMessages appends the "messages" field, the blocks m names
// marked as cache breakpoints.
func appendMessages(b []byte, msgs []conversation.Message, m marks) ([]byte, error) {
	b = appendKey(b, "messages", false)
	b = append(b, '[')
	w := blockWriter{b: b, marks: m}
	first := true
	err := eachRun(msgs, true, func(start, end int, role string) error {
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
		w.b = append(w.b, `{"role":"`...)
		w.b = append(w.b, role...)
		w.b = append(w.b, `","content":[`...)
		w.n = 0
		if err := eachRunBlock(msgs, start, end, role, w.write); err != nil {
			return err
		}
		w.b = append(w.b, ']', '}')
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(w.b, ']'), nil
}

// blockWriter appends the blocks of the wire messages, counting them so
// the marked ones get their breakpoint.
type blockWriter struct {
	b     []byte
	marks marks
	n     int // blocks written in the current wire message, for the commas
	seq   int // blocks written in all wire messages
}

func (w *blockWriter) write(i, j int, blk *conversation.Block) error {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	b, err := appendBlock(w.b, blk)
	if err != nil {
		return fmt.Errorf("message %d: content[%d]: %w", i, j, err)
	}
	if w.marks.has(w.seq) {
		// Every block ends with the '}' of its object: the breakpoint goes
		// before it.
		b = append(b[:len(b)-1], cacheControl...)
		b = append(b, '}')
	}
	w.b = b
	w.n++
	w.seq++
	return nil
}

// eachRun walks msgs once, validating each message when validate is set,
// and cuts the walk into runs of messages that share a wire role; fn is
// called with each run, which becomes one wire message. System messages
// and messages with nothing to send do not end a run.
func eachRun(msgs []conversation.Message, validate bool, fn func(start, end int, role string) error) error {
	runStart, runRole := -1, ""
	for i := range msgs {
		m := &msgs[i]
		if validate {
			if err := m.Validate(); err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
		}
		role, ok := wireRole(m.Role)
		if !ok || !hasSendable(m) || role == runRole {
			continue
		}
		if runStart >= 0 {
			if err := fn(runStart, i, runRole); err != nil {
				return err
			}
		}
		runStart, runRole = i, role
	}
	if runStart >= 0 {
		return fn(runStart, len(msgs), runRole)
	}
	return nil
}

// eachRunBlock calls fn with the sendable blocks of the non-system
// messages of msgs[start:end] in their wire order: in a user message the
// tool results come first, as the API wants them.
func eachRunBlock(msgs []conversation.Message, start, end int, role string, fn func(i, j int, blk *conversation.Block) error) error {
	pass := func(keep func(*conversation.Block) bool) error {
		for i := start; i < end; i++ {
			m := &msgs[i]
			if m.Role == conversation.RoleSystem {
				continue
			}
			for j := range m.Content {
				blk := &m.Content[j]
				if !sendable(blk) || keep != nil && !keep(blk) {
					continue
				}
				if err := fn(i, j, blk); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if role != "user" {
		return pass(nil)
	}
	if err := pass(isToolResult); err != nil {
		return err
	}
	return pass(isNotToolResult)
}

func isToolResult(blk *conversation.Block) bool    { return blk.Type == conversation.TypeToolResult }
func isNotToolResult(blk *conversation.Block) bool { return blk.Type != conversation.TypeToolResult }

// appendBlock appends one content block. The message was validated, so
// the block's type is allowed for its role and its required fields are
// set.
func appendBlock(b []byte, blk *conversation.Block) ([]byte, error) {
	switch blk.Type {
	case conversation.TypeText:
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, blk.Text)
	case conversation.TypeImage:
		return appendImage(b, blk)
	case conversation.TypeThinking:
		b = append(b, `{"type":"thinking","thinking":`...)
		b = appendString(b, blk.Thinking)
		b = append(b, `,"signature":`...)
		b = appendString(b, blk.Signature)
	case conversation.TypeRedactedThinking:
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = appendString(b, blk.Data)
	case conversation.TypeToolUse:
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendString(b, blk.ID)
		b = append(b, `,"name":`...)
		b = appendString(b, blk.Name)
		b = append(b, `,"input":`...)
		if len(blk.Input) == 0 {
			b = append(b, '{', '}')
		} else {
			var err error
			if b, err = appendObject(b, blk.Input); err != nil {
				return nil, fmt.Errorf("tool_use %s: input: %w", blk.ID, err)
			}
		}
	case conversation.TypeToolResult:
		return appendToolResult(b, blk)
	default:
		return nil, fmt.Errorf("a %q block cannot be sent", blk.Type)
	}
	return append(b, '}'), nil
}

// supportedImageTypes are the media types the API accepts for images.
var supportedImageTypes = [...]string{"image/jpeg", "image/png", "image/gif", "image/webp"}

func appendImage(b []byte, blk *conversation.Block) ([]byte, error) {
	supported := false
	for _, t := range supportedImageTypes {
		supported = supported || blk.MediaType == t
	}
	if !supported {
		return nil, fmt.Errorf("image media type %q is not supported (want image/jpeg, image/png, image/gif or image/webp)", blk.MediaType)
	}
	b = append(b, `{"type":"image","source":{"type":"base64","media_type":`...)
	b = appendString(b, blk.MediaType)
	b = append(b, `,"data":`...)
	b = appendString(b, blk.Data)
	return append(b, '}', '}'), nil
}

// appendToolResult appends a tool_result block. Its content is a string
// when it is one text block, an array of text and image blocks otherwise,
// and left out when nothing is left to send; is_error only appears when
// true.
func appendToolResult(b []byte, blk *conversation.Block) ([]byte, error) {
	b = append(b, `{"type":"tool_result","tool_use_id":`...)
	b = appendString(b, blk.ToolUseID)
	count, only := 0, -1
	for i := range blk.Content {
		if sendable(&blk.Content[i]) {
			count++
			only = i
		}
	}
	switch {
	case count == 1 && blk.Content[only].Type == conversation.TypeText:
		b = append(b, `,"content":`...)
		b = appendString(b, blk.Content[only].Text)
	case count > 0:
		b = append(b, `,"content":[`...)
		n := 0
		for i := range blk.Content {
			c := &blk.Content[i]
			if !sendable(c) {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendBlock(b, c); err != nil {
				return nil, fmt.Errorf("tool_result %s: content[%d]: %w", blk.ToolUseID, i, err)
			}
			n++
		}
		b = append(b, ']')
	}
	if blk.IsError {
		b = append(b, `,"is_error":true`...)
	}
	return append(b, '}'), nil
}

// appendTools appends the "tools" field.
func appendTools(b []byte, tools []serializers.Tool) ([]byte, error) {
	b = appendKey(b, "tools", false)
	b = append(b, '[')
	for i, t := range tools {
		if !rules.ValidToolName(t.Name, maxToolName) {
			return nil, fmt.Errorf("tool %d: name %q must be 1 to %d letters, digits, _ or -", i, t.Name, maxToolName)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, t.Name)
		if t.Description != "" {
			b = append(b, `,"description":`...)
			b = appendString(b, t.Description)
		}
		b = append(b, `,"input_schema":`...)
		if len(t.Parameters) == 0 {
			b = append(b, `{"type":"object"}`...)
		} else {
			var err error
			if b, err = appendObject(b, t.Parameters); err != nil {
				return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendToolChoice appends the "tool_choice" field. The API's "none"
// choice has no disable_parallel_tool_use (it would be meaningless), so
// DisableParallel is not sent with it.
func appendToolChoice(b []byte, tc serializers.ToolChoice, tools []serializers.Tool) ([]byte, error) {
	switch tc.Mode {
	case serializers.ToolChoiceAuto, serializers.ToolChoiceAny, serializers.ToolChoiceNone:
		if tc.Name != "" {
			return nil, fmt.Errorf("tool choice %s: a tool name (%q) is only for mode tool", tc.Mode, tc.Name)
		}
	case serializers.ToolChoiceTool:
		if tc.Name == "" {
			return nil, errors.New("tool choice tool: a tool name is required")
		}
		offered := false
		for _, t := range tools {
			offered = offered || t.Name == tc.Name
		}
		if !offered {
			return nil, fmt.Errorf("tool choice tool: %q is not among the tools offered", tc.Name)
		}
	default:
		return nil, fmt.Errorf("unknown tool choice mode %q (want auto, any, none or tool)", tc.Mode)
	}
	b = appendKey(b, "tool_choice", false)
	b = append(b, `{"type":`...)
	b = appendString(b, string(tc.Mode))
	if tc.Mode == serializers.ToolChoiceTool {
		b = append(b, `,"name":`...)
		b = appendString(b, tc.Name)
	}
	if tc.DisableParallel && tc.Mode != serializers.ToolChoiceNone {
		b = append(b, `,"disable_parallel_tool_use":true`...)
	}
	return append(b, '}'), nil
}
