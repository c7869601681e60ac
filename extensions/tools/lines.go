package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
)

// readLine reads one line from br, '\n' included when there is one, and
// returns its first keep bytes in buf (reused) and its whole length. A
// line longer than keep is read through, not held: memory stays at
// keep plus br's buffer however long the line is. It checks ctx between
// chunks of a long line. err is io.EOF at the end of the input (with the
// last line, if it has no '\n').
func readLine(ctx context.Context, br *bufio.Reader, buf []byte, keep int) (head []byte, n int, err error) {
	head = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if room := keep - len(head); room > 0 {
			head = append(head, chunk[:min(room, len(chunk))]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return head, n, err
		}
		if err := ctx.Err(); err != nil {
			return head, n, err
		}
	}
}

// lineRest reads the rest of the line br is in, without its '\n', and
// then ends (io.EOF), counting the bytes it read; so a regexp can be run
// over a line too long to hold. It stops with ctx's error when ctx ends.
type lineRest struct {
	ctx  context.Context
	br   *bufio.Reader
	n    int // bytes read
	done bool
}

func (l *lineRest) Read(p []byte) (int, error) {
	if l.done {
		return 0, io.EOF
	}
	if err := l.ctx.Err(); err != nil {
		return 0, err
	}
	if l.br.Buffered() == 0 {
		if _, err := l.br.Peek(1); err != nil {
			l.done = true
			return 0, err
		}
	}
	buf, _ := l.br.Peek(min(len(p), l.br.Buffered()))
	k := len(buf)
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		k, l.done = i, true
	}
	copy(p, buf[:k])
	l.n += k
	skip := k
	if l.done {
		skip++ // the '\n'
	}
	_, _ = l.br.Discard(skip)
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}
