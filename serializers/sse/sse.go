// Package sse reads Server-Sent Events streams (the text/event-stream
// format of the HTML standard) as both providers send them: "event:" and
// "data:" fields, comments, and events ended by a blank line.
//
// It knows nothing of what the events mean; the wire-format packages do.
package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// MaxLine is the longest line the reader accepts. Providers send one JSON
// object per data line; a tool call's input can be large, so this is
// generous.
const MaxLine = 16 << 20

// Event is one dispatched event.
type Event struct {
	// Name is the "event:" field; empty when the stream sends none
	// (OpenAI), which the standard calls "message".
	Name string
	// Data is the "data:" lines joined with "\n".
	Data []byte
	// Line is the line number (from 1) where the event's first field was.
	Line int
}

// Reader reads events from a stream.
type Reader struct {
	sc   *bufio.Scanner
	line int
	data bytes.Buffer
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), MaxLine)
	sc.Split(scanLines)
	return &Reader{sc: sc}
}

// Next returns the next event. At the end of the stream it returns io.EOF;
// a final event without its closing blank line is still returned first
// (the standard drops it, but a decoder then sees what was cut and can
// tell a truncated stream from a clean end). The returned Data is only
// valid until the next call.
func (r *Reader) Next() (Event, error) {
	var ev Event
	seen, dataLines := false, 0
	r.data.Reset()
	for r.sc.Scan() {
		r.line++
		line := r.sc.Bytes()
		if len(line) == 0 {
			if seen {
				ev.Data = r.data.Bytes()
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if dataLines > 0 {
				r.data.WriteByte('\n')
			}
			dataLines++
			r.data.Write(value)
		default:
			// id, retry and unknown fields are ignored.
		}
		if !seen {
			ev.Line = r.line
			seen = true
		}
	}
	if err := r.sc.Err(); err != nil {
		return Event{}, fmt.Errorf("read event stream line %d: %w", r.line+1, err)
	}
	if seen {
		ev.Data = r.data.Bytes()
		return ev, nil
	}
	return Event{}, io.EOF
}

// scanLines splits on "\n", "\r\n" or a lone "\r", as the standard says.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// '\r': a following '\n' belongs to it; if we cannot see the next
		// byte yet, ask for more.
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if !atEOF {
			return 0, nil, nil
		}
		return i + 1, data[:i], nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
