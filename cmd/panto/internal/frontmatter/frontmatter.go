// Package frontmatter reads the front matter of a Markdown file: a block
// between two "---" lines at the very top, of "key: value" lines, as the
// Agent Skills format (SKILL.md) and prompt templates use it.
//
// It is a small, strict reader of the subset those files need, not a YAML
// parser: plain, single- and double-quoted scalars, folded (">") and
// literal ("|") blocks, and an indented block under a key with no value
// (a nested map or a list, kept as its raw text). A line it cannot read is
// an error naming the line, never guessed at. What the values mean is the
// caller's business.
package frontmatter

import (
	"fmt"
	"strings"
)

// Field is one key of the front matter and its value.
type Field struct {
	Key   string
	Value string
	// Line is where the key is, counting from 1 (the opening "---" is
	// line 1).
	Line int
}

// Doc is a file split into its front matter and its body.
type Doc struct {
	// Fields are the keys in the order written; none when the file has no
	// front matter.
	Fields []Field
	// Body is what follows the closing "---" line (the whole file when
	// there is no front matter).
	Body string
	// BodyLine is the line the body starts at.
	BodyLine int
}

// Get returns key's value and whether it is there.
func (d Doc) Get(key string) (string, bool) {
	for _, f := range d.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Line returns the line key is on, 0 when it is not there.
func (d Doc) Line(key string) int {
	for _, f := range d.Fields {
		if f.Key == key {
			return f.Line
		}
	}
	return 0
}

// Error is a line of the front matter that cannot be read.
type Error struct {
	Line    int
	Problem string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Problem) }

// Parse splits text into its front matter and body. A file that does not
// start with a "---" line has no front matter: its whole text is the body.
func Parse(text string) (Doc, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	lines := strings.SplitAfter(text, "\n")
	if len(lines) == 0 || trimEOL(lines[0]) != "---" {
		return Doc{Body: text, BodyLine: 1}, nil
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := trimEOL(lines[i]); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return Doc{}, &Error{Line: 1, Problem: `the front matter opened here is never closed: end it with a line "---"`}
	}
	fields, err := parseFields(lines[1:end], 2)
	if err != nil {
		return Doc{}, err
	}
	return Doc{Fields: fields, Body: strings.Join(lines[end+1:], ""), BodyLine: end + 2}, nil
}

func trimEOL(l string) string { return strings.TrimRight(l, "\r\n") }

// parseFields reads the lines between the two "---", the first of which
// is line first.
func parseFields(lines []string, first int) ([]Field, error) {
	var out []Field
	seen := map[string]int{}
	for i := 0; i < len(lines); i++ {
		n := first + i
		l := trimEOL(lines[i])
		if blank(l) {
			continue
		}
		if strings.ContainsRune(l, '\t') && strings.TrimLeft(l, " \t") != strings.TrimLeft(l, " ") {
			return nil, &Error{Line: n, Problem: "a tab indents this line: indent with spaces"}
		}
		if l[0] == ' ' {
			return nil, &Error{Line: n, Problem: "an indented line with no key above it to belong to"}
		}
		key, rest, ok := strings.Cut(l, ":")
		if !ok || !validKey(key) {
			return nil, &Error{Line: n, Problem: fmt.Sprintf("want key: value, not %q", clip(l))}
		}
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			return nil, &Error{Line: n, Problem: fmt.Sprintf("want a space after %q", key+":")}
		}
		if at, dup := seen[key]; dup {
			return nil, &Error{Line: n, Problem: fmt.Sprintf("%s is given twice (first on line %d)", key, at)}
		}
		seen[key] = n
		rest = strings.TrimSpace(rest)
		// The indented lines that follow belong to this key.
		j := i + 1
		for j < len(lines) && (blank(trimEOL(lines[j])) || lines[j][0] == ' ') {
			j++
		}
		for j > i+1 && blank(trimEOL(lines[j-1])) { // trailing blank lines are the next key's
			j--
		}
		block := lines[i+1 : j]
		var v string
		var err error
		switch {
		case rest == "":
			v = raw(block)
		case isBlockIndicator(rest):
			v = blockScalar(rest, block)
		default:
			if len(block) > 0 {
				return nil, &Error{Line: n + 1, Problem: fmt.Sprintf("an indented line under %s, which has a value on its own line already", key)}
			}
			v, err = scalar(rest, n)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Field{Key: key, Value: v, Line: n})
		i = j - 1
	}
	return out, nil
}

