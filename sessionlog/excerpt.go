package sessionlog

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxFirstText bounds Summary.FirstUserText: a session list shows a few
// words of it and a preview a few lines, and a first message can be
// hundreds of megabytes (a pasted log), which the summary and its sidecar
// must not hold.
const MaxFirstText = 512

// excerptCut ends an excerpt that was cut.
const excerptCut = "…"

// excerpt returns s when it has at most MaxFirstText bytes, else its
// start, cut on a rune boundary, and "…", in MaxFirstText bytes at most.
func excerpt(s string) string {
	if len(s) <= MaxFirstText {
		return s
	}
	cut := MaxFirstText - len(excerptCut)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + excerptCut
}

// bigLine is the length from which the summary reads a message line's
// text excerpt by streaming it (firstText) rather than decoding the whole
// line: a smaller line decodes in well under a millisecond.
const bigLine = 1 << 20

// lineText is what firstText reads of an entry's line.
type lineText struct {
	// time is the entry's time as written ("" without one).
	time string
	role string
	// text is the start of the message's typed text (Message.Typed): at
	// least MaxFirstText+1 bytes of it when it has that many, so that
	// excerpt of it is excerpt of the whole.
	text []byte
	// hasText reports whether the typed text is not empty.
	hasText bool
}

// firstText reads an entry's line from r, streaming, and returns its time
// and the role and the start of the typed text of its message, in memory bounded
// by the excerpt however long the line. Like fastDecoder it is only a
// shortcut: it handles the JSON panto writes (the keys it looks at in
// their exact case, each once, no escapes in keys, string values where
// Message has strings) and reports false on anything else, malformed JSON
// included; the caller then decodes the line in full. Where it succeeds,
// its role and text are those a full decode gives (FuzzFirstText checks
// this). It does not check the rest of the entry the way a decode does.
// An entry that is not a message has no role and no text.
func firstText(r io.Reader) (lineText, bool) {
	w := &textWalker{r: bufio.NewReaderSize(r, 64<<10)}
	var out lineText
	seen := map[string]bool{}
	ok := w.object(0, func(key string) bool {
		if !w.known(key, "message", "time") || (key == "message" || key == "time") && !w.once(seen, key) {
			return false
		}
		switch key {
		case "message":
			return w.message(&out)
		case "time":
			var t []byte
			if !w.str(&t, 64) {
				return false
			}
			out.time = string(t)
			return true
		}
		return w.value(1)
	})
	if !ok || !w.end() {
		return lineText{}, false
	}
	return out, true
}

// textWalker walks JSON from a reader.
type textWalker struct {
	r *bufio.Reader
	// lastNonEmpty is set by str: whether the string it read had any
	// character.
	lastNonEmpty bool
}

// maxWalkDepth bounds the nesting the walker follows.
const maxWalkDepth = 200

func (w *textWalker) byte() (byte, bool) {
	c, err := w.r.ReadByte()
	return c, err == nil
}

