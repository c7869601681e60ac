package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// A config file that does not decode is told by file, line, column and
// the key as written, with the type the key wants.

// describe turns a decoding error into one that names the file, the line
// and column, and the key as the user wrote it; a value of the wrong type
// says which type the key wants. data is the file's text.
func describe(name string, data []byte, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		var msgs []string
		for _, e := range strict.Errors {
			row, col := e.Position()
			msgs = append(msgs, fmt.Sprintf("config %s line %d column %d: unknown key %q (see docs/config.md)",
				name, row, col, strings.Join(e.Key(), ".")))
		}
		return errors.New(strings.Join(msgs, "\n"))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		at := fmt.Sprintf("config %s line %d column %d", name, row, col)
		key := strings.Join(de.Key(), ".")
		if key == "" {
			return fmt.Errorf("%s: %s", at, strings.TrimPrefix(de.Error(), "toml: "))
		}
		if want, got, ok := typeMismatch(data, de.Key()); ok {
			return fmt.Errorf("%s: %s wants %s, not %s (see docs/config.md)", at, key, want, got)
		}
		return fmt.Errorf("%s: %s: %s", at, key, strings.TrimPrefix(de.Error(), "toml: "))
	}
	// go-toml hands a bare number or boolean to a TextUnmarshaler (a
	// duration) and returns its error without a position: find the key.
	for _, key := range slices.Sorted(maps.Keys(keyTypes)) {
		if want, got, ok := typeMismatch(data, []string{key}); ok {
			at := "config " + name
			if row, col, ok := locate(data, key); ok {
				at += fmt.Sprintf(" line %d column %d", row, col)
			}
			return fmt.Errorf("%s: %s wants %s, not %s (see docs/config.md)", at, key, want, got)
		}
	}
	return fmt.Errorf("config %s: %w", name, err)
}

// locate finds the line and column of the value of a top-level key: the
// first "key =" line before any table header. Only for keys that decoded,
// so the file's syntax is valid.
func locate(data []byte, key string) (row, col int, ok bool) {
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(trimmed, "[") {
			break
		}
		for _, k := range []string{key, `"` + key + `"`, "'" + key + "'"} {
			rest, found := strings.CutPrefix(trimmed, k)
			if !found {
				continue
			}
			if rest, found = strings.CutPrefix(strings.TrimLeft(rest, " \t"), "="); found {
				value := strings.TrimLeft(rest, " \t")
				return i + 1, len(line) - len(value) + 1, true
			}
		}
	}
	return 0, 0, false
}

// keyTypes maps each key of a config file to its Go type.
var keyTypes = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	t := reflect.TypeFor[file]()
	for i := range t.NumField() {
		f := t.Field(i)
		m[f.Tag.Get("toml")] = f.Type
	}
	return m
}()

// typeMismatch reports, for the key of a decoding error, the type the key
// wants and the TOML type it was given, when they do not fit; ok is false
// when the types fit (the value itself is wrong) or cannot be told.
func typeMismatch(data []byte, key []string) (want, got string, ok bool) {
	t, known := keyTypes[key[0]]
	if !known || len(key) != 1 {
		return "", "", false
	}
	var doc map[string]any
	if toml.Unmarshal(data, &doc) != nil {
		return "", "", false
	}
	v, present := doc[key[0]]
	if !present {
		return "", "", false
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want = wantedType(t)
	got = tomlType(v)
	if fits(t, v) {
		return "", "", false
	}
	return want, got, true
}

func wantedType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[duration]():
		return `a duration string such as "90s" or "10m"`
	case t.Kind() == reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(wantedType(t.Elem()), "an "), "a ") + "s"
	case t == reflect.TypeFor[map[string]extensionFile]():
		return "a table of extensions, such as [extensions.guard]"
	case t.Kind() == reflect.Map:
		return "a table of models, such as [prices.\"claude-sonnet-4-5\"]"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return t.String()
}

// tomlType names the TOML type of a value decoded into an any.
func tomlType(v any) string {
	switch v := v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []any:
		for _, e := range v {
			if _, ok := e.(string); !ok {
				return "an array holding " + tomlType(e)
			}
		}
		return "an array"
	}
	return "a date or time"
}

// fits reports whether a decoded TOML value has a type that t accepts.
func fits(t reflect.Type, v any) bool {
	switch v := v.(type) {
	case string:
		return t.Kind() == reflect.String || t == reflect.TypeFor[duration]()
	case int64:
		return t.Kind() == reflect.Int || t.Kind() == reflect.Float64
	case float64:
		return t.Kind() == reflect.Float64
	case bool:
		return t.Kind() == reflect.Bool
	case []any:
		if t.Kind() != reflect.Slice {
			return false
		}
		for _, e := range v {
			if !fits(t.Elem(), e) {
				return false
			}
		}
		return true
	}
	return false
}
