package tui

import (
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// safeFrame is the last guard between the UI and the terminal: a frame
// keeps the UI's own styling — SGR sequences, ESC [ params m, the only
// escapes panto writes — and everything else in it goes through
// termtext. Outside text is made safe where it enters the UI (an event,
// a picker's row, a prompt block); this is what holds if a surface ever
// forgets: an OSC, DCS or APC, a C1 or bidi control, a lone CR cannot
// reach the terminal whatever drew it. (An SGR from outside would pass
// here, but never gets this far: termtext showed its ESC as "␛" where it
// came in.)
func safeFrame(s string) string {
	if frameSafe(s) {
		return s // as nearly always: nothing to copy
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\x1b')
		if j < 0 {
			break
		}
		i += j
		n := sgrLen(s[i:])
		if n == 0 {
			i++
			continue
		}
		if b.Cap() == 0 {
			b.Grow(len(s) + 64)
		}
		b.WriteString(termtext.Sanitize(s[last:i]))
		b.WriteString(s[i : i+n])
		i += n
		last = i
	}
	if last == 0 {
		return termtext.Sanitize(s)
	}
	b.WriteString(termtext.Sanitize(s[last:]))
	return b.String()
}

// frameSafe reports whether s is SGR sequences and text termtext passes.
func frameSafe(s string) bool {
	last := 0
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\x1b')
		if j < 0 {
			break
		}
		i += j
		n := sgrLen(s[i:])
		if n == 0 || !termtext.Safe(s[last:i]) {
			return false
		}
		i += n
		last = i
	}
	return termtext.Safe(s[last:])
}

// sgrLen is the length of the SGR sequence s starts with, or 0: ESC [,
// parameters (digits, ';' and ':'), m.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != '\x1b' || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9' || c == ';' || c == ':':
		case c == 'm':
			return i + 1
		default:
			return 0
		}
	}
	return 0
}
