package markdown

import (
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

// Stream renders a Markdown reply as it streams, at a cost per token that
// does not grow with the reply. The source is cut into chunks at block
// boundaries that later text cannot change (a blank line outside a code
// fence, after a line that opens nothing a later line could continue: a
// list, a quote, a table, an indented block). Each finished chunk is
// rendered once; the open rest, the tail, is rendered again only when
// Flush asks for it — from a frame tick, not per token.
//
// A Stream renders the same text as Render would, block for block; only
// the blank lines at the seams may differ. What is appended is made safe
// for the terminal as it comes (termtext.Writer: a lone CR shows as "␍"
// even when its piece ends with it), so the source is the sanitized
// reply.
type Stream struct {
	src  strings.Builder
	safe *termtext.Writer
	// ends are the end offsets of the finished chunks.
	ends []int
	// scanned is how far the boundary scan has read (a line start);
	// searched is how far it looked for the next newline.
	scanned, searched int
	// fence is the open code fence's marker ("```", "~~~~"), or "".
	fence string
	done  bool

	// The render cache, for one width and theme.
	width    int
	th       *theme.Theme
	lines    []string // the finished chunks' lines, a blank line between chunks
	rendered int      // chunks in lines
	tail     []string // the tail's lines, as of the last render
	tailOK   bool     // tail is the render of the current tail
	wantTail bool     // Flush asked for a fresh tail
	version  int
}

// NewStream returns an empty Stream.
func NewStream() *Stream { return &Stream{} }

// StreamOf returns a finished Stream of text: what a recorded reply
// renders with.
func StreamOf(text string) *Stream {
	s := &Stream{}
	s.Append(text)
	s.Finish()
	return s
}

// sink takes what the sanitizer lets through.
type sink struct{ s *Stream }

func (k sink) Write(p []byte) (int, error) {
	k.s.append(string(p))
	return len(p), nil
}

// Text returns the source so far (sanitized).
func (s *Stream) Text() string { return s.src.String() }

// Len is the source's length in bytes.
func (s *Stream) Len() int { return s.src.Len() }

// Version changes whenever what Lines returns may change.
func (s *Stream) Version() int { return s.version }

// Append adds a piece of the reply. It costs the piece's length plus,
// at a boundary, nothing more than the line before it: it never looks
// at the whole source.
func (s *Stream) Append(delta string) {
	if delta == "" || s.done {
		return
	}
	if s.safe == nil {
		s.safe = termtext.NewWriter(sink{s})
	}
	_, _ = s.safe.Write([]byte(delta))
}

// append adds sanitized text to the source.
func (s *Stream) append(delta string) {
	if delta == "" {
		return
	}
	s.src.WriteString(delta)
	s.tailOK = false
	src := s.src.String()
	for {
		nl := strings.IndexByte(src[s.searched:], '\n')
		if nl < 0 {
			s.searched = len(src)
			return
		}
		end := s.searched + nl + 1
		line := src[s.scanned : end-1]
		start := s.scanned
		s.scanned, s.searched = end, end
		s.scanLine(src, start, line)
	}
}

// scanLine looks at one complete line, which starts at offset start.
func (s *Stream) scanLine(src string, start int, line string) {
	trim := strings.TrimLeft(line, " ")
	if len(line)-len(trim) <= 3 {
		if m := fenceMarker(trim); m != "" {
			switch {
			case s.fence == "":
				s.fence = m
			case m[0] == s.fence[0] && len(m) >= len(s.fence) && strings.TrimSpace(trim[len(m):]) == "":
				s.fence = ""
			}
			return
		}
	}
	if s.fence != "" || strings.TrimSpace(line) != "" {
		return
	}
	// A blank line outside a fence: a boundary, unless the line before
	// it may be continued by a later one.
	chunkStart := 0
	if n := len(s.ends); n > 0 {
		chunkStart = s.ends[n-1]
	}
	prev := lastLine(src[chunkStart:start])
	if prev == "" || continues(prev) {
		return
	}
	s.ends = append(s.ends, s.scanned)
}

// fenceMarker returns the run of backticks or tildes (three or more)
// that starts t, or "".
func fenceMarker(t string) string {
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	if t[0] == '`' && strings.Contains(t[n:], "`") {
		return "" // a code span, not a fence
	}
	return t[:n]
}

// lastLine returns the last non-blank line of s, or "".
func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// continues reports whether a later line may continue the block that
// line ends: an indented line (code, or a list item's continuation), a
// quote, a table row, a list item, an HTML block, or a link reference
// definition.
func continues(line string) bool {
	if line[0] == ' ' || line[0] == '\t' {
		return true
	}
	switch line[0] {
	case '>', '<', '|', '[':
		return true
	}
	if strings.Contains(line, "|") {
		return true
	}
	if len(line) >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '+') && (line[1] == ' ' || line[1] == '\t') {
		return true
	}
	i := 0
	for i < len(line) && i < 9 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && (line[i+1] == ' ' || line[i+1] == '\t')
}

