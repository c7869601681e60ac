package sessionlog

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/panto-dev/panto/conversation"
)

// fastDecoder decodes one entry line into a wireEntry without reflection,
// several times faster than encoding/json, which made resuming a large
// session slow. It is only a shortcut: it handles the JSON panto writes
// (known keys, each once, no escapes in keys, no nulls, valid UTF-8, no
// surrogate escapes) and gives up on anything else, and the caller then
// decodes the line with encoding/json, which defines the result. Where it
// succeeds, its result equals encoding/json's (FuzzFastDecode checks
// this), so the shortcut never changes what a log means.
type fastDecoder struct {
	b   []byte
	i   int
	buf []byte // scratch for unescaping strings
	// msg holds the message of the entry being decoded: entryFromWire
	// copies what it needs, so one per decoder saves an allocation a line.
	msg conversation.MessageJSON
	use Usage // the entry's usage, likewise
	// prevID is the id of the line decoded last: usually the next line's
	// parent_id, which then shares its string.
	prevID string
}

// maxFastDepth bounds nesting the shortcut follows (tool results hold
// blocks; raw values nest); deeper lines go to encoding/json.
const maxFastDepth = 100

// entry decodes line into w, which must be zero. It reports false when it
// gave up; w is then garbage. w.Message, if set, points into d: it is
// valid until the next call, and so is w.Usage.
func (d *fastDecoder) entry(line []byte, w *wireEntry) bool {
	d.b, d.i = line, 0
	var seen uint32
	ok := d.object(func(key []byte) bool {
		var bit uint32
		var ok bool
		switch string(key) {
		case "type":
			bit = 1 << 0
			var s string
			s, ok = d.word()
			w.Type = EntryType(s)
		case "id":
			bit = 1 << 1
			w.ID, ok = d.str()
		case "parent_id":
			bit = 1 << 2
			w.ParentID, ok = d.strOr(d.prevID)
		case "time":
			bit = 1 << 3
			ok = d.time(w)
		case "message":
			bit = 1 << 4
			d.msg = conversation.MessageJSON{}
			w.Message = &d.msg
			ok = d.message(w.Message)
		case "event":
			bit = 1 << 5
			var s string
			s, ok = d.word()
			w.Event = LifecycleEvent(s)
		case "reseeded":
			bit = 1 << 6
			w.Reseeded, ok = d.boolean()
		case "extensions":
			bit = 1 << 7
			w.Extensions, ok = d.strs()
		case "extension":
			bit = 1 << 8
			w.Extension, ok = d.str()
		case "data":
			bit = 1 << 9
			w.Data, ok = d.raw()
		case "provider":
			bit = 1 << 10
			w.Provider, ok = d.str()
		case "model":
			bit = 1 << 11
			w.Model, ok = d.str()
		case "summary":
			bit = 1 << 12
			w.Summary, ok = d.str()
		case "from":
			bit = 1 << 13
			w.From, ok = d.strOr(d.prevID)
		case "target":
			bit = 1 << 14
			w.Target, ok = d.str()
		case "label":
			bit = 1 << 15
			w.Label, ok = d.str()
		case "usage":
			bit = 1 << 16
			d.use = Usage{}
			w.Usage = &d.use
			ok = d.usage(w.Usage)
		}
		return once(&seen, bit) && ok
	})
	d.ws()
	if !ok || d.i != len(d.b) {
		return false
	}
	d.prevID = w.ID
	return true
}

// once records bit in seen; it is false for an unknown key (bit 0) or a
// repeated one.
func once(seen *uint32, bit uint32) bool {
	if bit == 0 || *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// usage reads a message entry's usage object: its known keys, each
// once, with small non-negative integers.
func (d *fastDecoder) usage(u *Usage) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		var bit uint32
		var p *int
		switch string(key) {
		case "input_tokens":
			bit, p = 1<<0, &u.InputTokens
		case "output_tokens":
			bit, p = 1<<1, &u.OutputTokens
		case "cache_read_tokens":
			bit, p = 1<<2, &u.CacheReadTokens
		case "cache_write_tokens":
			bit, p = 1<<3, &u.CacheWriteTokens
		case "reasoning_tokens":
			bit, p = 1<<4, &u.ReasoningTokens
		}
		if !once(&seen, bit) {
			return false
		}
		var ok bool
		*p, ok = d.count()
		return ok
	})
}

// count reads a JSON integer of at most 15 digits, without a sign or
// leading zeros; anything else (a fraction, an exponent, a negative
// number) is left to encoding/json.
func (d *fastDecoder) count() (int, bool) {
	n, j := 0, d.i
	for ; j < len(d.b) && j-d.i < 16 && d.b[j] >= '0' && d.b[j] <= '9'; j++ {
		n = n*10 + int(d.b[j]-'0')
	}
	digits := j - d.i
	if digits == 0 || digits > 15 || (digits > 1 && d.b[d.i] == '0') {
		return 0, false
	}
	if j < len(d.b) {
		switch d.b[j] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	d.i = j
	return n, true
}

func (d *fastDecoder) message(m *conversation.MessageJSON) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		var bit uint32
		var ok bool
		switch string(key) {
		case "role":
			bit = 1 << 0
			var s string
			s, ok = d.word()
			m.Role = conversation.Role(s)
		case "mode":
			bit = 1 << 1
			var s string
			s, ok = d.word()
			m.Mode = conversation.Mode(s)
		case "key":
			bit = 1 << 2
			m.Key, ok = d.str()
		case "source":
			bit = 1 << 3
			m.Source, ok = d.str()
		case "content":
			bit = 1 << 4
			m.Content, ok = d.blocks(1)
		}
		return once(&seen, bit) && ok
	})
}