// peek returns the next byte that is not white space, without taking it.
func (w *textWalker) peek() (byte, bool) {
	for {
		c, err := w.r.ReadByte()
		if err != nil {
			return 0, false
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		w.r.UnreadByte()
		return c, true
	}
}

// end reports whether nothing but white space is left.
func (w *textWalker) end() bool {
	_, more := w.peek()
	return !more
}

// known reports whether key may be handled: a key that encoding/json
// would match to one of names in another case is not (the shortcut gives
// up rather than tell them apart).
func (w *textWalker) known(key string, names ...string) bool {
	for _, n := range names {
		if key != n && strings.EqualFold(key, n) { // as encoding/json matches keys
			return false
		}
	}
	return true
}

// once reports whether key is seen for the first time in the object.
func (w *textWalker) once(seen map[string]bool, key string) bool {
	if seen[key] {
		return false
	}
	seen[key] = true
	return true
}

// object walks an object, calling member for each key with the reader at
// its value; member walks the value.
func (w *textWalker) object(depth int, member func(key string) bool) bool {
	if depth > maxWalkDepth {
		return false
	}
	if c, ok := w.peek(); !ok || c != '{' {
		return false
	}
	w.r.ReadByte()
	c, ok := w.peek()
	if !ok {
		return false
	}
	if c == '}' {
		w.r.ReadByte()
		return true
	}
	for {
		key, ok := w.key()
		if !ok {
			return false
		}
		if c, ok := w.peek(); !ok || c != ':' {
			return false
		}
		w.r.ReadByte()
		if !member(key) {
			return false
		}
		if more, ok := w.next('}'); !more {
			return ok
		}
	}
}

// next reads what follows a member of an object or an element of an
// array, closed by end: more is set after a comma; ok (with more unset)
// at end; neither on anything else.
func (w *textWalker) next(end byte) (more, ok bool) {
	c, ok := w.peek()
	if !ok {
		return false, false
	}
	w.r.ReadByte()
	switch c {
	case ',':
		return true, true
	case end:
		return false, true
	}
	return false, false
}

// key reads an object's key: a string without escapes, of at most 256
// bytes (a longer one is not one panto writes).
func (w *textWalker) key() (string, bool) {
	if c, ok := w.peek(); !ok || c != '"' {
		return "", false
	}
	w.r.ReadByte()
	var b []byte
	for {
		c, ok := w.byte()
		switch {
		case !ok, c == '\\', c < 0x20, len(b) > 256:
			return "", false
		case c == '"':
			return string(b), true
		}
		b = append(b, c)
	}
}

// message walks an entry's message object into out.
func (w *textWalker) message(out *lineText) bool {
	seen := map[string]bool{}
	return w.object(1, func(key string) bool {
		if !w.known(key, "role", "content") || !w.once(seen, key) {
			return false
		}
		switch key {
		case "role":
			var role []byte
			if !w.str(&role, 64) {
				return false
			}
			out.role = string(role)
			return true
		case "content":
			return w.content(out)
		}
		return w.value(2)
	})
}

// content walks a message's content array: the start of its typed text
// (conversation.Message.Typed) goes to out.text, up to the excerpt's
// need. Which blocks that is is known only at the end (a block marked
// added anywhere makes it the unmarked blocks, else it is the last text
// block), so both are kept, each bounded.
func (w *textWalker) content(out *lineText) bool {
	if c, ok := w.peek(); !ok || c != '[' {
		return false
	}
	w.r.ReadByte()
	if c, ok := w.peek(); ok && c == ']' {
		w.r.ReadByte()
		return true
	}
	var unmarked, last []byte
	var unmarkedHas, lastHas, marked bool
	for {
		var typ, text, added []byte
		nonEmpty, isAdded := false, false
		seen := map[string]bool{}
		ok := w.object(3, func(key string) bool {
			if !w.known(key, "type", "text", "added") || !w.once(seen, key) {
				return false
			}
			switch key {
			case "type":
				return w.str(&typ, 64)
			case "text":
				if !w.str(&text, MaxFirstText+1) {
					return false
				}
				nonEmpty = w.lastNonEmpty
				return true
			case "added":
				if !w.str(&added, 0) {
					return false
				}
				isAdded = w.lastNonEmpty
				return true
			}
			return w.value(4)
		})
		if !ok {
			return false
		}
		if string(typ) == "text" {
			last, lastHas = text, nonEmpty
			marked = marked || isAdded
			if !isAdded {
				unmarked = append(unmarked, text[:min(len(text), max(0, MaxFirstText+1-len(unmarked)))]...)
				unmarkedHas = unmarkedHas || nonEmpty
			}
		}
		if more, ok := w.next(']'); !more {
			if !ok {
				return false
			}
			if marked {
				out.text, out.hasText = unmarked, unmarkedHas
			} else {
				out.text, out.hasText = last, lastHas
			}
			return true
		}
	}
}

// str reads a string value, appending its decoded start to *out while
// *out holds fewer than keep more bytes (whole runes, as encoding/json
// decodes them: invalid UTF-8 and lone surrogates become U+FFFD), and
// checking the rest. It sets lastNonEmpty to whether the string had any
// character.
func (w *textWalker) str(out *[]byte, keep int) bool {
	w.lastNonEmpty = false
	if c, ok := w.peek(); !ok || c != '"' {
		return false
	}
	w.r.ReadByte()
	limit := len(*out) + keep
	for len(*out) < limit {
		c, ok := w.byte()
		switch {
		case !ok, c < 0x20:
			return false
		case c == '"':
			return true
		case c == '\\':
			w.lastNonEmpty = true
			r, ok := w.escape()
			if !ok {
				return false
			}
			if utf16.IsSurrogate(r) {
				r = w.surrogate(r)
				if r < 0 {
					return false
				}
			}
			*out = utf8.AppendRune(*out, r)
		case c < utf8.RuneSelf:
			w.lastNonEmpty = true
			*out = append(*out, c)
		default:
			w.lastNonEmpty = true
			w.r.UnreadByte()
			r, _, err := w.r.ReadRune()
			if err != nil {
				return false
			}
			*out = utf8.AppendRune(*out, r) // an invalid byte is U+FFFD, as encoding/json has it
		}
	}
	return w.skipStr()
}

// escape reads an escape after its backslash: the rune it stands for.
func (w *textWalker) escape() (rune, bool) {
	c, ok := w.byte()
	if !ok {
		return 0, false
	}
	switch c {
	case '"', '\\', '/':
		return rune(c), true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u':
		return w.hex4()
	}
	return 0, false
}

func (w *textWalker) hex4() (rune, bool) {
	var r rune
	for range 4 {
		c, ok := w.byte()
		if !ok {
			return 0, false
		}
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// surrogate completes the surrogate r as encoding/json does: a high one
// followed by an escaped low one is a pair; anything else is U+FFFD, and
// what follows is read on its own. It returns -1 on malformed JSON.
func (w *textWalker) surrogate(r rune) rune {
	if next, err := w.r.Peek(6); err == nil && next[0] == '\\' && next[1] == 'u' {
		var r2 rune
		okHex := true
		for _, c := range next[2:] {
			switch {
			case '0' <= c && c <= '9':
				c -= '0'
			case 'a' <= c && c <= 'f':
				c -= 'a' - 10
			case 'A' <= c && c <= 'F':
				c -= 'A' - 10
			default:
				okHex = false
			}
			r2 = r2*16 + rune(c)
		}
		if okHex {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				w.r.Discard(6)
				return dec
			}
		}
	}
	return utf8.RuneError
}

// skipStr checks the rest of a string up to its closing quote, fast.
func (w *textWalker) skipStr() bool {
	for {
		buf, _ := w.r.Peek(w.r.Buffered())
		if len(buf) == 0 {
			if _, err := w.r.Peek(1); err != nil {
				return false
			}
			continue
		}
		i := 0
		for i < len(buf) {
			c := buf[i]
			if c == '"' {
				w.r.Discard(i + 1)
				return true
			}
			if c < 0x20 {
				return false
			}
			if c == '\\' {
				if i+5 >= len(buf) {
					break // the escape may go past the buffer: read it below
				}
				w.lastNonEmpty = true
				switch buf[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
				case 'u':
					for _, h := range buf[i+2 : i+6] {
						if !isHex(h) {
							return false
						}
					}
					i += 6
				default:
					return false
				}
				continue
			}
			w.lastNonEmpty = true
			i++
		}
		w.r.Discard(i)
		if i < len(buf) { // an escape at the end of the buffer
			w.lastNonEmpty = true
			w.r.ReadByte()
			if _, ok := w.escape(); !ok {
				return false
			}
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// value skips any JSON value, checking it.
func (w *textWalker) value(depth int) bool {
	if depth > maxWalkDepth {
		return false
	}
	c, ok := w.peek()
	if !ok {
		return false
	}
	switch {
	case c == '{':
		return w.object(depth, func(string) bool { return w.value(depth + 1) })
	case c == '[':
		w.r.ReadByte()
		if c, ok := w.peek(); ok && c == ']' {
			w.r.ReadByte()
			return true
		}
		for {
			if !w.value(depth + 1) {
				return false
			}
			if more, ok := w.next(']'); !more {
				return ok
			}
		}
	case c == '"':
		var none []byte
		return w.str(&none, 0)
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return w.number()
	}
	return false
}

func (w *textWalker) literal(s string) bool {
	for i := range len(s) {
		if c, ok := w.byte(); !ok || c != s[i] {
			return false
		}
	}
	return true
}

// number checks a JSON number.
func (w *textWalker) number() bool {
	next := func() (byte, bool) {
		c, err := w.r.ReadByte()
		return c, err == nil
	}
	digits := func() {
		for {
			c, ok := next()
			if !ok {
				return
			}
			if c < '0' || c > '9' {
				w.r.UnreadByte()
				return
			}
		}
	}
	digit := func() bool {
		c, ok := next()
		return ok && '0' <= c && c <= '9'
	}
	c, _ := next()
	if c == '-' {
		if c, _ = next(); c < '0' || c > '9' {
			return false
		}
	}
	if c != '0' {
		digits()
	}
	c, ok := next()
	if ok && c == '.' {
		if !digit() {
			return false
		}
		digits()
		c, ok = next()
	}
	if ok && (c == 'e' || c == 'E') {
		d, _ := next()
		if d == '+' || d == '-' {
			d, _ = next()
		}
		if d < '0' || d > '9' {
			return false
		}
		digits()
		_, ok = next()
	}
	if ok {
		w.r.UnreadByte()
	}
	return true
}
