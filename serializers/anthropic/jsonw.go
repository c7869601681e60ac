package anthropic

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/panto-dev/panto/conversation"
)

// The request body is written by appending to one byte slice: no
// reflection, no intermediate trees, no maps, and the keys come out in the
// order the code writes them. These helpers produce exactly what
// encoding/json produces for the same values with SetEscapeHTML(false)
// (FuzzAppendString holds them to that).

const hex = "0123456789abcdef"

// appendString appends s as a JSON string, quotes included.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends the JSON escaping of s without the quotes. Invalid
// UTF-8 becomes U+FFFD, byte by byte, as encoding/json does; U+2028 and
// U+2029 are escaped, as encoding/json does, so the output is also valid
// JavaScript.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// appendKey appends ,"key": (or "key": when first is true).
func appendKey(b []byte, key string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// appendInt appends an integer.
func appendInt(b []byte, n int) []byte {
	return strconv.AppendInt(b, int64(n), 10)
}

var (
	errNotJSON   = errors.New("not valid JSON")
	errNotObject = errors.New("not a JSON object")
)

// appendObject appends raw, which must be one valid JSON object, with the
// insignificant whitespace removed (as json.Compact would, without the
// bytes.Buffer). Nothing is appended on error.
func appendObject(b []byte, raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return b, errNotJSON
	}
	if !conversation.OpensObject(raw) {
		return b, errNotObject
	}
	inString, escaped := false, false
	for _, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			b = append(b, c)
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		}
		b = append(b, c)
	}
	return b, nil
}
