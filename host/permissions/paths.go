package permissions

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// A file rule's path pattern, gitignore-style:
//
//	.env          a name: that name in any directory
//	src/*.go      with a slash: relative to the workspace
//	./build/**    relative to the workspace
//	~/.ssh/**     in the home directory
//	/etc/**       absolute
//
// * matches within a path element, ** any number of elements (and a
// final /** everything below a directory), ? one character. A pattern
// matches a directory's path and, through a final /**, what is inside.

type pathPattern struct {
	// anchor is where a pattern with a slash starts: "" (anywhere: a
	// bare name), "." (the workspace), "~" (home) or "/".
	anchor string
	re     *regexp.Regexp
}

func parsePath(spec string) (*pathPattern, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("the path pattern is empty")
	}
	p := &pathPattern{}
	rest := spec
	switch {
	case strings.HasPrefix(rest, "~/"):
		p.anchor, rest = "~", rest[2:]
	case rest == "~":
		p.anchor, rest = "~", ""
	case strings.HasPrefix(rest, "/"):
		p.anchor, rest = "/", rest[1:]
	case strings.HasPrefix(rest, "./"):
		p.anchor, rest = ".", rest[2:]
	case strings.Contains(strings.TrimSuffix(rest, "/"), "/"):
		p.anchor = "."
	}
	rest = strings.TrimSuffix(rest, "/")
	re, err := regexp.Compile("^" + globRegexp(rest) + "$")
	if err != nil {
		return nil, fmt.Errorf("path pattern %q: %v", spec, err)
	}
	p.re = re
	return p, nil
}

// globRegexp is the regular expression of a glob of path elements.
func globRegexp(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case c == '/' && glob[i+1:] == "**":
			b.WriteString(`(?:/.*)?`) // a final /**: the directory and all below it
			i = len(glob)
		case c == '*' && i+1 < len(glob) && glob[i+1] == '*':
			i++
			if i+1 < len(glob) && glob[i+1] == '/' {
				i++
				b.WriteString(`(?:.*/)?`) // **/: any number of elements
			} else {
				b.WriteString(`.*`)
			}
		case c == '*':
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// match reports whether the absolute, clean path p matches, with the
// workspace and home directories given.
func (pp *pathPattern) match(p, workspace, home string) bool {
	switch pp.anchor {
	case "":
		// A bare name: any element of the path from the workspace or
		// home on (or anywhere, outside both), with what follows it.
		for _, rel := range relatives(p, workspace, home) {
			parts := strings.Split(rel, "/")
			for i := range parts {
				if pp.re.MatchString(parts[i]) || pp.re.MatchString(strings.Join(parts[i:], "/")) {
					return true
				}
			}
		}
		return false
	case ".":
		return under(pp.re, p, workspace)
	case "~":
		return under(pp.re, p, home)
	}
	return under(pp.re, p, "/")
}

// under reports whether p, relative to root, or one of its parent
// directories below root, matches re: a pattern that names a directory
// is about what it holds.
func under(re *regexp.Regexp, p, root string) bool {
	if root == "" {
		return false
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	for {
		if re.MatchString(rel) {
			return true
		}
		i := strings.LastIndexByte(rel, '/')
		if i < 0 {
			return false
		}
		rel = rel[:i]
	}
}

// relatives are p relative to the workspace and home when it is below
// them, and p itself without its leading slash.
func relatives(p, workspace, home string) []string {
	var out []string
	for _, root := range []string{workspace, home} {
		if root == "" {
			continue
		}
		if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && rel != "." {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return append(out, strings.TrimPrefix(filepath.ToSlash(p), "/"))
}
