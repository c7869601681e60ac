package lineloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Confirm asks a yes-or-no question on a terminal before any session
// runs (whether to trust a project's settings): it discards what was
// typed ahead, ignores a line that ends within Grace of the question
// appearing, and takes only the word "yes" as yes. It reads in a byte at
// a time, so nothing typed after the answer's line is consumed: what
// comes next (the line loop, the full-screen UI) reads it. question is
// written as it is: the caller makes outside text in it safe.
func Confirm(ctx context.Context, in *os.File, out io.Writer, question string) (bool, error) {
	if isTTY(in) {
		_ = flushTTYInput(int(in.Fd()))
	}
	type line struct {
		text string
		at   time.Time
		err  error
	}
	lines := make(chan line, 1)
	read := func() {
		var b strings.Builder
		one := make([]byte, 1)
		for {
			n, err := in.Read(one)
			if n == 1 {
				if one[0] == '\n' {
					lines <- line{text: b.String(), at: time.Now()}
					return
				}
				if b.Len() < 1024 {
					b.WriteByte(one[0])
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				lines <- line{text: b.String(), at: time.Now(), err: err}
				return
			}
		}
	}
	fmt.Fprint(out, question)
	shown := time.Now()
	for {
		go read()
		var l line
		select {
		case l = <-lines:
		case <-ctx.Done():
			fmt.Fprintln(out)
			return false, context.Cause(ctx)
		}
		if l.err != nil {
			fmt.Fprintln(out)
			return false, fmt.Errorf("read the answer: %w", l.err)
		}
		if l.at.Before(shown.Add(Grace)) {
			fmt.Fprintf(out, "(ignored a line typed as the question appeared, within %s: answer again) ", Grace)
			continue
		}
		return strings.EqualFold(strings.TrimSpace(l.text), "yes"), nil
	}
}
