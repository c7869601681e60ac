package config

import (
	"strings"
	"unicode/utf8"
)

// NormalizeKey writes a key as the full-screen UI names a key press
// (bubbletea's KeyPressMsg.String): lowercase, "+" between the
// modifiers and the key, the modifiers in bubbletea's order — "Ctrl-G"
// is "ctrl+g", "Shift+Ctrl+O" is "ctrl+shift+o".
func NormalizeKey(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	if k == "" {
		return ""
	}
	parts := strings.FieldsFunc(k, func(r rune) bool { return r == '+' || r == '-' })
	if strings.HasSuffix(k, "++") || strings.HasSuffix(k, "-+") || k == "+" {
		parts = append(parts, "+")
	}
	if strings.HasSuffix(k, "--") || strings.HasSuffix(k, "+-") || k == "-" {
		parts = append(parts, "-")
	}
	if len(parts) == 0 {
		return k
	}
	key := parts[len(parts)-1]
	mods := map[string]bool{}
	for _, m := range parts[:len(parts)-1] {
		if m == "control" {
			m = "ctrl"
		}
		if m == "meta" || m == "option" {
			m = "alt"
		}
		mods[m] = true
	}
	var out []string
	for _, m := range []string{"ctrl", "alt", "shift"} {
		if mods[m] {
			out = append(out, m)
			delete(mods, m)
		}
	}
	for m := range mods {
		out = append(out, m) // not a modifier: ValidKey refuses it
	}
	return strings.Join(append(out, key), "+")
}

// namedKeys are the keys with names a binding may use.
var namedKeys = map[string]bool{
	"enter": true, "tab": true, "esc": true, "space": true, "backspace": true, "delete": true,
	"insert": true, "up": true, "down": true, "left": true, "right": true, "home": true, "end": true,
	"pgup": true, "pgdown": true,
	"f1": true, "f2": true, "f3": true, "f4": true, "f5": true, "f6": true, "f7": true, "f8": true,
	"f9": true, "f10": true, "f11": true, "f12": true,
}

// ValidKey reports whether k (NormalizeKey's form) names a key press:
// modifiers among ctrl, alt and shift, then one character or a named key.
func ValidKey(k string) bool {
	parts := strings.Split(k, "+")
	if strings.HasSuffix(k, "++") || k == "+" {
		parts = append(parts[:len(parts)-2], "+")
	}
	key := parts[len(parts)-1]
	for _, m := range parts[:len(parts)-1] {
		if m != "ctrl" && m != "alt" && m != "shift" {
			return false
		}
	}
	return namedKeys[key] || utf8.RuneCountInString(key) == 1 && key != " "
}
