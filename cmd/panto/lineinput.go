package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// lineInput is the line loop's input: the lines the user types, each with
// the time it was typed (when the read that ended it returned), so a
// question can tell a line typed after it appeared from one typed before
// it. A goroutine reads ahead into a bounded queue; the loop takes lines
// from it in order.
type lineInput struct {
	// tty is stdin's file descriptor when it is a terminal, whose input
	// queue can be discarded; -1 when it is not.
	tty int
	// ready gets a token when a line was queued or the input ended.
	ready chan struct{}

	mu    sync.Mutex
	room  *sync.Cond // the reader waits for room in the queue
	queue []typedLine
	ended bool
	err   error // why the input ended: nil at EOF, *unsentError, a read error
}

// typedLine is one line of input, without its newline.
type typedLine struct {
	text string
	at   time.Time
}

// maxQueued bounds the lines read ahead; the rest wait in the terminal.
const maxQueued = 256

// maxLine bounds one line of the line loop.
const maxLine = 16 << 20

// newLineInput starts reading r.
func newLineInput(r io.Reader) *lineInput {
	in := &lineInput{ready: make(chan struct{}, 1), tty: -1}
	in.room = sync.NewCond(&in.mu)
	if f, ok := r.(*os.File); ok && isTTY(f) {
		in.tty = int(f.Fd())
	}
	go in.read(r)
	return in
}

// read splits r into lines. Text after the last newline is not a line:
// at a terminal it is what the user half-typed before Ctrl-D, and it is
// not sent; the input ends with an *unsentError instead.
func (in *lineInput) read(r io.Reader) {
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
			in.push(typedLine{strings.TrimSuffix(string(partial), "\r"), at})
			partial, data = partial[:0], data[i+1:]
		}
		partial = append(partial, data...)
		switch {
		case len(partial) > maxLine:
			in.end(fmt.Errorf("read stdin: a line longer than %d MiB", maxLine>>20))
		case err == io.EOF && len(partial) > 0:
			in.end(&unsentError{text: string(partial)})
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

func (in *lineInput) push(l typedLine) {
	in.mu.Lock()
	for len(in.queue) >= maxQueued {
		in.room.Wait()
	}
	in.queue = append(in.queue, l)
	in.mu.Unlock()
	in.signal()
}

func (in *lineInput) end(err error) {
	in.mu.Lock()
	in.ended, in.err = true, err
	in.mu.Unlock()
	in.signal()
}

func (in *lineInput) signal() {
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// next takes the next line, if one is queued.
func (in *lineInput) next() (typedLine, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.queue) == 0 {
		return typedLine{}, false
	}
	l := in.queue[0]
	in.queue = in.queue[1:]
	in.room.Signal()
	return l, true
}

// done reports whether the input ended and every line of it was taken,
// and why it ended.
func (in *lineInput) done() (bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.ended && len(in.queue) == 0, in.err
}

// discard drops the type-ahead: the lines read but not taken, and what
// waits in the terminal's input queue (lines not yet read, and the line
// being typed). It returns the lines it dropped from the queue.
func (in *lineInput) discard() []typedLine {
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

// unsentError is the text typed after the last newline when the input
// ended: not sent.
type unsentError struct{ text string }

func (e *unsentError) Error() string {
	return fmt.Sprintf("not sent: %q (the input ended before Enter; Ctrl-D on a half-typed line does not send it)", oneLine(e.text, 60))
}