func (d *fastDecoder) blocks(depth int) ([]conversation.Block, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	// Collect on the stack, then allocate once at the exact size.
	var small [4]conversation.Block
	out := small[:0]
	ok := d.array(func() bool {
		var b conversation.Block
		if !d.block(&b, depth) {
			return false
		}
		out = append(out, b)
		return true
	})
	if !ok {
		return nil, false
	}
	return append([]conversation.Block{}, out...), true // [] is empty, not nil, as in encoding/json
}

func (d *fastDecoder) block(b *conversation.Block, depth int) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		var bit uint32
		var ok bool
		var s string
		switch string(key) {
		case "type":
			bit = 1 << 0
			s, ok = d.word()
			b.Type = conversation.BlockType(s)
		case "text":
			bit = 1 << 1
			b.Text, ok = d.str()
		case "mode":
			bit = 1 << 2
			s, ok = d.word()
			b.Mode = conversation.Mode(s)
		case "thinking":
			bit = 1 << 3
			b.Thinking, ok = d.str()
		case "signature":
			bit = 1 << 4
			b.Signature, ok = d.str()
		case "data":
			bit = 1 << 5
			b.Data, ok = d.str()
		case "media_type":
			bit = 1 << 6
			b.MediaType, ok = d.str()
		case "id":
			bit = 1 << 7
			b.ID, ok = d.str()
		case "name":
			bit = 1 << 8
			b.Name, ok = d.str()
		case "input":
			bit = 1 << 9
			b.Input, ok = d.raw()
		case "tool_use_id":
			bit = 1 << 10
			b.ToolUseID, ok = d.str()
		case "content":
			bit = 1 << 11
			b.Content, ok = d.blocks(depth + 1)
		case "is_error":
			bit = 1 << 12
			b.IsError, ok = d.boolean()
		case "key":
			bit = 1 << 13
			b.Key, ok = d.str()
		case "source":
			bit = 1 << 14
			b.Source, ok = d.str()
		case "added":
			bit = 1 << 15
			b.Added, ok = d.str()
		case "sha256":
			bit = 1 << 16
			b.Sha256, ok = d.str()
		case "size":
			bit = 1 << 17
			var n int
			n, ok = d.count()
			b.Size = int64(n)
		}
		return once(&seen, bit) && ok
	})
}

// object reads an object, calling field for each member with the reader at
// the member's value; field reads the value.
func (d *fastDecoder) object(field func(key []byte) bool) bool {
	d.ws()
	if !d.consume('{') {
		return false
	}
	d.ws()
	if d.consume('}') {
		return true
	}
	for {
		d.ws()
		key, ok := d.key()
		if !ok {
			return false
		}
		d.ws()
		if !d.consume(':') {
			return false
		}
		d.ws()
		if !field(key) {
			return false
		}
		d.ws()
		switch {
		case d.consume(','):
		case d.consume('}'):
			return true
		default:
			return false
		}
	}
}

