// Package sse reads Server-Sent Events streams (the text/event-stream
// format of the HTML standard) as both providers send them: "event:" and
// "data:" fields, comments, and events ended by a blank line.
//
// It knows nothing of what the events mean; the wire-format packages do.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest line the reader accepts, its end of line left
// out: 64 MiB, the largest message panto and its extensions exchange.
// Providers send one JSON object per data line, and one can hold a whole
// tool call's input (a file the model writes), so the limit is that of
// the largest input a tool can be sent.
const MaxLine = 64 << 20

// ErrLineTooLong is wrapped by the error of a stream with a line longer
// than MaxLine (a *LineTooLongError says where). Nothing in the stream
// after it is read: the reply it carried is lost, and asking the model
// for less (a smaller file per write) is the way on.
var ErrLineTooLong = errors.New("event stream line too long")

// LineTooLongError says which line of a stream was over MaxLine.
type LineTooLongError struct {
	// Line is its line number, from 1.
	Line int
	// Field is its field name as far as it was read ("data"); Event the
	// name of the event it belongs to, empty when none was given before
	// it (OpenAI sends none).
	Field, Event string
}

func (e *LineTooLongError) Error() string {
	where := fmt.Sprintf("the %q field of an event without a name", e.Field)
	if e.Event != "" {
		where = fmt.Sprintf("the %q field of event %q", e.Field, e.Event)
	}
	return fmt.Sprintf("read event stream line %d: the line is longer than %d MiB, the limit for one line (%s); "+
		"the reply is lost: ask for smaller pieces (a large file in several writes)", e.Line, MaxLine>>20, where)
}

// Unwrap makes it ErrLineTooLong, and bufio.ErrTooLong for a caller that
// tells a line too long from a stream cut short by that.
func (e *LineTooLongError) Unwrap() []error { return []error{ErrLineTooLong, bufio.ErrTooLong} }

// errLong is what scanLines returns for a line over MaxLine, with the
// line's first bytes, to name its field.
type errLong struct{ head []byte }

func (errLong) Error() string { return "line too long" }

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
	// Room for the longest line and its "\r\n": scanLines reports a
	// longer one before the Scanner's own, unnamed, ErrTooLong.
	sc.Buffer(make([]byte, 0, 4<<10), MaxLine+2)
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
		var long errLong
		if errors.As(err, &long) {
			field, _, _ := bytes.Cut(long.head, []byte(":"))
			return Event{}, &LineTooLongError{Line: r.line + 1, Field: string(field), Event: ev.Name}
		}
		return Event{}, fmt.Errorf("read event stream line %d: %w", r.line+1, err)
	}
	if seen {
		ev.Data = r.data.Bytes()
		return ev, nil
	}
	return Event{}, io.EOF
}

// scanLines splits on "\n", "\r\n" or a lone "\r", as the standard says.
// A line longer than MaxLine is an errLong.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	i := bytes.IndexAny(data, "\r\n")
	if i > MaxLine || i < 0 && len(data) > MaxLine {
		head := data[:min(len(data), 64)]
		if j := bytes.IndexByte(head, ':'); j >= 0 {
			head = head[:j]
		}
		return 0, nil, errLong{head: bytes.Clone(head)}
	}
	if i >= 0 {
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
