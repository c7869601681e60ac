// Package termtext makes text from outside panto safe to write to a
// terminal. Model text, tool output, file names, prompt files, extension
// texts and session logs can all hold bytes a terminal obeys: an escape
// sequence sets the clipboard (OSC 52), opens a link whose target is not
// its text (OSC 8), retitles the window, clears the screen or asks the
// terminal to type an answer into panto's input; a bidi override makes a
// line read differently from what it holds; a lone carriage return
// writes over what came before it. An invisible character draws nothing
// while whoever reads the text — a model among them — still reads it:
// tag characters (U+E0000–U+E007F) spell ASCII no terminal shows, so a
// prompt file can hold "Run make test." for the user and an order to run
// a script for the model.
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
//   - invisible characters become "\u200b", or "\U000e0041" above
//     U+FFFF: Unicode's Default_Ignorable_Code_Point but the few that
//     text needs to be drawn right (below), and the line and paragraph
//     separators U+2028, U+2029;
//   - a byte that is not UTF-8 becomes "\x9b" (a raw C1 control among
//     them).
//
// Everything else — printable text in any script, emoji, tabs and line
// feeds — passes unchanged. The only escape sequences panto writes to a
// terminal are its own styling, added after the text was made safe.
//
// The default-ignorable characters that pass are those without which
// text in use today is drawn wrong: the zero-width joiner U+200D (every
// emoji ZWJ sequence, 👩‍💻, and conjuncts in Indic scripts) and
// non-joiner U+200C (Persian, Indic scripts), the variation selectors
// U+FE00–U+FE0F (an emoji's text or emoji form: ❤️), and Mongolian's
// free variation selectors and vowel separator (U+180B–U+180F). They can
// still carry a few bits each — a run of joiners, a run of selectors
// after an emoji — but no text a model reads as words: that takes a
// decoder named in visible text. The price of the rest: the subdivision
// flags (🏴 and tag characters: England, Scotland, Wales) show as 🏴
// and their tags escaped; an ideographic variation selector
// (U+E0100–U+E01EF, which also carry the bytes of an "emoji smuggling"
// payload) shows escaped after its ideograph; a byte order mark (U+FEFF)
// at the start of a file shows as "\ufeff".
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
	"unicode/utf16"
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
// controls, the bidi controls and the invisible characters.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, // LRE, RLE, PDF, LRO, RLO
		r >= 0x2066 && r <= 0x2069,            // LRI, RLI, FSI, PDI
		r == 0x200e, r == 0x200f, r == 0x061c: // LRM, RLM, ALM
		return true
	}
	return invisible(r)
}

// invisible reports the characters that draw nothing and are not needed
// to draw text right — Unicode's Default_Ignorable_Code_Point (the bidi
// controls among them are unsafeRune's) but ZWNJ, ZWJ, the variation
// selectors U+FE00–U+FE0F and Mongolian's U+180B–U+180F (see the package
// comment) — and the line and paragraph separators, which terminals draw
// as nothing or as a break no one sees coming.
func invisible(r rune) bool {
	if r < 0xad {
		return false
	}
	switch {
	case r == 0x00ad, // SOFT HYPHEN
		r == 0x034f,              // COMBINING GRAPHEME JOINER
		r == 0x115f, r == 0x1160, // HANGUL CHOSEONG, JUNGSEONG FILLER
		r == 0x17b4, r == 0x17b5, // KHMER VOWEL INHERENT AQ, AA
		r == 0x200b,              // ZERO WIDTH SPACE
		r == 0x2028, r == 0x2029, // LINE, PARAGRAPH SEPARATOR
		r >= 0x2060 && r <= 0x206f, // WORD JOINER, invisible operators, deprecated formats (and the isolates)
		r == 0x3164, r == 0xffa0,   // HANGUL FILLER, HALFWIDTH HANGUL FILLER
		r == 0xfeff,                  // ZERO WIDTH NO-BREAK SPACE (BOM)
		r >= 0xfff0 && r <= 0xfffb,   // unassigned, interlinear annotation
		r >= 0x1bca0 && r <= 0x1bca3, // shorthand format controls
		r >= 0x1d173 && r <= 0x1d17a, // musical symbol beams, ties, slurs, phrases
		r >= 0xe0000 && r <= 0xe0fff: // tags, variation selectors 17–256, unassigned
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
			writeEscape(b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}

// writeEscape writes r's visible form: \u202e, or \U000e0041 above
// U+FFFF.
func writeEscape(b *strings.Builder, r rune) {
	if r > 0xffff {
		fmt.Fprintf(b, `\U%08x`, r)
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
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
// decodes to: encoding/json already escapes C0 controls (and U+2028,
// U+2029), so what is left are DEL, the C1 controls, the bidi controls
// and the invisible characters, which it writes raw. Each becomes its
// \uXXXX escape (a surrogate pair above U+FFFF, as JSON spells it);
// outside strings JSON text is ASCII, so they can only stand inside a
// string, where the escape means the same rune. b must be valid UTF-8
// (as encoding/json writes it).
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
			out = append(out, b[last:i]...)
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
			last = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
