package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// The output limits every tool shares: a result longer than this is cut,
// with a note saying so and how to see the rest.
const (
	maxLines    = 2000
	maxBytes    = 50 * 1024
	maxLineLen  = 2000 // read: longer lines are cut
	grepLineLen = 500  // grep: a matching line is shown up to this
	binarySniff = 8000 // bytes inspected for a NUL, as git does
)

// schema is a tool's JSON schema, with the parts decodeInput needs.
type schema struct {
	Type       string                     `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

func parseSchema(raw json.RawMessage) schema {
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		panic("tools: invalid built-in schema: " + err.Error())
	}
	return s
}

// decodeInput decodes the model's input into v (a pointer to a struct with
// json tags), naming the field at fault: input that is not a JSON object,
// a required field missing or null, an unknown field, a wrong type.
func decodeInput(raw json.RawMessage, params json.RawMessage, v any) error {
	s := parseSchema(params)
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("invalid input: not valid JSON: %v", err)
		}
		return errors.New("invalid input: must be a JSON object")
	}
	for _, name := range s.Required {
		if f, ok := fields[name]; !ok || string(f) == "null" {
			return fmt.Errorf("invalid input: missing required field %q", name)
		}
	}
	for name := range fields {
		if _, ok := s.Properties[name]; !ok {
			known := make([]string, 0, len(s.Properties))
			for k := range s.Properties {
				known = append(known, k)
			}
			slices.Sort(known)
			return fmt.Errorf("invalid input: unknown field %q (the fields are: %s)", name, strings.Join(known, ", "))
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("invalid input: field %q must be %s, not %s", te.Field, kindName(te.Type), te.Value)
		}
		return fmt.Errorf("invalid input: %v", err)
	}
	return nil
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// resolvePath makes p absolute: a relative path is taken from dir, and a
// leading ~ is the user's home directory.
func resolvePath(dir, p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}

// isBinary reports whether b (the start of a file) looks binary: a NUL
// byte in its first binarySniff bytes.
func isBinary[T string | []byte](b T) bool {
	for i := range min(len(b), binarySniff) {
		if b[i] == 0 {
			return true
		}
	}
	return false
}

// validText returns s with each run of bytes that are not UTF-8 replaced
// by U+FFFD, so that it can be shown (and sent: a proto3 string must be
// valid UTF-8). Valid text is returned as it is, without a copy.
func validText(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// runeCut returns the largest i <= n at which s can be cut without
// splitting a UTF-8 character: it backs off over at most three
// continuation bytes (more cannot belong to one character).
func runeCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// cutLine shortens s to at most n bytes, on a character boundary, with a
// marker saying how long it was; the result is valid UTF-8.
func cutLine(s string, n int) string { return cutHead(s, len(s), n) }

// cutHead is cutLine for a line of which only the start, head, is held:
// total is the whole line's length.
func cutHead(head string, total, n int) string {
	if total <= n && len(head) == total {
		return validText(head)
	}
	return fmt.Sprintf("%s… [line cut: %d bytes]", validText(head[:runeCut(head, min(n, len(head)))]), total)
}

// checkLimit validates an optional limit field: absent (0) is def, and
// it may be neither negative nor above max.
func checkLimit(field string, v, def, maxV int) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > maxV:
		return 0, fmt.Errorf("invalid input: field %q must be between 1 and %d, not %d", field, maxV, v)
	}
	return v, nil
}

// plural returns "1 line" or "2 lines".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// cause is err without the operation and path of an *fs.PathError (the
// tools say the path themselves), or err itself.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
