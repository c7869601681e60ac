package rules

import (
	"errors"
	"fmt"
	"strings"
)

// Variables: Render expands {{name}} in prompt text, strictly: an unknown
// name, a variable with no value, or a malformed {{…}} group is an error
// naming the source (a file or an extension), the line and the name, so
// panto never sends a malformed prompt. Text is rendered once, when it is
// recorded: the session log holds what the model saw, so reconstructing a
// past prompt needs no variables.

// Vars looks variables up.
type Vars interface {
	// Lookup returns the value of name; ok is false for an unknown name.
	Lookup(name string) (value string, ok bool)
}

// Map is Vars from a map; names starting with "env." are looked up in
// Env when set.
type Map struct {
	Values map[string]string
	// Env looks up environment variables for env.NAME; nil means none.
	Env func(string) (string, bool)
}

// Lookup implements Vars.
func (m Map) Lookup(name string) (string, bool) {
	if env, ok := strings.CutPrefix(name, "env."); ok && m.Env != nil {
		return m.Env(env)
	}
	v, ok := m.Values[name]
	return v, ok
}

// Error is a rendering failure.
type Error struct {
	// Source names where the text came from: a file path or "extension X".
	Source string
	// Line is 1-based.
	Line int
	// Name is the variable, or the malformed group's text.
	Name string
	// Problem says what is wrong.
	Problem string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s line %d: %s %s", e.Source, e.Line, e.Problem, e.Name)
}

// ErrRender is wrapped by every *Error, for errors.Is.
var ErrRender = errors.New("prompt variable")

// Unwrap makes errors.Is(err, ErrRender) hold.
func (e *Error) Unwrap() error { return ErrRender }

// Render expands every {{name}} (spaces inside the braces allowed) of
// text. A name is letters, digits, '_' and '.', starting with a letter or
// '_'. "\{{" writes a literal "{{". A "{{" with no "}}" after it on the
// same line passes through verbatim.
func Render(text, source string, vars Vars) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	var b strings.Builder
	b.Grow(len(text))
	line := 1
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			line++
		case c == '\\' && strings.HasPrefix(text[i+1:], "{{"):
			b.WriteString("{{")
			i += 3
			continue
		case c == '{' && strings.HasPrefix(text[i:], "{{"):
			end := strings.Index(text[i+2:], "}}")
			nl := strings.IndexByte(text[i+2:], '\n')
			if end < 0 || (nl >= 0 && nl < end) {
				break // a lone "{{": verbatim
			}
			group := text[i+2 : i+2+end]
			name := strings.TrimSpace(group)
			if !validName(name) {
				return "", &Error{Source: source, Line: line, Name: "{{" + group + "}}", Problem: "malformed variable"}
			}
			v, ok := vars.Lookup(name)
			switch {
			case !ok:
				return "", &Error{Source: source, Line: line, Name: name, Problem: "unknown variable"}
			case v == "":
				return "", &Error{Source: source, Line: line, Name: name, Problem: "no value for variable"}
			}
			b.WriteString(v)
			i += 2 + end + 2
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !letter {
			return false
		}
		if !letter && !(c >= '0' && c <= '9') && c != '.' {
			return false
		}
	}
	return !strings.HasSuffix(s, ".") && !strings.Contains(s, "..")
}