// Finish ends the reply: the tail becomes the last chunk.
func (s *Stream) Finish() {
	if s.done {
		return
	}
	if s.safe != nil {
		_ = s.safe.Flush() // a CR the last piece ended with
	}
	s.done = true
	s.tailOK = false
	s.version++
	start := 0
	if n := len(s.ends); n > 0 {
		start = s.ends[n-1]
	}
	if strings.TrimSpace(s.src.String()[start:]) != "" {
		s.ends = append(s.ends, s.src.Len())
	}
}

// Done reports whether Finish was called.
func (s *Stream) Done() bool { return s.done }

// Flush asks the next Lines to render the tail again: call it from a
// frame tick while the reply streams.
func (s *Stream) Flush() {
	if !s.tailOK || len(s.ends) > s.rendered {
		s.wantTail = true
		s.version++
	}
}

// Lines renders what is new — each finished chunk once, the tail when
// Flush asked for it — and returns the whole reply's lines. A new width
// or theme renders everything again.
func (s *Stream) Lines(width int, th *theme.Theme) Lines {
	if width != s.width || th != s.th {
		s.width, s.th = width, th
		s.lines, s.rendered, s.tail, s.tailOK = nil, 0, nil, false
		s.wantTail = true
	}
	if !s.wantTail && !s.done {
		// Between flushes the picture stays as the last one: a chunk
		// finished since then is still in the tail rendered then.
		return Lines{a: s.lines, b: s.tail}
	}
	s.wantTail = false
	src := s.src.String()
	for s.rendered < len(s.ends) {
		start := 0
		if s.rendered > 0 {
			start = s.ends[s.rendered-1]
		}
		out := Render(src[start:s.ends[s.rendered]], width, th)
		if len(out) > 0 {
			if len(s.lines) > 0 {
				s.lines = append(s.lines, "")
			}
			s.lines = append(s.lines, out...)
		}
		s.rendered++
	}
	s.tail = nil
	if !s.done {
		start := 0
		if n := len(s.ends); n > 0 {
			start = s.ends[n-1]
		}
		if strings.TrimSpace(src[start:]) != "" {
			s.tail = Render(src[start:], width, th)
		}
	}
	s.tailOK = true
	return Lines{a: s.lines, b: s.tail}
}

// Lines is a rendered reply: two runs of lines with a blank line
// between them when both are there, read without copying.
type Lines struct{ a, b []string }

// Len is the number of lines.
func (l Lines) Len() int {
	if len(l.a) > 0 && len(l.b) > 0 {
		return len(l.a) + 1 + len(l.b)
	}
	return len(l.a) + len(l.b)
}

// Line returns line i.
func (l Lines) Line(i int) string {
	if i < len(l.a) {
		return l.a[i]
	}
	if len(l.a) > 0 {
		if i == len(l.a) {
			return ""
		}
		i--
	}
	return l.b[i-len(l.a)]
}
