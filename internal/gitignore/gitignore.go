// Package gitignore decides which paths of a git work tree git would
// ignore, for the walks that should leave them out as git does: the
// tools' find and grep, the UI's @ completion.
//
// It reads what a repository says: every .gitignore from the work tree's
// root down to the path (a deeper one wins over a shallower one; in a
// file, a later line over an earlier one) and .git/info/exclude (below
// them all). A pattern follows gitignore(5): blank lines and "#"
// comments are skipped, "!" re-includes, a trailing "/" matches
// directories only, a "/" at the start or in the middle anchors the
// pattern to its file's directory (otherwise it matches a name at any
// depth below it), "*", "?" and "[a-z]" ("[!a-z]") stay within a name,
// and "**" spans directories ("**/x", "x/**", "a/**/b"); "\" quotes the
// next character, and trailing spaces are dropped unless quoted.
//
// What it does not read: the user's core.excludesFile and git's config
// (a matcher is the repository's, the same for every user), and the index
// (a tracked file that a pattern matches counts as ignored, as
// git check-ignore --no-index says). A directory outside any work tree
// has no matcher: nothing there is ignored.
//
// What does not belong here: the walks themselves, and skipping .git
// (the callers skip it, a work tree or not).
package gitignore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Pattern is one line of an ignore file.
type Pattern struct {
	// segs is the pattern split at "/", "**" standing for any number of
	// directories.
	segs []string
	// negate re-includes what an earlier pattern excluded ("!").
	negate bool
	// dirOnly matches directories only (a trailing "/").
	dirOnly bool
	// anchored matches the whole path from the file's directory; an
	// unanchored pattern matches the last names at any depth.
	anchored bool
}

// ParseLine parses one line of an ignore file; ok is false for a line
// that holds no pattern (blank, a comment, "!" or "/" alone).
func ParseLine(line string) (p Pattern, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return Pattern{}, false
	}
	switch {
	case line[0] == '!':
		p.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !escaped(line, len(line)-1) {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if i := strings.Index(line, "/"); i >= 0 {
		p.anchored = true
	}
	line = strings.TrimLeft(line, "/")
	if line == "" {
		return Pattern{}, false
	}
	for _, s := range strings.Split(line, "/") {
		if s == "" {
			continue // "a//b" is "a/b"
		}
		if s == "**" && len(p.segs) > 0 && p.segs[len(p.segs)-1] == "**" {
			continue // "**/**" is "**"
		}
		p.segs = append(p.segs, s)
	}
	if len(p.segs) == 0 {
		return Pattern{}, false
	}
	if !p.anchored {
		// A name at any depth: "**/name".
		p.segs = append([]string{"**"}, p.segs...)
	}
	return p, true
}

// trimTrailingSpaces drops the spaces at the end of line that no "\"
// quotes; a quoted one is kept, without its "\".
func trimTrailingSpaces(line string) string {
	end := len(line)
	for end > 0 && line[end-1] == ' ' {
		if escaped(line, end-1) {
			return line[:end-2] + line[end-1:]
		}
		end--
	}
	return line[:end]
}

// escaped reports whether the byte at i is quoted by an odd run of "\"
// before it.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// Parse parses an ignore file's content.
func Parse(data []byte) []Pattern {
	var out []Pattern
	for _, line := range bytes.Split(data, []byte("\n")) {
		if p, ok := ParseLine(string(line)); ok {
			out = append(out, p)
		}
	}
	return out
}

// Match reports whether p matches rel, a slash path relative to the
// directory of p's file, that names a directory or not.
func (p Pattern) Match(rel string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	names := strings.Split(rel, "/")
	return matchSegs(p.segs, names)
}

// Negate reports whether p re-includes ("!").
func (p Pattern) Negate() bool { return p.negate }

// matchSegs matches pattern segments against path names: "**" matches
// any number of names (at least one when it ends the pattern, so "x/**"
// matches what is inside x, not x). It runs in time proportional to the
// product of their lengths.
func matchSegs(segs, names []string) bool {
	// ok[j] says whether segs[i:] matches names[j:], for i going down.
	ok := make([]bool, len(names)+1)
	ok[len(names)] = true // no segments left, no names left
	next := make([]bool, len(names)+1)
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		last := i == len(segs)-1
		for j := len(names); j >= 0; j-- {
			switch {
			case s == "**" && last:
				next[j] = j < len(names)
			case s == "**":
				// Zero names, or one and "**" again.
				next[j] = ok[j] || (j < len(names) && next[j+1])
			default:
				next[j] = j < len(names) && ok[j+1] && Wild(s, names[j])
			}
		}
		ok, next = next, ok
	}
	return ok[0]
}

