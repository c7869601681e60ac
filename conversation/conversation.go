// Package conversation holds panto's data model: messages, their content
// blocks, and the one rule that derives the effective system prompt.
//
// The system prompt is conversation state. It lives in the message list as
// system-role messages whose content is a single System block carrying a
// mode: append adds to the running prompt, replace wipes everything before
// it and starts again. A block may carry a key that makes it a named
// section: a later append with the same key updates it in place or, with
// an empty text, removes it. A block may also say who wrote it (its
// source), for people. Because every change is a positioned message, the
// prompt as of any earlier point is the derivation applied to a prefix of
// the list (see EffectiveSystem).
//
// A message has one JSON shape, the session log's (see MessageJSON).
//
// This package is stdlib-only and knows nothing about wire formats, files or
// plugins: the session log, the serializers, the host and the SDK all build
// on it. What does not belong here: JSON shapes of a provider, I/O, HTTP.
package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Role says who a message is from.
type Role string

// The roles a message may have.
const (
	// RoleSystem messages carry the system prompt as System blocks.
	RoleSystem Role = "system"
	// RoleUser messages carry what the user typed (text and images),
	// after the text blocks panto added to it, marked (Block.Added; see
	// Message.Typed).
	RoleUser Role = "user"
	// RoleAssistant messages carry the model's reply: text, thinking and
	// tool calls.
	RoleAssistant Role = "assistant"
	// RoleTool messages carry the results of the tool calls of the
	// assistant message before them, one ToolResult block per call.
	RoleTool Role = "tool"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// Message is one entry of a conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// Conversation is an ordered list of messages. The zero value is an empty
// conversation ready to use. It is not safe for concurrent use: the host
// owns it and serialises changes.
type Conversation struct {
	Messages []Message
}

// AddSystemMessage appends a system message in append mode: text is added
// to the effective system prompt.
func (c *Conversation) AddSystemMessage(text string) {
	c.Messages = append(c.Messages, SystemMessage(text, ModeAppend))
}

// ReplaceSystemMessage appends a system message in replace mode: when the
// prompt is derived, everything before it is discarded and text starts the
// prompt afresh. History is never rewritten; the old blocks stay in the
// list and in the log.
func (c *Conversation) ReplaceSystemMessage(text string) {
	c.Messages = append(c.Messages, SystemMessage(text, ModeReplace))
}

// SetSection appends a keyed system message (KeyedSystemMessage): the
// section key gets text, in place if it is in the prompt, else at the
// end; an empty text removes it.
func (c *Conversation) SetSection(key, text string) {
	c.Messages = append(c.Messages, KeyedSystemMessage(key, text))
}

// Append adds messages to the end of the conversation.
func (c *Conversation) Append(msgs ...Message) {
	c.Messages = append(c.Messages, msgs...)
}

// EffectiveSystem returns the system prompt of the whole conversation.
func (c *Conversation) EffectiveSystem() []SystemText {
	return EffectiveSystem(c.Messages)
}

// SystemMessage builds a system-role message holding one unkeyed System
// block.
func SystemMessage(text string, mode Mode) Message {
	return Message{Role: RoleSystem, Content: []Block{System(text, mode)}}
}

// KeyedSystemMessage builds a system message in append mode whose one
// System block is the section key (see ValidKey): when the prompt is
// derived, it sets that section's text in place if the section is in the
// prompt, and adds it at the end if not; an empty text removes the
// section (and adds nothing when there is none).
func KeyedSystemMessage(key, text string) Message {
	return Message{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: text, Mode: ModeAppend, Key: key}}}
}

// WithSource returns m with source on each of its System blocks: who
// wrote them, for people (a layer's file, a flag, an extension, panto's
// re-seed). m itself is not changed.
//
//	conversation.SystemMessage(text, conversation.ModeAppend).WithSource("project /p/.panto/APPEND_SYSTEM.md")
func (m Message) WithSource(source string) Message {
	m.Content = append([]Block(nil), m.Content...)
	for i := range m.Content {
		if m.Content[i].Type == TypeSystem {
			m.Content[i].Source = source
		}
	}
	return m
}

// UserText builds a user message holding one text block.
func UserText(text string) Message {
	return Message{Role: RoleUser, Content: []Block{Text(text)}}
}

// AssistantText builds an assistant message holding one text block.
func AssistantText(text string) Message {
	return Message{Role: RoleAssistant, Content: []Block{Text(text)}}
}

