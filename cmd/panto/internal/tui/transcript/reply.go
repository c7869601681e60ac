package transcript

import (
	"fmt"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/markdown"
)

// Reply is one reply of the model: its visible reasoning (dimmed, folded
// once the reply is done) and its text, rendered as Markdown as it
// streams.
type Reply struct {
	md       *markdown.Stream
	thinking strings.Builder
	// Streaming is set until the reply is recorded (or the turn ends).
	streaming bool
	// expanded shows the whole reasoning.
	expanded bool
	// Note follows the reply, dimmed ("interrupted").
	note    string
	version int
	c       cache
	// thinkCache is the wrapped reasoning, for one width and length.
	thinkW, thinkN int
	thinkLines     []string
}

// NewReply returns a reply that streams.
func NewReply() *Reply { return &Reply{md: markdown.NewStream(), streaming: true} }

// ReplyOf returns a recorded reply.
func ReplyOf(text, thinking string) *Reply {
	r := &Reply{md: markdown.StreamOf(text)}
	r.thinking.WriteString(thinking)
	return r
}

// Text appends a piece of the reply's text. Nothing is rendered here.
func (r *Reply) Text(s string) { r.md.Append(s) }

// Thinking appends a piece of the reasoning.
func (r *Reply) Thinking(s string) {
	r.thinking.WriteString(s)
}

// HasText reports whether any text or reasoning came.
func (r *Reply) HasText() bool { return r.md.Len() > 0 || r.thinking.Len() > 0 }

// Flush makes the next render show what came since the last one: call it
// from a frame tick, not per piece.
func (r *Reply) Flush() {
	r.md.Flush()
	r.version++
}

// Finish ends the stream: the reply is complete (or cut short).
func (r *Reply) Finish() {
	r.md.Finish()
	r.streaming = false
	r.version++
}

// SetNote sets the dimmed line after the reply.
func (r *Reply) SetNote(s string) { r.note = s; r.version++ }

// Streaming reports whether the reply is still coming.
func (r *Reply) Streaming() bool { return r.streaming }

// Toggle shows or folds the reasoning.
func (r *Reply) Toggle() { r.expanded = !r.expanded; r.version++ }

// SetExpanded shows the reasoning whole (true) or folds it.
func (r *Reply) SetExpanded(b bool) {
	if r.expanded != b {
		r.expanded = b
		r.version++
	}
}

// Expanded reports whether the reasoning is shown whole.
func (r *Reply) Expanded() bool { return r.expanded }

// Foldable implements Collapsible: there is reasoning to fold.
func (r *Reply) Foldable() bool { return r.thinking.Len() > 0 }

// Render implements Item.
func (r *Reply) Render(c Ctx) Lines {
	version := r.version
	if l, ok := r.c.get(c, version); ok {
		return l
	}
	th := c.Theme
	var parts concat
	if r.thinking.Len() > 0 {
		var out []string
		lines := r.thinkingLines(c.Width - 2)
		const tail = 4
		switch {
		case r.expanded:
			out = append(out, th.Dim.Render("∴ thinking"))
			for _, l := range lines {
				out = append(out, "  "+th.Thinking.Render(l))
			}
		case r.streaming && r.md.Len() == 0:
			out = append(out, th.Dim.Render("∴ thinking…"))
			for _, l := range lines[max(0, len(lines)-tail):] {
				out = append(out, "  "+th.Thinking.Render(l))
			}
		default:
			out = append(out, th.Dim.Render(fmt.Sprintf("∴ thinking, %d lines · ctrl+o shows it", len(lines))))
		}
		parts = append(parts, Strings(out))
		if r.md.Len() > 0 {
			parts = append(parts, Strings{""})
		}
	}
	if r.md.Len() > 0 {
		parts = append(parts, r.md.Lines(c.Width, th))
	}
	if r.note != "" {
		parts = append(parts, Strings{th.Dim.Render(cut(r.note, c.Width))})
	}
	if len(parts) == 0 {
		parts = append(parts, Strings{th.Dim.Render("…")})
	}
	return r.c.put(c, version, parts)
}

// thinkingLines wraps the reasoning. While it streams folded, only its
// end is wrapped (the screen shows the last lines): the cost of a frame
// does not grow with the reasoning.
func (r *Reply) thinkingLines(width int) []string {
	text := r.thinking.String()
	if r.thinkW == width && r.thinkN == len(text) {
		return r.thinkLines
	}
	if r.streaming && !r.expanded && r.md.Len() == 0 && len(text) > 4096 {
		cutAt := len(text) - 4096
		if i := strings.IndexByte(text[cutAt:], '\n'); i >= 0 {
			cutAt += i + 1
		}
		text = text[cutAt:]
		lines := wrapText(strings.TrimSpace(text), width)
		return lines
	}
	r.thinkW, r.thinkN = width, len(text)
	r.thinkLines = wrapText(strings.TrimSpace(text), width)
	return r.thinkLines
}