func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) consume(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// key reads a key that is plain ASCII without escapes.
func (d *fastDecoder) key() ([]byte, bool) {
	if !d.consume('"') {
		return nil, false
	}
	for j := d.i; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			k := d.b[d.i:j]
			d.i = j + 1
			return k, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// stringStop marks the bytes that end a run of plain string content: the
// closing quote, a backslash, and the control characters JSON forbids.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// run returns the end of the run of plain string content from j. (Word-
// at-a-time scanning was tried: runs between escapes are too short in real
// transcripts for it to pay.)
func (d *fastDecoder) run(j int) int {
	for j < len(d.b) && !stringStop[d.b[j]] {
		j++
	}
	return j
}

// str reads a string value.
func (d *fastDecoder) str() (string, bool) {
	s, esc, ok := d.plain()
	if !ok || esc {
		return d.rest(esc)
	}
	return string(s), true
}

// strOr reads a string value; when it equals same, it returns same rather
// than a new copy.
func (d *fastDecoder) strOr(same string) (string, bool) {
	s, esc, ok := d.plain()
	switch {
	case !ok || esc:
		return d.rest(esc)
	case string(s) == same:
		return same, true
	}
	return string(s), true
}

// word reads a string value that is usually one of the names the format
// defines (types, roles, modes, events): those it returns without an
// allocation.
func (d *fastDecoder) word() (string, bool) {
	s, esc, ok := d.plain()
	if !ok || esc {
		return d.rest(esc)
	}
	switch string(s) {
	case "message":
		return "message", true
	case "lifecycle":
		return "lifecycle", true
	case "extension_data":
		return "extension_data", true
	case "model_change":
		return "model_change", true
	case "compaction":
		return "compaction", true
	case "move":
		return "move", true
	case "label":
		return "label", true
	case "branch_summary":
		return "branch_summary", true
	case "started":
		return "started", true
	case "resumed":
		return "resumed", true
	case "user":
		return "user", true
	case "assistant":
		return "assistant", true
	case "system":
		return "system", true
	case "append":
		return "append", true
	case "replace":
		return "replace", true
	case "text":
		return "text", true
	case "thinking":
		return "thinking", true
	case "redacted_thinking":
		return "redacted_thinking", true
	case "tool_use":
		return "tool_use", true
	case "tool_result":
		return "tool_result", true
	case "image":
		return "image", true
	}
	return string(s), true
}

// plain reads a string value that holds no escapes and returns its bytes
// (not copied; valid UTF-8). At a string with escapes it stops just after
// the opening quote and reports esc; at anything else, !ok.
func (d *fastDecoder) plain() (s []byte, esc, ok bool) {
	if !d.consume('"') {
		return nil, false, false
	}
	start := d.i
	j := d.run(start)
	switch {
	case j >= len(d.b) || d.b[j] < 0x20:
		return nil, false, false
	case d.b[j] == '\\':
		return nil, true, true
	}
	s = d.b[start:j]
	if !utf8.Valid(s) {
		return nil, false, false
	}
	d.i = j + 1
	return s, false, true
}

// rest finishes a string plain stopped at: one with escapes when esc,
// else a failure.
func (d *fastDecoder) rest(esc bool) (string, bool) {
	if !esc {
		return "", false
	}
	return d.escaped(d.i)
}

// escaped reads the rest of a string that holds escapes, from start (just
// after the opening quote).
func (d *fastDecoder) escaped(start int) (string, bool) {
	buf := d.buf[:0]
	for j := start; j < len(d.b); {
		k := d.run(j)
		buf = append(buf, d.b[j:k]...)
		if k >= len(d.b) || d.b[k] < 0x20 {
			return "", false
		}
		if d.b[k] == '"' {
			if !utf8.Valid(d.b[start:k]) {
				return "", false
			}
			d.buf = buf
			d.i = k + 1
			return string(buf), true
		}
		if k+1 >= len(d.b) {
			return "", false
		}
		j = k + 2
		switch e := d.b[k+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(d.b[k+2:])
			if !ok || utf16.IsSurrogate(r) {
				return "", false
			}
			buf = utf8.AppendRune(buf, r)
			j = k + 6
		default:
			return "", false
		}
	}
	return "", false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (d *fastDecoder) strs() ([]string, bool) {
	out := []string{}
	ok := d.array(func() bool {
		s, ok := d.str()
		out = append(out, s)
		return ok
	})
	return out, ok
}

// array reads an array, calling elem to read each element.
func (d *fastDecoder) array(elem func() bool) bool {
	if !d.consume('[') {
		return false
	}
	d.ws()
	if d.consume(']') {
		return true
	}
	for {
		d.ws()
		if !elem() {
			return false
		}
		d.ws()
		switch {
		case d.consume(','):
		case d.consume(']'):
			return true
		default:
			return false
		}
	}
}

func (d *fastDecoder) boolean() (bool, bool) {
	rest := d.b[d.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		d.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		d.i += 5
		return false, true
	}
	return false, false
}

// time reads the entry's time the way encoding/json does: the string
// literal, quotes included, handed to time.Time's UnmarshalJSON.
func (d *fastDecoder) time(w *wireEntry) bool {
	start := d.i
	if !d.consume('"') {
		return false
	}
	for j := d.i; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return w.Time.UnmarshalJSON(d.b[start:d.i]) == nil
		case c == '\\' || c < 0x20 || c >= 0x80:
			return false
		}
	}
	return false
}

// raw reads any JSON value and returns a copy of its bytes, as
// json.RawMessage's UnmarshalJSON would hold them.
func (d *fastDecoder) raw() (json.RawMessage, bool) {
	start := d.i
	depth, deepest := 0, 0
scan:
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			if depth == 0 {
				break scan
			}
			depth--
			if depth == 0 {
				d.i++
				break scan
			}
		case '"':
			if !d.skipString() {
				return nil, false
			}
			if depth == 0 {
				break scan
			}
			continue
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				break scan
			}
		}
		d.i++
	}
	v := d.b[start:d.i]
	if len(v) == 0 || deepest > maxFastDepth || !json.Valid(v) {
		return nil, false
	}
	return append(json.RawMessage(nil), v...), true
}

// skipString moves past the string literal at the reader (validity is
// json.Valid's business).
func (d *fastDecoder) skipString() bool {
	for j := d.i + 1; j < len(d.b); j++ {
		switch d.b[j] {
		case '\\':
			j++
		case '"':
			d.i = j + 1
			return true
		}
	}
	return false
}
