package describe

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// Block is one block of a system prompt as Diff compares them: a section
// by its key, any other block by its source (where its text came from:
// a layer's file, a flag, an extension).
type Block struct {
	Key, Source, Text string
}

// Reseed says what a re-seed changed — the configured blocks before it
// (the config window it replaced) and those it recorded — in the words of
// every view: "re-seeded: .panto/APPEND_SYSTEM.md changed". short
// shortens a source for the line (nil: as it is); the sources are
// outside text, made safe here.
func Reseed(before, after []Block, short func(string) string) string {
	what := Diff(before, after, short)
	if len(what) == 0 {
		return "re-seeded: the configured prompt changed"
	}
	return termtext.Line("re-seeded: " + strings.Join(what, ", "))
}

// Diff says how the blocks of after differ from those of before, a phrase
// per source or section that changed, came or went, in after's order
// then before's: ".panto/APPEND_SYSTEM.md changed", "tools:guidance
// added". Blocks with no recorded source are counted, not named: "3
// blocks of an unrecorded source removed". Nothing when they say the
// same. The phrases are not made safe: join them and pass them through
// termtext (Reseed does).
func Diff(before, after []Block, short func(string) string) []string {
	if short == nil {
		short = func(s string) string { return s }
	}
	name := func(b Block) string {
		if b.Key != "" {
			return "section " + b.Key
		}
		return short(b.Source)
	}
	id := func(b Block) string {
		if b.Key != "" {
			return "key " + b.Key
		}
		return "source " + b.Source
	}
	texts := func(bs []Block) (map[string][]string, []string) {
		m := map[string][]string{}
		var order []string
		for _, b := range bs {
			k := id(b)
			if _, ok := m[k]; !ok {
				order = append(order, k)
			}
			m[k] = append(m[k], b.Text)
		}
		return m, order
	}
	had, hadOrder := texts(before)
	has, hasOrder := texts(after)
	first := map[string]Block{}
	for _, b := range append(append([]Block{}, after...), before...) {
		if _, ok := first[id(b)]; !ok {
			first[id(b)] = b
		}
	}
	unrecorded := func(n int, verb string) string {
		if n == 1 {
			return "a block of an unrecorded source " + verb
		}
		return fmt.Sprintf("%d blocks of an unrecorded source %s", n, verb)
	}
	var out []string
	for _, k := range hasOrder {
		old, ok := had[k]
		b := first[k]
		switch {
		case b.Key == "" && b.Source == "":
			// No source to name them by: how many came, went or
			// changed.
			switch n, o := len(has[k]), len(old); {
			case n > o:
				out = append(out, unrecorded(n-o, "added"))
			case n < o:
				out = append(out, unrecorded(o-n, "removed"))
			case !slices.Equal(old, has[k]):
				out = append(out, unrecorded(changed(old, has[k]), "changed"))
			}
		case !ok:
			out = append(out, name(b)+" added")
		case !slices.Equal(old, has[k]):
			out = append(out, name(b)+" changed")
		}
	}
	for _, k := range hadOrder {
		if _, ok := has[k]; ok {
			continue
		}
		b := first[k]
		if b.Key == "" && b.Source == "" {
			out = append(out, unrecorded(len(had[k]), "removed"))
			continue
		}
		out = append(out, name(b)+" removed")
	}
	return out
}

// changed counts the places where a and b (of one length) differ.
func changed(a, b []string) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// ShortSource shortens a prompt block's source for a line, as the
// transcript and the tree views show it: a layer's file relative to the
// project (".panto/APPEND_SYSTEM.md"), or under home with "~"; any other
// source (a flag, an extension, the built-in default) as it is.
func ShortSource(source, cwd, home string) string {
	if source == "" {
		return "an unrecorded source" // Diff counts these itself
	}
	layer, path, ok := strings.Cut(source, " ")
	if !ok || strings.HasPrefix(source, "--") || !filepath.IsAbs(path) {
		return source
	}
	switch layer {
	case "project", "user", "base":
	default:
		return source
	}
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	if home != "" && (path == home || strings.HasPrefix(path, home+string(filepath.Separator))) {
		return "~" + path[len(home):]
	}
	return path
}
