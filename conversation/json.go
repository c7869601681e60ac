package conversation

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A message has one JSON shape, the session log's (docs/session-format.md):
//
//	{"role":"user","content":[{"type":"text","text":"hi"}]}
//	{"role":"user","content":[{"type":"text","added":"project /p/.panto/USER_PROMPT.md","text":"Be brief."},{"type":"text","text":"hi"}]}
//	{"role":"system","mode":"append","key":"env","source":"extension env","content":[{"type":"text","text":"cwd: /p"}]}
//
// Every role but system writes its blocks in Block's JSON (a text block
// that panto added to a user message with its "added", first). A system message
// writes its System blocks as text blocks, with the first block's mode,
// key and source on the message: "mode" always, "key" and "source" when
// set. All the blocks of a system message share its source; only the
// first may have a key or replace, so a message whose later blocks do (or
// have another source) has no JSON shape: write one system message per
// block, as panto does.
//
// Read back, the first text block of a system message takes the message's
// mode (absent means append), key (absent means unkeyed) and source; every
// later one is an unkeyed append with the message's source. So a log or a
// message written before keys and sources existed reads back unchanged.

// MessageJSON is a message in its JSON shape, field for field, as decoded:
// the form between bytes and a Message. Mode, Key and Source belong on a
// system message only; its Content is text blocks. Message.UnmarshalJSON
// goes through it; a reader that decodes the JSON itself (the session
// log's fast decoder) fills one the way encoding/json would and calls
// Message.
type MessageJSON struct {
	Role    Role    `json:"role"`
	Mode    Mode    `json:"mode,omitempty"`
	Key     string  `json:"key,omitempty"`
	Source  string  `json:"source,omitempty"`
	Content []Block `json:"content"`
}

// plainJSON is a message of another role as written: MessageJSON without
// the fields it omits anyway, so that JSONValue boxes less.
type plainJSON struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// systemJSON is a system message as written: unlike Block, a text block
// keeps an empty text (a section's removal reads better as "text":"").
type systemJSON struct {
	Role    Role       `json:"role"`
	Mode    Mode       `json:"mode"`
	Key     string     `json:"key,omitempty"`
	Source  string     `json:"source,omitempty"`
	Content []textJSON `json:"content"`
}

type textJSON struct {
	Type BlockType `json:"type"`
	Text string    `json:"text"`
}

// Message turns j into the message it is. A system message's text blocks
// become System blocks as the shape says; anything the shape cannot mean
// (a mode, key or source on another role's message; a system message
// holding anything but text blocks, or a mode, key or source on one of
// them) is an error. Empty content lists become nil, at every depth, as
// they read back once written. The result shares j's content, which
// Message changes: do not use j afterwards.
//
// Message checks the shape only; call Validate on the result to check the
// message itself.
func (j *MessageJSON) Message() (Message, error) {
	m := Message{Role: j.Role, Content: emptyToNil(j.Content)}
	if m.Role != RoleSystem {
		switch {
		case j.Mode != "":
			return m, fmt.Errorf("%s message has a mode (only a system message may)", m.Role)
		case j.Key != "":
			return m, fmt.Errorf("%s message has a key (only a system message may)", m.Role)
		case j.Source != "":
			return m, fmt.Errorf("%s message has a source (only a system message may)", m.Role)
		}
		return m, nil
	}
	if !j.Mode.Valid() {
		return m, fmt.Errorf("system message: unknown mode %q (want append or replace)", j.Mode)
	}
	if j.Key != "" && !ValidKey(j.Key) {
		return m, fmt.Errorf("system message: invalid key %q (want 1 to %d letters, digits and _ - . / :)", j.Key, MaxKeyLen)
	}
	mode, key := j.Mode.Normalize(), j.Key
	for i := range m.Content {
		b := &m.Content[i]
		switch {
		case b.Type != TypeText:
			return m, fmt.Errorf("system message content[%d] is a %q block (want text; the mode goes on the message)", i, b.Type)
		case b.Mode != "":
			return m, fmt.Errorf("system message content[%d] has a mode: the mode goes on the message, not on its blocks", i)
		case b.Key != "":
			return m, fmt.Errorf("system message content[%d] has a key: the key goes on the message, not on its blocks", i)
		case b.Source != "":
			return m, fmt.Errorf("system message content[%d] has a source: the source goes on the message, not on its blocks", i)
		case b.Added != "":
			return m, fmt.Errorf("system message content[%d] is marked added: only a text block of a user message may be", i)
		}
		*b = Block{Type: TypeSystem, Text: b.Text, Mode: mode, Key: key, Source: j.Source}
		mode, key = ModeAppend, ""
	}
	return m, nil
}

// emptyToNil makes every empty content list nil, as it reads back after
// it is written (the content of a block is omitted when empty).
func emptyToNil(bs []Block) []Block {
	if len(bs) == 0 {
		return nil
	}
	for i := range bs {
		if bs[i].Content != nil {
			bs[i].Content = emptyToNil(bs[i].Content)
		}
	}
	return bs
}