func blank(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || t[0] == '#'
}

func validKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func isBlockIndicator(s string) bool {
	switch s {
	case "|", "|-", "|+", ">", ">-", ">+":
		return true
	}
	return false
}

// raw is an indented block under a key with no value (a nested map, a
// list), its common indent removed, kept as text.
func raw(block []string) string {
	lines := dedent(block)
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// dedent removes the block's common indentation and the line ends.
func dedent(block []string) []string {
	indent := -1
	for _, l := range block {
		l = trimEOL(l)
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	out := make([]string, len(block))
	for i, l := range block {
		l = trimEOL(l)
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		} else {
			l = strings.TrimLeft(l, " ")
		}
		out[i] = l
	}
	return out
}

// blockScalar is a literal ("|") or folded (">") block, with YAML's
// chomping: "-" drops the last line break, "+" keeps every trailing one,
// none keeps one.
func blockScalar(ind string, block []string) string {
	if len(block) == 0 {
		return ""
	}
	lines := dedent(block)
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var text string
	if ind[0] == '|' {
		text = strings.Join(lines, "\n")
	} else {
		var b strings.Builder
		for i, l := range lines {
			switch {
			case i == 0, l != "" && lines[i-1] == "":
			case l == "":
				b.WriteByte('\n')
			default:
				b.WriteByte(' ')
			}
			b.WriteString(l)
		}
		text = b.String()
	}
	switch {
	case strings.HasSuffix(ind, "-"):
	case strings.HasSuffix(ind, "+"):
		text += "\n" + strings.Repeat("\n", len(block)-len(lines))
	default:
		text += "\n"
	}
	return text
}

// scalar reads a value on its key's line: quoted or plain.
func scalar(s string, n int) (string, error) {
	switch s[0] {
	case '"':
		return doubleQuoted(s, n)
	case '\'':
		end := -1
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				end = i
				break
			}
			b.WriteByte(s[i])
		}
		if end < 0 {
			return "", &Error{Line: n, Problem: "a single-quoted value with no closing quote"}
		}
		if err := trailing(s[end+1:], n); err != nil {
			return "", err
		}
		return b.String(), nil
	case '|', '>':
		return "", &Error{Line: n, Problem: fmt.Sprintf("want %s, %s- or %s+ alone after the key, then the text indented on the lines below", s[:1], s[:1], s[:1])}
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s, nil
}

func doubleQuoted(s string, n int) (string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			if err := trailing(s[i+1:], n); err != nil {
				return "", err
			}
			return b.String(), nil
		case '\\':
			if i+1 >= len(s) {
				return "", &Error{Line: n, Problem: "a double-quoted value with no closing quote"}
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '"', '\\', '/':
				b.WriteByte(s[i])
			default:
				return "", &Error{Line: n, Problem: fmt.Sprintf(`unknown escape \%c in a double-quoted value (want \n, \t, \" or \\)`, s[i])}
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", &Error{Line: n, Problem: "a double-quoted value with no closing quote"}
}

// trailing refuses text after a closing quote, but a comment.
func trailing(rest string, n int) error {
	rest = strings.TrimSpace(rest)
	if rest != "" && rest[0] != '#' {
		return &Error{Line: n, Problem: fmt.Sprintf("text after the closing quote: %q", clip(rest))}
	}
	return nil
}
