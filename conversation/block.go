package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// BlockType names the kind of a content block.
type BlockType string

// The kinds of content block.
const (
	// TypeText is plain text (Text).
	TypeText BlockType = "text"
	// TypeThinking is the model's visible reasoning (Thinking) with the
	// provider's Signature, sent back verbatim on later requests. The
	// Signature is empty when the provider gave none (reasoning from an
	// OpenAI-compatible server); such blocks are not sent to Anthropic.
	TypeThinking BlockType = "thinking"
	// TypeRedactedThinking is reasoning the provider encrypted (Data),
	// sent back verbatim.
	TypeRedactedThinking BlockType = "redacted_thinking"
	// TypeToolUse is a tool call: ID, Name and the JSON object Input.
	TypeToolUse BlockType = "tool_use"
	// TypeToolResult answers the tool call ToolUseID with Content (text
	// and image blocks); IsError marks a failed call.
	TypeToolResult BlockType = "tool_result"
	// TypeImage is an image: base64 Data of MediaType (image/png, ...).
	TypeImage BlockType = "image"
	// TypeSystem is system-prompt text with a Mode (append or replace),
	// optionally a Key that names it as a section, and a Source that says
	// who wrote it (see EffectiveSystem).
	TypeSystem BlockType = "system"
)

// Mode says how a System block combines with the system text before it.
type Mode string

// The system modes.
const (
	// ModeAppend adds the block to the effective system prompt. The empty
	// Mode means ModeAppend, so records written before modes existed read
	// back unchanged.
	ModeAppend Mode = "append"
	// ModeReplace discards every earlier system block, then adds this one.
	ModeReplace Mode = "replace"
)

// Valid reports whether m is append, replace or empty (append).
func (m Mode) Valid() bool {
	return m == "" || m == ModeAppend || m == ModeReplace
}

// Normalize returns ModeAppend for the empty mode and m otherwise.
func (m Mode) Normalize() Mode {
	if m == "" {
		return ModeAppend
	}
	return m
}

