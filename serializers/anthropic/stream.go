package anthropic

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/sse"
)

// wireEvent is the data of any stream event; which fields are set depends
// on Type. Blocks and deltas stay raw: one of a type panto does not know
// is skipped, whatever its fields.
type wireEvent struct {
	Type         string          `json:"type"`
	Message      *wireMessage    `json:"message"`
	Index        *int            `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        json.RawMessage `json:"delta"`
	Usage        *wireUsage      `json:"usage"`
}

// wireDelta is the delta of a content_block_delta or a message_delta.
type wireDelta struct {
	Type        string  `json:"type"`
	Text        string  `json:"text"`
	PartialJSON string  `json:"partial_json"`
	Thinking    string  `json:"thinking"`
	Signature   string  `json:"signature"`
	StopReason  *string `json:"stop_reason"`
}

// streamBlock is a content block being assembled.
type streamBlock struct {
	// typ is the block's type; empty for a type panto does not know,
	// whose deltas are ignored and which is left out of the reply.
	typ     conversation.BlockType
	text    []byte // text, or thinking
	sig     []byte // thinking signature
	input   []byte // tool_use input fragments
	initial json.RawMessage
	data    string // redacted_thinking
	id      string
	name    string
	stopped bool
}

// streamDecoder holds the state of one stream.
type streamDecoder struct {
	fn      serializers.DeltaFunc
	started bool
	reply   serializers.Reply
	blocks  []*streamBlock
}

// DecodeStream reads a Messages API event stream from r (the body of a
// response with stream:true) and returns the reply once message_stop
// arrives. fn, which may be nil, gets the text, thinking and tool-call
// pieces as they arrive.
//
// The stream must be complete: one that ends before message_stop (at a
// clean end of input or cut in the middle of a line) gives an error that
// wraps serializers.ErrTruncated, never a partial Reply. An error event
// (sent after HTTP 200, e.g. overloaded_error) gives a
// *serializers.APIError with Status 200. Pings, events of unknown types,
// and blocks and deltas of unknown types are ignored; a malformed event of
// a known type, a delta for a block never started, and a tool input that
// is not a JSON object are errors. A last event that lacks only its
// closing blank line counts when its data is complete JSON (the SSE
// standard would drop it, but nothing of it is missing).
func DecodeStream(r io.Reader, fn serializers.DeltaFunc) (serializers.Reply, error) {
	d := streamDecoder{fn: fn}
	events := sse.NewReader(r)
	for {
		ev, err := events.Next()
		if err == io.EOF {
			return serializers.Reply{}, fmt.Errorf("anthropic: decode stream: %w: no message_stop", serializers.ErrTruncated)
		}
		if err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return serializers.Reply{}, fmt.Errorf("anthropic: decode stream: %w", err)
			}
			return serializers.Reply{}, fmt.Errorf("anthropic: decode stream: %w: %w", serializers.ErrTruncated, err)
		}
		var w wireEvent
		typ, perr := parseEvent(ev, &w)
		if typ == "error" {
			return serializers.Reply{}, DecodeError(200, ev.Data, "")
		}
		if perr != nil {
			// A known event whose data does not parse: either the stream
			// was cut inside it, or it is malformed.
			switch _, next := events.Next(); {
			case next == io.EOF:
				return serializers.Reply{}, fmt.Errorf("anthropic: decode stream: line %d: %w: %s event cut short", ev.Line, serializers.ErrTruncated, typ)
			case next != nil:
				return serializers.Reply{}, fmt.Errorf("anthropic: decode stream: line %d: %w: %s event cut short: %w", ev.Line, serializers.ErrTruncated, typ, next)
			}
			return serializers.Reply{}, fmt.Errorf("anthropic: decode stream: line %d: %s event: %w", ev.Line, typ, perr)
		}
		done, err := d.handle(typ, &w)
		if err != nil {
			return serializers.Reply{}, fmt.Errorf("anthropic: decode stream: line %d: %s: %w", ev.Line, typ, err)
		}
		if done {
			return d.reply, nil
		}
	}
}

// parseEvent decodes ev's data into w and returns the event's type: the
// data's "type", or the SSE event name when the data has none. The error
// is only reported for the known event types; others are ignored anyway.
func parseEvent(ev sse.Event, w *wireEvent) (string, error) {
	err := json.Unmarshal(ev.Data, w)
	if err == nil {
		if w.Type == "" {
			return ev.Name, nil
		}
		return w.Type, nil
	}
	typ := ev.Name
	var t struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(ev.Data, &t) == nil && t.Type != "" {
		typ = t.Type
	}
	if !knownEvent(typ) {
		return typ, nil
	}
	return typ, err
}

func knownEvent(typ string) bool {
	switch typ {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop", "ping", "error":
		return true
	}
	return false
}

// handle applies one event; done is true at message_stop, when d.reply is
// complete.
func (d *streamDecoder) handle(typ string, w *wireEvent) (done bool, err error) {
	switch typ {
	case "ping":
		return false, nil
	case "message_start":
		return false, d.start(w)
	}
	if !knownEvent(typ) {
		return false, nil
	}
	if !d.started {
		return false, errors.New("before message_start")
	}
	switch typ {
	case "content_block_start":
		return false, d.blockStart(w)
	case "content_block_delta":
		return false, d.blockDelta(w)
	case "content_block_stop":
		return false, d.blockStop(w)
	case "message_delta":
		return false, d.messageDelta(w)
	case "message_stop":
		return true, d.finish()
	}
	return false, nil
}

func (d *streamDecoder) start(w *wireEvent) error {
	if d.started {
		return errors.New("a second message_start")
	}
	if w.Message == nil {
		return errors.New("no message")
	}
	d.started = true
	m := w.Message
	d.reply.ID, d.reply.Model = m.ID, m.Model
	if m.StopReason != nil {
		d.reply.RawStopReason = *m.StopReason
	}
	m.Usage.apply(&d.reply.Usage)
	// The API starts with no content; blocks that are there anyway come
	// first, complete, as the official SDK's Accumulate takes them.
	for i, raw := range m.Content {
		sb, err := newStreamBlock(raw)
		if err != nil {
			return fmt.Errorf("content[%d]: %w", i, err)
		}
		sb.stopped = true
		if sb.typ == conversation.TypeToolUse {
			if sb.input, err = toolInput(sb.initial); err != nil {
				return fmt.Errorf("content[%d]: tool_use %s: input: %w", i, sb.id, err)
			}
		}
		d.blocks = append(d.blocks, sb)
	}
	return nil
}

// newStreamBlock starts a block from its content_block object.
func newStreamBlock(raw json.RawMessage) (*streamBlock, error) {
	blk, ok, err := decodeBlock(raw)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &streamBlock{}, nil
	}
	sb := &streamBlock{typ: blk.Type, data: blk.Data, id: blk.ID, name: blk.Name, initial: blk.Input}
	switch blk.Type {
	case conversation.TypeText:
		sb.text = append(sb.text, blk.Text...)
	case conversation.TypeThinking:
		sb.text = append(sb.text, blk.Thinking...)
		sb.sig = append(sb.sig, blk.Signature...)
	}
	return sb, nil
}

func (d *streamDecoder) emit(delta serializers.Delta) {
	if d.fn != nil {
		d.fn(delta)
	}
}

func (d *streamDecoder) blockStart(w *wireEvent) error {
	if w.Index == nil {
		return errors.New("no index")
	}
	i := *w.Index
	if i != len(d.blocks) {
		return fmt.Errorf("block %d started, want block %d (blocks start in order)", i, len(d.blocks))
	}
	sb, err := newStreamBlock(w.ContentBlock)
	if err != nil {
		return fmt.Errorf("block %d: %w", i, err)
	}
	d.blocks = append(d.blocks, sb)
	switch {
	case sb.typ == conversation.TypeToolUse:
		d.emit(serializers.Delta{Kind: serializers.DeltaToolStart, Index: i, ToolID: sb.id, ToolName: sb.name})
	case sb.typ == conversation.TypeText && len(sb.text) > 0:
		d.emit(serializers.Delta{Kind: serializers.DeltaText, Index: i, Text: string(sb.text)})
	case sb.typ == conversation.TypeThinking && len(sb.text) > 0:
		d.emit(serializers.Delta{Kind: serializers.DeltaThinking, Index: i, Text: string(sb.text)})
	}
	return nil
}

// block returns the started, not yet stopped block the event is for.
func (d *streamDecoder) block(w *wireEvent) (int, *streamBlock, error) {
	if w.Index == nil {
		return 0, nil, errors.New("no index")
	}
	i := *w.Index
	if i < 0 || i >= len(d.blocks) {
		return i, nil, fmt.Errorf("block %d was never started", i)
	}
	if d.blocks[i].stopped {
		return i, nil, fmt.Errorf("block %d was already stopped", i)
	}
	return i, d.blocks[i], nil
}

func (d *streamDecoder) blockDelta(w *wireEvent) error {
	i, sb, err := d.block(w)
	if err != nil {
		return err
	}
	var delta wireDelta
	if err := json.Unmarshal(w.Delta, &delta); err != nil {
		var t struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(w.Delta, &t) == nil && !knownDelta(t.Type) {
			return nil
		}
		return fmt.Errorf("block %d: delta: %w", i, err)
	}
	if sb.typ == "" || !knownDelta(delta.Type) {
		return nil // a block or delta panto does not know (citations_delta, ...)
	}
	if want := deltaTarget(delta.Type); sb.typ != want {
		return fmt.Errorf("block %d: a %s for a %s block", i, delta.Type, sb.typ)
	}
	switch delta.Type {
	case "text_delta":
		sb.text = append(sb.text, delta.Text...)
		if delta.Text != "" {
			d.emit(serializers.Delta{Kind: serializers.DeltaText, Index: i, Text: delta.Text})
		}
	case "thinking_delta":
		sb.text = append(sb.text, delta.Thinking...)
		if delta.Thinking != "" {
			d.emit(serializers.Delta{Kind: serializers.DeltaThinking, Index: i, Text: delta.Thinking})
		}
	case "signature_delta":
		sb.sig = append(sb.sig, delta.Signature...)
	case "input_json_delta":
		sb.input = append(sb.input, delta.PartialJSON...)
		if delta.PartialJSON != "" {
			d.emit(serializers.Delta{Kind: serializers.DeltaToolInput, Index: i, Text: delta.PartialJSON})
		}
	}
	return nil
}

func knownDelta(typ string) bool { return deltaTarget(typ) != "" }

// deltaTarget returns the type of block a delta type applies to; empty
// for a delta type panto does not know.
func deltaTarget(typ string) conversation.BlockType {
	switch typ {
	case "text_delta":
		return conversation.TypeText
	case "thinking_delta", "signature_delta":
		return conversation.TypeThinking
	case "input_json_delta":
		return conversation.TypeToolUse
	}
	return ""
}

// blockStop ends a block; a tool call's input fragments, joined, must make
// a JSON object (none at all means the block's initial input, or {}).
func (d *streamDecoder) blockStop(w *wireEvent) error {
	i, sb, err := d.block(w)
	if err != nil {
		return err
	}
	sb.stopped = true
	if sb.typ != conversation.TypeToolUse {
		return nil
	}
	in := sb.input
	if len(in) == 0 {
		in = sb.initial
	}
	if sb.input, err = toolInput(in); err != nil {
		return fmt.Errorf("block %d: tool_use %s: input: %w", i, sb.id, err)
	}
	return nil
}

func (d *streamDecoder) messageDelta(w *wireEvent) error {
	if len(w.Delta) > 0 {
		var delta wireDelta
		if err := json.Unmarshal(w.Delta, &delta); err != nil {
			return fmt.Errorf("delta: %w", err)
		}
		if delta.StopReason != nil {
			d.reply.RawStopReason = *delta.StopReason
		}
	}
	w.Usage.apply(&d.reply.Usage)
	return nil
}

// finish builds the reply at message_stop.
func (d *streamDecoder) finish() error {
	content := make([]conversation.Block, 0, len(d.blocks))
	for i, sb := range d.blocks {
		if !sb.stopped {
			return fmt.Errorf("block %d was never stopped", i)
		}
		switch sb.typ {
		case conversation.TypeText:
			content = append(content, conversation.Text(string(sb.text)))
		case conversation.TypeThinking:
			content = append(content, conversation.Thinking(string(sb.text), string(sb.sig)))
		case conversation.TypeRedactedThinking:
			content = append(content, conversation.RedactedThinking(sb.data))
		case conversation.TypeToolUse:
			content = append(content, conversation.Block{Type: conversation.TypeToolUse, ID: sb.id, Name: sb.name, Input: sb.input})
		}
	}
	d.reply.Message = conversation.Message{Role: conversation.RoleAssistant, Content: content}
	d.reply.StopReason = mapStopReason(d.reply.RawStopReason)
	return nil
}