// Text returns the text of every text block of m, concatenated. Other
// blocks are skipped.
func (m Message) Text() string {
	var n int
	for _, b := range m.Content {
		if b.Type == TypeText {
			n += len(b.Text)
		}
	}
	buf := make([]byte, 0, n)
	for _, b := range m.Content {
		if b.Type == TypeText {
			buf = append(buf, b.Text...)
		}
	}
	return string(buf)
}

// Typed returns what the user typed in a user message, without what panto
// added to it: the text of the text blocks not marked added
// (Block.Added), concatenated. A message none of whose text blocks is
// marked — every message of a log written before the marker existed,
// when panto put each USER_PROMPT.md text first and the typed text last,
// as one block each — gives its last text block. It is the one rule of
// what a jump back to a message of the user's hands back to edit and
// send, and of what the tree, the session list and the export show of
// it; the request sends every block, as Text has them.
func (m Message) Typed() string {
	last, marked := -1, false
	for i := range m.Content {
		if b := &m.Content[i]; b.Type == TypeText {
			last = i
			marked = marked || b.Added != ""
		}
	}
	switch {
	case last < 0:
		return ""
	case !marked:
		return m.Content[last].Text
	}
	var n, blocks, one int
	for i := range m.Content {
		if b := &m.Content[i]; b.Type == TypeText && b.Added == "" {
			n, blocks, one = n+len(b.Text), blocks+1, i
		}
	}
	if blocks == 1 {
		return m.Content[one].Text // no copy
	}
	buf := make([]byte, 0, n)
	for i := range m.Content {
		if b := &m.Content[i]; b.Type == TypeText && b.Added == "" {
			buf = append(buf, b.Text...)
		}
	}
	return string(buf)
}

// ToolUses returns the tool-use blocks of m, in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == TypeToolUse {
			out = append(out, b)
		}
	}
	return out
}

// ErrInvalidMessage is wrapped by Validate's errors. A caller that reads
// messages from outside (a log, a plugin) reports it with where the
// message came from.
var ErrInvalidMessage = errors.New("invalid message")

// Validate checks that m is well formed: a known role, and only the blocks
// that role may carry, each well formed itself. A system message holds
// only System blocks; a tool message only ToolResult blocks; a user
// message text and images (and tool results, as some logs carry them);
// an assistant message text, thinking and tool uses.
func (m Message) Validate() error {
	if !m.Role.Valid() {
		return fmt.Errorf("%w: unknown role %q", ErrInvalidMessage, m.Role)
	}
	for i := range m.Content {
		b := &m.Content[i] // by reference: a Block is large, and this runs on every request
		if !allowed(m.Role, b.Type) {
			return fmt.Errorf("%w: %s message content[%d]: a %s message cannot hold a %q block",
				ErrInvalidMessage, m.Role, i, m.Role, b.Type)
		}
		if err := b.Validate(); err != nil {
			return fmt.Errorf("%w: %s message content[%d]: %w", ErrInvalidMessage, m.Role, i, err)
		}
		if b.Added != "" && m.Role != RoleUser {
			return fmt.Errorf("%w: %s message content[%d]: only a text block of a user message may be marked added", ErrInvalidMessage, m.Role, i)
		}
	}
	return nil
}

func allowed(r Role, t BlockType) bool {
	switch r {
	case RoleSystem:
		return t == TypeSystem
	case RoleUser:
		return t == TypeText || t == TypeImage || t == TypeToolResult
	case RoleAssistant:
		return t == TypeText || t == TypeThinking || t == TypeRedactedThinking || t == TypeToolUse
	case RoleTool:
		return t == TypeToolResult
	}
	return false
}

// Clone returns a deep copy of m, so the copy can be changed without
// touching the original (tool inputs and result contents included).
func (m Message) Clone() Message {
	out := Message{Role: m.Role, Content: make([]Block, len(m.Content))}
	for i, b := range m.Content {
		out.Content[i] = b.clone()
	}
	return out
}

func (b Block) clone() Block {
	if b.Input != nil {
		b.Input = append(json.RawMessage(nil), b.Input...)
	}
	if b.Content != nil {
		c := make([]Block, len(b.Content))
		for i, x := range b.Content {
			c[i] = x.clone()
		}
		b.Content = c
	}
	return b
}
