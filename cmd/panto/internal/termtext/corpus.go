package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A Sample is one hostile text for the tests of a surface that writes
// outside text to a terminal.
type Sample struct {
	// Name says what the text would do.
	Name string
	// Text is what to feed the surface.
	Text string
	// Raw is the part of Text that must never reach the terminal as it
	// is: bytes a terminal obeys, next to text panto never writes, so
	// finding Raw among panto's own styling escapes means Text went
	// through raw.
	Raw string
}

// Hostile is a corpus of texts a terminal would obey. Feed each through a
// surface and check the bytes written with Leaks (for output with
// panto's own styling, such as the full-screen UI's) or Check (for plain
// output).
var Hostile = []Sample{
	{"osc52 clipboard", "x\x1b]52;c;cm0gLXJmIH4K\x07", "\x1b]52;c;cm0g"},
	{"osc52 st", "x\x1b]52;p;cm0gLXJmIH4K\x1b\\", "\x1b]52;p;cm0g"},
	{"osc8 link", "\x1b]8;;https://evil.example/\x1b\\https://good.example/\x1b]8;;\x1b\\", "\x1b]8;;https://evil"},
	{"title", "\x1b]0;pwned-title\x07", "\x1b]0;pwned"},
	{"clear screen", "clr1\x1b[2J\x1b[H", "clr1\x1b[2J"},
	{"erase line", "git status\x1b[2K\x1b[1Grm -rf ~", "\x1b[1Grm -rf"},
	{"dsr", "dsr1\x1b[6n", "dsr1\x1b[6n"},
	{"da", "da1\x1b[c", "da1\x1b[c"},
	{"dcs", "\x1bP+q70776e\x1b\\", "\x1bP+q70776e"},
	{"apc", "\x1b_Gf=100;pwn\x1b\\", "\x1b_Gf=100;pwn"},
	{"pm", "\x1b^pmsecret\x1b\\", "\x1b^pmsecret"},
	{"sos", "\x1bXsoshidden\x1b\\", "\x1bXsoshidden"},
	{"c1 csi utf8", "\u009b2Jc1a", "\u009b2Jc1a"},
	{"c1 osc utf8", "\u009d52;c;eA==\u009c", "\u009d52;c;eA=="},
	{"c1 raw", "\x9b2Jc1r\x9d0;t\x9c", "\x9b2Jc1r"},
	{"bidi override", "access\u202e\u2066txt.exe\u2069", "access\u202e"},
	{"bidi isolate", "\u2067admin\u2069", "\u2067admin"},
	{"lone cr", "safe command\rrm -rf ~    ", "safe command\rrm -rf"},
	{"bell", "bel1\a\a", "bel1\a"},
	{"backspace", "rm1\b\b\bls", "rm1\b"},
	{"nul", "nul1\x00b", "nul1\x00"},
	{"del", "del1\x7fb", "del1\x7f"},
	// Invisible characters: what a model reads and the user does not
	// see. Kept to a few short lines: the full-screen test shows the
	// whole corpus as one command's output on a 34-row screen.
	{"tag chars", "Run make test." + tags("rm -rf ~"), "test." + tags("rm")},
	{"zero width", "zw1\u200b\u2060\ufeff\u00ad", "zw1\u200b"},
	{"invisible", "inv1\u2061\u2064\u2028\u2029\u3164\u115f", "inv1\u2061"},
	{"vs smuggling", "vs1😀" + smuggled("rm -rf"), "vs1😀" + smuggled("rm")},
}

// tags is s spelled in Unicode tag characters (U+E0000 + each ASCII
// byte), which no terminal draws.
func tags(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		b.WriteRune(0xe0000 + rune(c))
	}
	return b.String()
}

// smuggled is s hidden in variation selectors after an emoji, a byte a
// selector ("emoji smuggling"): bytes below 16 as U+FE00–U+FE0F, the
// rest as U+E0100–U+E01EF.
func smuggled(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c < 16 {
			b.WriteRune(0xfe00 + rune(c))
		} else {
			b.WriteRune(0xe0100 + rune(c) - 16)
		}
	}
	return b.String()
}

// HostileText is every sample of Hostile on a line of its own, for a
// surface fed one text.
func HostileText() string {
	var b strings.Builder
	for _, h := range Hostile {
		b.WriteString(h.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// Leaks returns the names of the samples whose Raw part appears in out:
// empty when every sample that went through was made safe.
func Leaks(out []byte) []string {
	var names []string
	for _, h := range Hostile {
		if strings.Contains(string(out), h.Raw) {
			names = append(names, h.Name)
		}
	}
	return names
}

// Check reports the first byte of out that a terminal would obey or not
// show: any C0 control but \n, \t and a CR before a LF, DEL, a C1 control
// (raw or as UTF-8), a bidi control, an invisible character (see the
// package comment). For output that carries no styling of panto's own.
func Check(out []byte) error {
	for i := 0; i < len(out); {
		c := out[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\t':
			case c == '\r' && i+1 < len(out) && out[i+1] == '\n':
			case c < 0x20 || c == 0x7f:
				return fmt.Errorf("byte %d: control %q in %q", i, c, around(out, i))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(out[i:])
		if r == utf8.RuneError && size == 1 && c >= 0x80 && c <= 0x9f {
			return fmt.Errorf("byte %d: raw C1 control %#x in %q", i, c, around(out, i))
		}
		if unsafeRune(r) {
			return fmt.Errorf("byte %d: %U in %q", i, r, around(out, i))
		}
		i += size
	}
	return nil
}

func around(b []byte, i int) string {
	return string(b[max(0, i-20):min(len(b), i+20)])
}
