// Package termtext makes text from outside panto safe to write to a
// terminal. Model text, tool output, file names, prompt files, extension
// texts and session logs can all hold bytes a terminal obeys: an escape
// sequence sets the clipboard (OSC 52), opens a link whose target is not
// its text (OSC 8), retitles the window, clears the screen or asks the
// terminal to type an answer into panto's input; a bidi override makes a
// line read differently from what it holds; a lone carriage return
// writes over what came before it.
//
// Sanitize (and Writer, for a stream) shows every such byte visibly
// instead, so the user sees that it was there and what it was, and the
// terminal obeys none of it:
//
//   - C0 controls but \n and \t, and DEL, become their Unicode control
//     pictures: ESC is "␛", so an OSC 52 reads "␛]52;c;…␇";
//   - a carriage return not followed by a line feed becomes "␍" (a CR
//     before a LF is dropped: the line ends the same way);
//   - C1 controls written as UTF-8 (U+0080–U+009F) become "\u009b";
//   - bidi overrides, embeddings, isolates and marks become "\u202e";
//   - a byte that is not UTF-8 becomes "\x9b" (a raw C1 control among
//     them).
//
// Everything else — printable text in any script, emoji, tabs and line
// feeds — passes unchanged. The only escape sequences panto writes to a
// terminal are its own styling, added after the text was made safe.
//
// The package does not decide where text comes from; every front end and
// subcommand calls it on whatever it did not write itself. Nothing here
// belongs to one front end.
package termtext

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Sanitize returns s with every byte a terminal would obey shown visibly
// (see the package comment). Text that needs no change is returned as is,
// without allocating.
func Sanitize(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	appendSafe(&b, s[i:])
	return b.String()
}

// Line is Sanitize for text shown on one line (a title, a list row, a
// status segment): a line feed or tab is shown as "␤" or a space too, so
// the text cannot break the line it is put in.
func Line(s string) string {
	s = Sanitize(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", "␤", "\t", " ").Replace(s)
}

// Safe reports whether s passes Sanitize unchanged.
func Safe(s string) bool { return firstUnsafe(s) == len(s) }

// firstUnsafe is the index of the first byte Sanitize would change, or
// len(s).
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\t':
			case c < 0x20 || c == 0x7f: // a CR too: dropped before a LF, shown alone
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// unsafeRune reports the runes above ASCII that are shown escaped: C1
// controls and the bidi controls.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, // LRE, RLE, PDF, LRO, RLO
		r >= 0x2066 && r <= 0x2069,            // LRI, RLI, FSI, PDI
		r == 0x200e, r == 0x200f, r == 0x061c: // LRM, RLM, ALM
		return true
	}
	return false
}

// appendSafe writes s to b with every unsafe byte shown visibly; a CR at
// the end of s is lone.
func appendSafe(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\t':
				b.WriteByte(c)
			case c == '\r':
				if i+1 == len(s) || s[i+1] != '\n' {
					b.WriteString("␍") // CRLF: the LF alone ends the line
				}
			case c < 0x20:
				b.WriteRune(0x2400 + rune(c)) // ␀ … ␟
			case c == 0x7f:
				b.WriteString("␡")
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(b, `\x%02x`, c)
		case unsafeRune(r):
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}

// Writer sanitizes everything written through it before passing it on,
// for text that arrives in pieces (a streamed reply, a tool's output): a
// CR or a UTF-8 sequence cut at the end of one Write is held until the
// next one says what it was. Flush writes what is held, as at the end of
// the text. A Writer is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte // an incomplete rune or a CR at the end of the last Write
	b    strings.Builder
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write sanitizes p and writes it on. It reports len(p) written when the
// underlying write succeeds, whatever the sanitized length.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := p
	if len(w.held) > 0 {
		data = append(w.held, p...)
		w.held = nil
	}
	cut := len(data) - heldTail(data)
	if cut < len(data) {
		w.held = append([]byte(nil), data[cut:]...)
	}
	if err := w.emit(string(data[:cut])); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what a Write held back: a trailing CR shown as lone, a cut
// UTF-8 sequence as its bytes.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return nil
	}
	held := string(w.held)
	w.held = nil
	return w.emit(held)
}

func (w *Writer) emit(s string) error {
	if s == "" {
		return nil
	}
	if Safe(s) {
		_, err := io.WriteString(w.w, s)
		return err
	}
	w.b.Reset()
	appendSafe(&w.b, s)
	_, err := io.WriteString(w.w, w.b.String())
	return err
}

// heldTail is how many bytes at the end of p cannot be judged yet: a CR
// (is a LF next?) or the start of a UTF-8 sequence cut short.
func heldTail(p []byte) int {
	n := len(p)
	if n == 0 {
		return 0
	}
	if p[n-1] == '\r' {
		return 1
	}
	// Look back over at most 3 continuation bytes for a lead byte whose
	// sequence is longer than what follows it.
	for k := 1; k <= utf8.UTFMax && k <= n; k++ {
		c := p[n-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(p[n-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// JSON makes JSON text safe for a terminal without changing what it
// decodes to: encoding/json already escapes C0 controls, so what is left
// are DEL, the C1 controls and the bidi controls, which it writes raw.
// Each becomes its \uXXXX escape; outside strings JSON text is ASCII, so
// they can only stand inside a string, where the escape means the same
// rune. b must be valid UTF-8 (as encoding/json writes it).
func JSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				out = append(append(out, b[last:i]...), `\u007f`...)
				last = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if unsafeRune(r) {
			out = append(append(out, b[last:i]...), fmt.Sprintf(`\u%04x`, r)...)
			last = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