// JSONValue returns a value that encoding/json encodes as m's JSON shape,
// the bytes MarshalJSON returns (with HTML escaping as the encoder is set).
// An encoder that embeds messages in larger objects (the session log's
// lines) uses it to spare encoding/json's second pass over what a
// MarshalJSON method returns. The value shares m's content.
//
// It fails for a system message that has no JSON shape: a block that is
// not a System block, or a later block that replaces, has a key, or has
// another source than the first.
func (m Message) JSONValue() (any, error) {
	if m.Role != RoleSystem {
		content := m.Content
		if content == nil {
			content = []Block{}
		}
		return plainJSON{Role: m.Role, Content: content}, nil
	}
	out := systemJSON{Role: m.Role, Mode: ModeAppend, Content: make([]textJSON, len(m.Content))}
	for i := range m.Content {
		b := &m.Content[i]
		if b.Type != TypeSystem {
			return nil, fmt.Errorf("system message content[%d] is a %q block (want system)", i, b.Type)
		}
		if b.Added != "" {
			return nil, fmt.Errorf("system message content[%d] is marked added: only a text block of a user message may be", i)
		}
		if i == 0 {
			out.Mode, out.Key, out.Source = b.Mode.Normalize(), b.Key, b.Source
		} else {
			switch {
			case b.Mode.Normalize() != ModeAppend:
				return nil, fmt.Errorf("system message content[%d] has mode %q: only the first block of a system message may replace (write one system message per block)", i, b.Mode)
			case b.Key != "":
				return nil, fmt.Errorf("system message content[%d] has a key: only the first block of a system message may (write one system message per block)", i)
			case b.Source != out.Source:
				return nil, fmt.Errorf("system message content[%d] has source %q, not the first block's %q: the blocks of a system message share its source (write one system message per block)", i, b.Source, out.Source)
			}
		}
		out.Content[i] = textJSON{Type: TypeText, Text: b.Text}
	}
	return out, nil
}

// MarshalJSON writes m in its JSON shape, the session log's (see
// MessageJSON). It fails where JSONValue does.
func (m Message) MarshalJSON() ([]byte, error) {
	v, err := m.JSONValue()
	if err != nil {
		return nil, fmt.Errorf("encode %s message: %w", m.Role, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the caller's encoder escapes, if it wants to
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// UnmarshalJSON reads m from its JSON shape (see MessageJSON.Message). It
// also reads the shape Message had before it had MarshalJSON, a system
// message with its System blocks as they are
// ({"role":"system","content":[{"type":"system","text":"…","mode":"append"}]}),
// so a peer of an older panto is understood. Like encoding/json's own
// decoding, it does not validate the message: call Validate. JSON null
// leaves m as it is.
func (m *Message) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var j MessageJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	msg, err := j.eitherShape()
	if err != nil {
		return err
	}
	*m = msg
	return nil
}

// eitherShape is Message, but reads the old shape too (see UnmarshalJSON).
func (j *MessageJSON) eitherShape() (Message, error) {
	if j.Role == RoleSystem && j.Mode == "" && j.Key == "" && j.Source == "" && allSystem(j.Content) {
		for i := range j.Content { // what a System block holds, no more (as in the other shape)
			b := &j.Content[i]
			*b = Block{Type: TypeSystem, Text: b.Text, Mode: b.Mode, Key: b.Key, Source: b.Source}
		}
		return Message{Role: j.Role, Content: j.Content}, nil
	}
	return j.Message()
}

// MarshalMessages returns the JSON array of msgs, the bytes
// json.Marshal(msgs) returns, several times faster for a long
// conversation: json.Marshal scans what each MarshalJSON returns once
// more, which costs more than the encoding itself. Use it to hand a whole
// conversation over (an extension's GetMessages).
func MarshalMessages(msgs []Message) ([]byte, error) {
	if msgs == nil {
		return []byte("null"), nil
	}
	vals := make([]any, len(msgs))
	for i := range msgs {
		v, err := msgs[i].JSONValue()
		if err != nil {
			return nil, fmt.Errorf("encode message %d (%s): %w", i, msgs[i].Role, err)
		}
		vals[i] = v
	}
	return json.Marshal(vals)
}

// UnmarshalMessages reads a JSON array of messages as json.Unmarshal into
// a []Message does (in either shape, see UnmarshalJSON), in one pass over
// data rather than two.
func UnmarshalMessages(data []byte) ([]Message, error) {
	var js []MessageJSON
	if err := json.Unmarshal(data, &js); err != nil {
		return nil, err
	}
	if js == nil {
		return nil, nil
	}
	out := make([]Message, len(js))
	for i := range js {
		m, err := js[i].eitherShape()
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out[i] = m
	}
	return out, nil
}

// allSystem reports whether bs is not empty and holds only System blocks:
// the old shape of a system message.
func allSystem(bs []Block) bool {
	for i := range bs {
		if bs[i].Type != TypeSystem {
			return false
		}
	}
	return len(bs) > 0
}
