package main

import (
	"errors"
	"path"
	"strings"
)

// maxGlobAlternatives bounds the patterns a glob's {a,b} groups expand to.
const maxGlobAlternatives = 256

// glob matches slash-separated relative paths: * ? [..] within one name
// (path.Match), ** for any number of directories, {a,b} alternatives. A
// pattern without a / matches the last element (the file name) at any
// depth, as in .gitignore.
type glob struct {
	alts [][]string // each alternative, split at /
	base bool       // match the file name only
}

func compileGlob(pattern string) (*glob, error) {
	pattern = strings.TrimPrefix(pattern, "./")
	if pattern == "" {
		return nil, errors.New("empty pattern")
	}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	g := &glob{base: !strings.Contains(pattern, "/")}
	for _, a := range alts {
		segs := strings.Split(strings.Trim(a, "/"), "/")
		for _, s := range segs {
			if _, err := path.Match(s, s); err != nil {
				return nil, errors.New("malformed glob (an unclosed [ or a trailing \\?)")
			}
		}
		g.alts = append(g.alts, segs)
	}
	return g, nil
}

// match reports whether rel, a slash path, matches.
func (g *glob) match(rel string) bool {
	if g.base {
		rel = path.Base(rel)
	}
	name := strings.Split(rel, "/")
	for _, a := range g.alts {
		if matchSegs(a, name) {
			return true
		}
	}
	return false
}

func matchSegs(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if matchSegs(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], name[0])
	return ok && matchSegs(pat[1:], name[1:])
}

// expandBraces expands {a,b} groups (nested ones too) into the plain
// patterns they stand for.
func expandBraces(p string) ([]string, error) {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		if strings.IndexByte(p, '}') >= 0 {
			return nil, errors.New("unmatched } in glob")
		}
		return []string{p}, nil
	}
	depth, closing := 0, -1
	var parts []string
	start := open + 1
	for i := open; i < len(p) && closing < 0; i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				parts = append(parts, p[start:i])
				closing = i
			}
		case ',':
			if depth == 1 {
				parts = append(parts, p[start:i])
				start = i + 1
			}
		}
	}
	if closing < 0 {
		return nil, errors.New("unmatched { in glob")
	}
	var out []string
	for _, part := range parts {
		rest, err := expandBraces(p[:open] + part + p[closing+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxGlobAlternatives {
			return nil, errors.New("glob has too many {a,b} alternatives")
		}
	}
	return out, nil
}