// Wild matches one name against one segment of a pattern: "*" any run
// of characters, "?" one, "[...]" one of a set ("[!...]" or "[^...]"
// not), "\" quotes the next character. A malformed set matches nothing.
// It runs in time proportional to the product of their lengths.
func Wild(pat, name string) bool {
	p, n := []rune(pat), []rune(name)
	// Backtrack to the last "*" only: "*" never crosses a name's end, so
	// one backtrack point is enough.
	pi, ni := 0, 0
	starP, starN := -1, 0
	for ni < len(n) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				for pi < len(p) && p[pi] == '*' {
					pi++
				}
				starP, starN = pi, ni
				continue
			case '?':
				pi++
				ni++
				continue
			case '[':
				if end, match, ok := class(p, pi, n[ni]); ok {
					if match {
						pi, ni = end, ni+1
						continue
					}
				} else if p[pi] == n[ni] {
					// An unclosed "[" is a plain character.
					pi++
					ni++
					continue
				}
			case '\\':
				if pi+1 < len(p) && p[pi+1] == n[ni] {
					pi += 2
					ni++
					continue
				}
			default:
				if p[pi] == n[ni] {
					pi++
					ni++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starN++
		pi, ni = starP, starN
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// class matches r against the set that starts at p[i] ("["); end is the
// index after its "]", ok false when it has none.
func class(p []rune, i int, r rune) (end int, match, ok bool) {
	j := i + 1
	neg := false
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		neg = true
		j++
	}
	first := true
	for j < len(p) && (first || p[j] != ']') {
		first = false
		lo := p[j]
		if lo == '\\' && j+1 < len(p) {
			j++
			lo = p[j]
		}
		hi := lo
		if j+2 < len(p) && p[j+1] == '-' && p[j+2] != ']' {
			hi = p[j+2]
			if hi == '\\' && j+3 < len(p) {
				j++
				hi = p[j+2]
			}
			j += 2
		}
		if lo <= r && r <= hi {
			match = true
		}
		j++
	}
	if j >= len(p) {
		return 0, false, false
	}
	return j + 1, match != neg, true
}

// Matcher answers for one work tree. It reads each directory's
// .gitignore once, when a path below it is first asked about; it is safe
// for concurrent use.
type Matcher struct {
	root    string // the work tree's root
	exclude []Pattern

	mu   sync.Mutex
	dirs map[string][]Pattern // a directory (slash path from root, "" the root) -> its .gitignore
}

// New returns the matcher of the git work tree that holds dir (the
// nearest directory at or above it with a .git), or nil when there is
// none.
func New(dir string) *Matcher {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	for d := abs; ; {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			m := &Matcher{root: d, dirs: map[string][]Pattern{}}
			if gd := gitDir(d, fi); gd != "" {
				if data, err := os.ReadFile(filepath.Join(gd, "info", "exclude")); err == nil {
					m.exclude = Parse(data)
				}
			}
			return m
		}
		up := filepath.Dir(d)
		if up == d {
			return nil
		}
		d = up
	}
}

// gitDir is the repository directory whose info/exclude applies to the
// work tree root: .git itself, or for a linked work tree (.git a file
// "gitdir: X") the common directory X names.
func gitDir(root string, fi os.FileInfo) string {
	dotgit := filepath.Join(root, ".git")
	if fi.IsDir() {
		return dotgit
	}
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(root, gd)
	}
	if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gd, common)
		}
		return common
	}
	return gd
}

// Root is the work tree's root directory.
func (m *Matcher) Root() string { return m.root }

// patterns is the .gitignore of the directory rel (slash path from the
// root).
func (m *Matcher) patterns(rel string) []Pattern {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ps, ok := m.dirs[rel]; ok {
		return ps
	}
	data, err := os.ReadFile(filepath.Join(m.root, filepath.FromSlash(rel), ".gitignore"))
	var ps []Pattern
	if err == nil {
		ps = Parse(data)
	}
	m.dirs[rel] = ps
	return ps
}

// rel is path as a slash path from the root; ok is false for a path
// outside the work tree, and for the root itself.
func (m *Matcher) rel(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	r, err := filepath.Rel(m.root, abs)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// Ignored reports whether the patterns ignore path itself, a directory
// or not; its parents are not asked about (a walk that skips an ignored
// directory never asks about what is in it). A nil Matcher ignores
// nothing.
func (m *Matcher) Ignored(path string, isDir bool) bool {
	if m == nil {
		return false
	}
	rel, ok := m.rel(path)
	if !ok {
		return false
	}
	return m.ignoredRel(rel, isDir)
}

// ignoredRel is Ignored of a slash path from the root: the last pattern
// that matches decides, the deepest .gitignore's last.
func (m *Matcher) ignoredRel(rel string, isDir bool) bool {
	ignored := false
	decide := func(ps []Pattern, sub string) {
		for _, p := range ps {
			if p.Match(sub, isDir) {
				ignored = !p.negate
			}
		}
	}
	decide(m.exclude, rel)
	dir := ""
	for {
		decide(m.patterns(dir), rel[len(dir):])
		i := strings.IndexByte(rel[len(dir):], '/')
		if i < 0 {
			break
		}
		dir = rel[:len(dir)+i+1]
	}
	return ignored
}

// Excluded reports whether git ignores path: it, or a directory above it
// in the work tree, is ignored (a file in an ignored directory cannot be
// re-included, as gitignore(5) says). isDir says whether path is a
// directory. A nil Matcher excludes nothing.
func (m *Matcher) Excluded(path string, isDir bool) bool {
	if m == nil {
		return false
	}
	rel, ok := m.rel(path)
	if !ok {
		return false
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' && m.ignoredRel(rel[:i], true) {
			return true
		}
	}
	return m.ignoredRel(rel, isDir)
}
