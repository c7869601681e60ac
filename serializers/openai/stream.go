package openai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/sse"
)

// done is the data of the event that ends a complete stream.
const done = "[DONE]"

// DecodeStream decodes an SSE stream of chat.completion.chunk objects into
// a Reply, calling fn (which may be nil) with each Delta as it arrives.
//
// Text and reasoning deltas have Index 0; tool-call deltas have the tool
// call's index. A tool call's DeltaToolStart carries the id and name of its
// first fragment (OpenAI sends them only there).
//
// The stream is complete only when "data: [DONE]" arrives; what follows it
// is not read. A stream that ends before, cleanly or cut mid-line, gives an
// error wrapping serializers.ErrTruncated and no Reply. A chunk with an
// "error" member (or an "error" event) gives an error wrapping a
// *serializers.APIError with Status 200.
//
// Tool calls are assembled by their index, so parallel calls may
// interleave. A server that leaves the index out (Gemini's compatibility
// layer does) gets a new call for each new id and a continuation of the
// last call otherwise. Usage is taken from the last chunk that has it (the
// include_usage chunk with no choices, at OpenAI).
func DecodeStream(r io.Reader, fn serializers.DeltaFunc) (serializers.Reply, error) {
	if fn == nil {
		fn = func(serializers.Delta) {}
	}
	d := streamDecoder{fn: fn, calls: map[int]*toolCall{}, last: -1}
	sr := sse.NewReader(r)
	line := 0
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			if line == 0 {
				return serializers.Reply{}, fmt.Errorf("openai: decode stream: %w (empty stream)", serializers.ErrTruncated)
			}
			return serializers.Reply{}, fmt.Errorf("openai: decode stream: %w (no data: [DONE]; last event at line %d)",
				serializers.ErrTruncated, line)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// The connection closed in the middle of the body (a
			// chunked response cut short): the reply is cut too.
			return serializers.Reply{}, fmt.Errorf("openai: decode stream: %w: %w", serializers.ErrTruncated, err)
		}
		if err != nil {
			return serializers.Reply{}, fmt.Errorf("openai: decode stream: %w", err)
		}
		line = ev.Line
		data := bytes.TrimSpace(ev.Data)
		if ev.Name == "error" {
			return serializers.Reply{}, fmt.Errorf("openai: decode stream: line %d: %w", line, DecodeError(200, data, ""))
		}
		if len(data) == 0 {
			continue
		}
		if string(data) == done {
			break
		}
		var chunk chatCompletion
		if err := json.Unmarshal(data, &chunk); err != nil {
			// The last event of a stream that was cut mid-line is a prefix
			// of a chunk: that is truncation, not a bad chunk.
			if _, nerr := sr.Next(); nerr == io.EOF {
				return serializers.Reply{}, fmt.Errorf("openai: decode stream: line %d: %w (cut inside a chunk: %v)",
					line, serializers.ErrTruncated, err)
			}
			return serializers.Reply{}, fmt.Errorf("openai: decode stream: line %d: invalid chunk: %w", line, err)
		}
		if hasError(chunk.Error) {
			return serializers.Reply{}, fmt.Errorf("openai: decode stream: line %d: %w", line, DecodeError(200, data, ""))
		}
		if err := d.chunk(&chunk); err != nil {
			return serializers.Reply{}, fmt.Errorf("openai: decode stream: line %d: %w", line, err)
		}
	}
	reply, err := d.reply()
	if err != nil {
		return serializers.Reply{}, fmt.Errorf("openai: decode stream: %w", err)
	}
	return reply, nil
}

type streamDecoder struct {
	fn    serializers.DeltaFunc
	b     replyBuilder
	calls map[int]*toolCall
	last  int // index of the call the last tool-call fragment went to
	high  int // highest index seen, for index-less fragments
}

func (d *streamDecoder) chunk(c *chatCompletion) error {
	if d.b.id == "" {
		d.b.id = c.ID
	}
	if d.b.model == "" {
		d.b.model = c.Model
	}
	if c.Usage != nil {
		d.b.usage = c.Usage.toUsage()
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			d.b.finish = *ch.FinishReason
		}
		if ch.Delta == nil {
			continue
		}
		if err := d.delta(ch.Delta); err != nil {
			return err
		}
	}
	return nil
}

func (d *streamDecoder) delta(m *wireMessage) error {
	if t := m.reasoning(); t != "" {
		d.b.thinking.WriteString(t)
		d.fn(serializers.Delta{Kind: serializers.DeltaThinking, Text: t})
	}
	if m.Content != nil && *m.Content != "" {
		d.b.text.WriteString(*m.Content)
		d.fn(serializers.Delta{Kind: serializers.DeltaText, Text: *m.Content})
	}
	if m.Refusal != nil && *m.Refusal != "" {
		d.b.text.WriteString(*m.Refusal)
		d.b.refused = true
		d.fn(serializers.Delta{Kind: serializers.DeltaText, Text: *m.Refusal})
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		idx, err := d.callIndex(tc)
		if err != nil {
			return err
		}
		call := d.calls[idx]
		if call == nil {
			call = &toolCall{index: idx, id: tc.ID, name: tc.Function.Name}
			d.calls[idx] = call
			d.high = max(d.high, idx)
			d.fn(serializers.Delta{Kind: serializers.DeltaToolStart, Index: idx, ToolID: call.id, ToolName: call.name})
		} else {
			// id and name come with the first fragment; a later one may
			// repeat them (which must not double them), repeat the name
			// so far and more (cumulative), or carry the rest of it (a
			// name split across fragments, as some servers stream it).
			if call.id == "" {
				call.id = tc.ID
			}
			call.name = joinName(call.name, tc.Function.Name)
		}
		d.last = idx
		if a := tc.Function.Arguments; a != "" {
			call.args = append(call.args, a...)
			d.fn(serializers.Delta{Kind: serializers.DeltaToolInput, Index: idx, Text: a})
		}
	}
	return nil
}

// joinName is a call's name so far, cur, with a later fragment's name.
func joinName(cur, more string) string {
	switch {
	case more == "" || more == cur:
		return cur
	case strings.HasPrefix(more, cur):
		return more
	}
	return cur + more
}

// callIndex says which tool call a fragment belongs to.
func (d *streamDecoder) callIndex(tc *wireToolCall) (int, error) {
	if tc.Index != nil {
		switch idx := *tc.Index; {
		case idx == -1:
			return 0, nil // a single call, as some servers number it
		case idx < 0:
			return 0, fmt.Errorf("tool call index %d", idx)
		default:
			return idx, nil
		}
	}
	if d.last < 0 {
		return 0, nil
	}
	if tc.ID != "" && tc.ID != d.calls[d.last].id {
		if d.high == math.MaxInt {
			return 0, errors.New("too many tool calls")
		}
		return d.high + 1, nil
	}
	return d.last, nil
}

func (d *streamDecoder) reply() (serializers.Reply, error) {
	d.b.calls = make([]*toolCall, 0, len(d.calls))
	for _, c := range d.calls {
		d.b.calls = append(d.b.calls, c)
	}
	slices.SortFunc(d.b.calls, func(a, b *toolCall) int { return cmp.Compare(a.index, b.index) })
	return d.b.reply()
}
