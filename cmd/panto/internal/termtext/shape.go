package termtext

import (
	"io"
	"strings"
)

// OneLine is s on one line — runs of white space, line breaks included,
// made one space — cut to n runes (the last of them "…" when cut). It
// shapes text for a row or a notice; it does not make it safe (Line
// does both).
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Flush flushes each writer that holds text back (a Writer holding a
// rune cut short or a trailing CR, a JSON writer holding a line's
// start): called at the end of each piece of output that must appear
// now — a reply's end, a prompt, a question. Writers without a Flush
// method are left alone.
func Flush(ws ...io.Writer) {
	for _, w := range ws {
		if f, ok := w.(interface{ Flush() error }); ok {
			_ = f.Flush()
		}
	}
}
