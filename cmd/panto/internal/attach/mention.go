package attach

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mention is one @path word of a message.
type Mention struct {
	// Path is the path as written, without the @ and any quotes.
	Path string
}

// ScanMentions returns the @path words of text: an @ at the start of the
// text or after a space, then the path up to the next space, or in
// double quotes (@"my shot.png"). Punctuation that ends a sentence
// after the path (@a.png, @b.png.) is not part of it.
func ScanMentions(text string) []Mention {
	var out []Mention
	prev := ' '
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r != '@' || !unicode.IsSpace(prev) {
			prev = r
			i += n
			continue
		}
		rest := text[i+1:]
		var path string
		if q, ok := strings.CutPrefix(rest, `"`); ok {
			end := strings.IndexByte(q, '"')
			if end < 0 {
				prev, i = r, i+n
				continue
			}
			path = q[:end]
			i += 1 + 1 + end + 1
		} else {
			end := strings.IndexFunc(rest, unicode.IsSpace)
			if end < 0 {
				end = len(rest)
			}
			path = strings.TrimRight(rest[:end], ".,;:!?)]}'\"")
			i += 1 + end
		}
		prev = 'x'
		if path != "" && !strings.ContainsRune(path, '\n') {
			out = append(out, Mention{Path: path})
		}
	}
	return out
}

// Mentions returns the images text names with @path (relative to dir,
// absolute, or under ~/), in order, each once. A mention of a file that
// is not an image (a source file, which the model reads with its tools)
// or of no file at all (@someone) is left to the text. The error, when
// one is, refuses the message: a mention of a file named as an image
// (.png, .jpg, .jpeg, .gif, .webp) whose content is not one (ErrNotImage),
// an image over the limit (*TooBigError), an image file that cannot be
// read.
func Mentions(text, dir string) ([]Image, error) {
	var out []Image
	var errs []error
	seen := map[string]bool{}
	for _, m := range ScanMentions(text) {
		full := resolve(dir, m.Path)
		if seen[full] {
			continue
		}
		seen[full] = true
		st, err := os.Stat(full)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if !imageExt(full) && !looksLikeImage(full) {
			continue
		}
		im, err := File(dir, full, m.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, im)
	}
	return out, errors.Join(errs...)
}

// resolve is path made absolute: under dir, or under the home folder for
// ~/.
func resolve(dir, path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// looksLikeImage reports whether a file's first bytes are an image's
// signature, for an image whose name does not say so (a screenshot
// saved without an extension).
func looksLikeImage(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [16]byte
	n, _ := f.Read(head[:])
	return Sniff(head[:n]) != ""
}
