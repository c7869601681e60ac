package lineloop

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Input is the line loop's input: the lines the user types, each with the
// time it was typed (when the read that ended it returned), so a question
// can tell a line typed after it appeared from one typed before it. A
// goroutine reads ahead into a bounded queue; the loop takes lines from it
// in order.
type Input struct {
	// tty is stdin's file descriptor when it is a terminal, whose input
	// queue can be discarded; -1 when it is not.
	tty int
	// ready gets a token when a line was queued or the input ended.
	ready chan struct{}

	mu    sync.Mutex
	room  *sync.Cond // the reader waits for room in the queue
	queue []Line
	ended bool
	err   error // why the input ended: nil at EOF, *UnsentError, a read error
}

// Line is one line of input, without its line ending.
type Line struct {
	Text string
	// At is when it was typed: when the read that ended it returned.
	At time.Time
}

// maxQueued bounds the lines read ahead; the rest wait in the terminal.
const maxQueued = 256

// MaxLine bounds one line.
const MaxLine = 16 << 20

// NewInput starts reading r; when r is a terminal, Discard discards its
// input queue too.
func NewInput(r io.Reader) *Input {
	in := &Input{ready: make(chan struct{}, 1), tty: -1}
	in.room = sync.NewCond(&in.mu)
	if f, ok := r.(*os.File); ok && isTTY(f) {
		in.tty = int(f.Fd())
	}
	go in.read(r)
	return in
}

// read splits r into lines. Text after the last newline is not a line:
// at a terminal it is what the user half-typed before Ctrl-D, and it is
// not sent; the input ends with an *UnsentError instead.
func (in *Input) read(r io.Reader) {
	buf := make([]byte, 64<<10)
	var partial []byte
	for {
		n, err := r.Read(buf)
		at := time.Now()
		data := buf[:n]
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			partial = append(partial, data[:i]...)
			in.push(Line{strings.TrimSuffix(string(partial), "\r"), at})
			partial, data = partial[:0], data[i+1:]
		}
		partial = append(partial, data...)
		switch {
		case len(partial) > MaxLine:
			in.end(fmt.Errorf("read stdin: a line longer than %d MiB", MaxLine>>20))
		case err == io.EOF && len(partial) > 0:
			in.end(&UnsentError{Text: string(partial)})
		case err == io.EOF:
			in.end(nil)
		case err != nil:
			in.end(fmt.Errorf("read stdin: %w", err))
		default:
			continue
		}
		return
	}
}

func (in *Input) push(l Line) {
	in.mu.Lock()
	for len(in.queue) >= maxQueued {
		in.room.Wait()
	}
	in.queue = append(in.queue, l)
	in.mu.Unlock()
	in.signal()
}

func (in *Input) end(err error) {
	in.mu.Lock()
	in.ended, in.err = true, err
	in.mu.Unlock()
	in.signal()
}

func (in *Input) signal() {
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// Terminal reports whether the input is a terminal's.
func (in *Input) Terminal() bool { return in.tty >= 0 }

// Ready gets a token when a line was queued or the input ended: after it,
// call Next (and Done) until they have nothing more.
func (in *Input) Ready() <-chan struct{} { return in.ready }

// Next takes the next line, if one is queued.
func (in *Input) Next() (Line, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.queue) == 0 {
		return Line{}, false
	}
	l := in.queue[0]
	in.queue = in.queue[1:]
	in.room.Signal()
	return l, true
}

// Done reports whether the input ended and every line of it was taken,
// and why it ended: nil at the end of the input, an *UnsentError when
// text followed the last newline, or a read error.
func (in *Input) Done() (bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.ended && len(in.queue) == 0, in.err
}

// Discard drops the type-ahead: the lines read but not taken, and what
// waits in the terminal's input queue (lines not read yet, the line being
// typed, a terminal's answer to a query). It returns the lines it dropped
// from the queue.
func (in *Input) Discard() []Line {
	if in.tty >= 0 {
		_ = flushTTYInput(in.tty)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	dropped := in.queue
	in.queue = nil
	in.room.Broadcast()
	return dropped
}

// UnsentError is the text typed after the last newline when the input
// ended: not sent.
type UnsentError struct{ Text string }

func (e *UnsentError) Error() string {
	t := strings.Join(strings.Fields(e.Text), " ")
	if r := []rune(t); len(r) > 60 {
		t = string(r[:59]) + "…"
	}
	return fmt.Sprintf("not sent: %q (the input ended before Enter; Ctrl-D on a half-typed line does not send it)", t)
}