// Block is one piece of a message's content. Which fields are meaningful
// depends on Type (see the Type* constants); the others are empty. The
// JSON form of Block is how the blocks of user, assistant and tool
// messages are written; a system message writes its System blocks as
// text blocks, their mode, key and source on the message (MessageJSON).
type Block struct {
	Type BlockType `json:"type"`

	// Added marks a text block of a user message that panto put there
	// besides what the user typed, and says where it came from, in the
	// words of a system block's Source: "project
	// /p/.panto/USER_PROMPT.md". Empty for what the user typed (and for
	// every block of a log written before the marker; see Message.Typed).
	// It is never sent to a model: the request holds the block's text as
	// it holds any other. Only a user message's text blocks have one.
	Added string `json:"added,omitempty"`

	// Text is the text of a text block or of a system block.
	Text string `json:"text,omitempty"`
	// Mode is the mode of a system block.
	Mode Mode `json:"mode,omitempty"`
	// Key names a system block as a section that a later keyed append
	// updates in place or removes (see EffectiveSystem and ValidKey);
	// empty for an unkeyed block. Only system blocks have one.
	Key string `json:"key,omitempty"`
	// Source says who wrote a system block, for people: a layer's file
	// ("project /p/.panto/APPEND_SYSTEM.md"), a flag, an extension
	// ("extension tools"), panto's re-seed. It is never sent to a model
	// and never part of what the prompt means. Only system blocks have
	// one.
	Source string `json:"source,omitempty"`

	// Thinking and Signature belong to a thinking block.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`

	// Data is the opaque payload of a redacted-thinking block, or the
	// base64 bytes of an image block.
	Data string `json:"data,omitempty"`
	// MediaType is the media type of an image block.
	MediaType string `json:"media_type,omitempty"`
	// Sha256 and Size name an image block's bytes stored outside the
	// block: the lowercase hex SHA-256 of the decoded bytes and their
	// count. The session log writes an image this way, without Data, and
	// fills Data back in (clearing both) when it reads the log; every
	// other holder of a block has Data and leaves them empty.
	Sha256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size,omitempty"`

	// ID, Name and Input belong to a tool-use block. Input is a JSON
	// object, kept as the bytes the model sent.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	// ToolUseID, Content and IsError belong to a tool-result block.
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   []Block `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: TypeText, Text: s} }

// AddedText returns a text block of a user message that panto adds to
// what the user typed, from source (see Block.Added; an empty source is
// "panto").
func AddedText(text, source string) Block {
	if source == "" {
		source = "panto"
	}
	return Block{Type: TypeText, Added: source, Text: text}
}

// System returns an unkeyed system block with the given mode.
func System(text string, mode Mode) Block {
	return Block{Type: TypeSystem, Text: text, Mode: mode.Normalize()}
}

// MaxKeyLen is the longest key a system block may have, in bytes.
const MaxKeyLen = 128

// ValidKey reports whether key may name a section: 1 to MaxKeyLen
// characters, each an ASCII letter or digit or one of _ - . / : (no
// spaces), such as "tools", "env/cwd" or "context:AGENTS.md". Keys are
// compared byte for byte: "tools" and "Tools" are two sections.
func ValidKey(key string) bool {
	if len(key) == 0 || len(key) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '_', c == '-', c == '.', c == '/', c == ':':
		default:
			return false
		}
	}
	return true
}

// Thinking returns a thinking block.
func Thinking(thinking, signature string) Block {
	return Block{Type: TypeThinking, Thinking: thinking, Signature: signature}
}

// RedactedThinking returns a redacted-thinking block.
func RedactedThinking(data string) Block {
	return Block{Type: TypeRedactedThinking, Data: data}
}

// ToolUse returns a tool-use block. An empty input means the empty object.
func ToolUse(id, name string, input json.RawMessage) Block {
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	return Block{Type: TypeToolUse, ID: id, Name: name, Input: input}
}

// ToolResult returns a tool-result block whose content is one text block.
func ToolResult(toolUseID, text string, isError bool) Block {
	return Block{Type: TypeToolResult, ToolUseID: toolUseID, Content: []Block{Text(text)}, IsError: isError}
}

// Image returns an image block of base64 data.
func Image(mediaType, base64Data string) Block {
	return Block{Type: TypeImage, MediaType: mediaType, Data: base64Data}
}

// ResultText returns the text of a tool-result block's content, its text
// blocks concatenated.
func (b Block) ResultText() string {
	return Message{Content: b.Content}.Text()
}

// Validate checks the fields a block of its type must have, that only a
// system block has a key or a source, and that only a text block is
// marked added (Message.Validate checks that it is a user message's).
func (b *Block) Validate() error {
	if b.Type != TypeSystem && (b.Key != "" || b.Source != "") {
		switch b.Type {
		case TypeText, TypeThinking, TypeRedactedThinking, TypeImage, TypeToolUse, TypeToolResult:
			return fmt.Errorf("%s block: only a system block may have a key or a source", b.Type)
		}
	}
	if b.Added != "" && b.Type != TypeText {
		switch b.Type {
		case TypeSystem, TypeThinking, TypeRedactedThinking, TypeImage, TypeToolUse, TypeToolResult:
			return fmt.Errorf("%s block: only a text block of a user message may be marked added", b.Type)
		}
	}
	switch b.Type {
	case TypeText:
		return nil
	case TypeSystem:
		if !b.Mode.Valid() {
			return fmt.Errorf("system block: unknown mode %q (want append or replace)", b.Mode)
		}
		if b.Key != "" && !ValidKey(b.Key) {
			return fmt.Errorf("system block: invalid key %q (want 1 to %d letters, digits and _ - . / :)", b.Key, MaxKeyLen)
		}
		return nil
	case TypeThinking, TypeRedactedThinking:
		return nil
	case TypeImage:
		if b.MediaType == "" || (b.Data == "" && b.Sha256 == "") {
			return errors.New("image block: media_type and data are required")
		}
		if b.Sha256 != "" && !ValidSha256(b.Sha256) {
			return fmt.Errorf("image block: sha256 %q is not 64 lowercase hex digits", b.Sha256)
		}
		if b.Size < 0 {
			return fmt.Errorf("image block: negative size %d", b.Size)
		}
		return nil
	case TypeToolUse:
		if b.ID == "" || b.Name == "" {
			return errors.New("tool_use block: id and name are required")
		}
		if len(b.Input) > 0 && !OpensObject(b.Input) {
			return fmt.Errorf("tool_use block %s: input is not a JSON object", b.ID)
		}
		return nil
	case TypeToolResult:
		if b.ToolUseID == "" {
			return errors.New("tool_result block: tool_use_id is required")
		}
		for i := range b.Content {
			c := &b.Content[i]
			if c.Type != TypeText && c.Type != TypeImage {
				return fmt.Errorf("tool_result block %s: content[%d] is %q (want text or image)", b.ToolUseID, i, c.Type)
			}
			if c.Added != "" {
				return fmt.Errorf("tool_result block %s: content[%d]: only a text block of a user message may be marked added", b.ToolUseID, i)
			}
			if err := c.Validate(); err != nil {
				return fmt.Errorf("tool_result block %s: content[%d]: %w", b.ToolUseID, i, err)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown block type %q", b.Type)
}

// ValidSha256 reports whether s is a SHA-256 sum as an image block names
// it: 64 lowercase hex digits.
func ValidSha256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// OpensObject reports whether raw's first non-space byte opens a JSON
// object, the cheap check for a tool input; full validity is json's
// business when it was decoded.
func OpensObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// ValidText returns s with every run of bytes that is not valid UTF-8
// replaced by U+FFFD; a valid s is returned as it is, without a copy.
//
// Text in a conversation is valid UTF-8: the session log is JSON and the
// extension protocol is protobuf, and both require it. Bytes become text
// at the edges where they enter panto (what the user types or pipes in,
// what a tool prints), and there they are passed through ValidText, so
// an invalid byte shows as a visible U+FFFD instead of failing later.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
