package tokens

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The prices of the pieces Text splits text into, in tokens. They were
// fitted to the real counts of OpenAI's o200k_base tokenizer (GPT-4o and
// later) over 1,281 chunks of about 1,500 bytes of this repository's Go
// code, Markdown and JSON: within 4% of the real count for 8 chunks in
// 10 of code and prose (median +0.6% for Go, -1.2% for Markdown); JSON
// spreads more (-16% to +5%), and text that is random, such as hashes
// and base64, is undercounted by about a fifth. cl100k_base (GPT-4,
// GPT-3.5) splits the same way but for case changes, and counts within
// the same figures.
const (
	// wordLetters is the letters of a word that one token holds; each
	// wordExtra letters beyond cost one token more.
	wordLetters = 4
	wordExtra   = 12
	// punctExtra is the run of punctuation beyond its first mark that
	// one token more holds.
	punctExtra = 9
	// wideTwelfths is the twelfths of a token a letter of a script with
	// few letters to a token takes beyond a word's first: two thirds
	// (o200k_base counts Japanese at about that; cl100k_base at about
	// one).
	wideTwelfths = 8
)

// Text estimates the tokens of s: at least one for any text.
//
// It splits s as the GPT-4o tokenizer's pre-tokenizer does (a word with
// the space or mark before it, split where lower case turns to upper;
// numbers in threes; a run of punctuation with the space before it and
// the newlines after; whitespace), then prices each piece: a word is one
// token up to wordLetters letters and more for longer ones, a number or
// whitespace piece one, a run of punctuation one and more for long runs.
// Letters outside Latin, Greek and Cyrillic (CJK, for one) take two
// thirds of a token each.
func Text(s string) int {
	if s == "" {
		return 0
	}
	// In twelfths of a token, so that sums stay exact.
	t := 0
	for i := 0; i < len(s); {
		if k, n, wide := word(s[i:]); k > 0 {
			switch {
			case wide > 0:
				t += 12 + wideTwelfths*wide
			case n > wordLetters:
				t += 12 + 12*(n-wordLetters)/wordExtra
			default:
				t += 12
			}
			i += k
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if isNumber(r) {
			for n := 0; n < 3 && i < len(s); n++ {
				r, w := utf8.DecodeRuneInString(s[i:])
				if !isNumber(r) {
					break
				}
				i += w
			}
			t += 12
			continue
		}
		j := i
		if r == ' ' {
			j++
		}
		if k, n := punct(s[j:]); k > 0 {
			t += 12 + 12*(n-1)/punctExtra
			i = j + k
			continue
		}
		// Whitespace: the newlines with the blanks before them; blanks
		// before a word or mark but the last, which goes with it.
		k, lastNL := i, -1
		for k < len(s) {
			r, w := utf8.DecodeRuneInString(s[k:])
			if !unicode.IsSpace(r) {
				break
			}
			k += w
			if r == '\n' || r == '\r' {
				lastNL = k
			}
		}
		t += 12
		switch {
		case k == i:
			// Not space either (an invalid byte): a token of its own.
			i += w
		case lastNL > 0:
			i = lastNL
		case k < len(s) && k-i > 1:
			_, w := utf8.DecodeLastRuneInString(s[i:k])
			i = k - w
		default:
			i = k
		}
	}
	return max(1, (t+6)/12)
}

// word matches a word at the start of s: one optional mark or blank
// before it (not a newline), then upper case letters and lower case
// ones, and an English contraction ('s, 't, 're, 've, 'm, 'll, 'd). It
// returns the bytes it took, the letters, and the tokens beyond the
// first that letters outside the scripts Text prices by length take.
func word(s string) (k, n, wide int) {
	if r, w := utf8.DecodeRuneInString(s); r != '\r' && r != '\n' && !isLetter(r) && !isNumber(r) {
		k = w
	}
	upper := func(r rune) bool { return unicode.IsUpper(r) || unicode.IsTitle(r) || other(r) }
	lower := func(r rune) bool { return unicode.IsLower(r) || other(r) }
	for _, class := range []func(rune) bool{upper, lower} {
		for k < len(s) {
			r, w := utf8.DecodeRuneInString(s[k:])
			if !isLetter(r) || !class(r) {
				break
			}
			if wideRune(r) {
				wide++
			}
			k += w
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	if k+1 < len(s) && s[k] == '\'' {
		rest := strings.ToLower(s[k+1 : min(len(s), k+3)])
		for _, c := range []string{"re", "ve", "ll", "s", "t", "m", "d"} {
			if strings.HasPrefix(rest, c) {
				k += 1 + len(c)
				break
			}
		}
	}
	if wide > 0 {
		wide-- // the word's own token
	}
	return k, n, wide
}

// punct matches a run of marks (neither letter, digit nor space) at the
// start of s and the newlines or slashes after it: the bytes it took and
// the marks.
func punct(s string) (k, n int) {
	for k < len(s) {
		r, w := utf8.DecodeRuneInString(s[k:])
		if unicode.IsSpace(r) || isLetter(r) || isNumber(r) {
			break
		}
		k += w
		n++
	}
	if n == 0 {
		return 0, 0
	}
	for k < len(s) && (s[k] == '\r' || s[k] == '\n' || s[k] == '/') {
		k++
	}
	return k, n
}

func isLetter(r rune) bool { return unicode.IsLetter(r) || unicode.Is(unicode.M, r) }
func isNumber(r rune) bool { return unicode.IsNumber(r) }

// other is a letter with no case that goes with either run of a word
// (modifier and other letters, marks).
func other(r rune) bool { return unicode.In(r, unicode.Lm, unicode.Lo, unicode.M) }

// wideRune is a letter that takes about a token of its own: one of a
// script with few letters per token (CJK, Thai, and the like), anything
// past Latin, Greek and Cyrillic.
func wideRune(r rune) bool { return r >= 0x0530 && !unicode.Is(unicode.M, r) }
