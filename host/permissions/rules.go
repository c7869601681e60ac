// Package permissions is panto's permission rules: which tool calls run,
// which ask the user first, and which never run, from the rules a user
// writes in the form they know from Claude Code —
//
//	[permissions]
//	mode  = "default"   # default | accept-edits | plan | bypass
//	allow = ["read", "bash(git status)", "bash(go test *)"]
//	ask   = ["bash(git push *)"]
//	deny  = ["bash(rm *)", "edit(.env)", "read(~/.ssh/**)"]
//
// A rule is TOOL or TOOL(specifier). For bash the specifier is a command
// pattern matched against every simple command of the parsed command
// line (commands.go); for the file tools a gitignore-style path pattern
// (paths.go); for fetch the URL's host (hosts.go). Policy.Decide evaluates deny, then ask, then allow, the
// first match winning; a call no rule matches gets its mode's default.
//
// Rules are a convenience, not a boundary: what the command line does
// once it runs is the sandbox's to hold. So the matching errs towards
// asking: a line that does not parse, or that runs a command it computes
// (bash -c "$x", eval, a command name from a variable), is at least
// asked about.
package permissions

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/panto-dev/panto/rules"
)

// Rule is one parsed rule.
type Rule struct {
	// Tool is the tool it is about: a tool's name, or a name ending in
	// "*" for a family (mcp__server__*). The file rules' "read" and
	// "edit" cover tool families of their own (see Covers).
	Tool string
	// Spec is the specifier, "" for a rule about every call of the tool.
	Spec string
	// Source says where the rule was written, for people ("config
	// /home/u/.config/panto/config.toml", "--allow"); ParseRule leaves
	// it to the caller.
	Source string
	// raw is the rule as written.
	raw string
	// command matches a bash command; path a file tool's path; host
	// the host of a fetch's URL.
	command *regexp.Regexp
	path    *pathPattern
	host    *hostPattern
}

// String is the rule as written.
func (r Rule) String() string { return r.raw }

// The tool families of the file rules: a read rule is about every tool
// that reads files, an edit rule about every tool that changes them.
var (
	readTools = []string{"read", "grep", "find", "ls"}
	editTools = []string{"edit", "write"}
)

// Covers reports whether the rule is about calls of tool.
func (r Rule) Covers(tool string) bool {
	switch {
	case strings.HasSuffix(r.Tool, "*"):
		return strings.HasPrefix(tool, strings.TrimSuffix(r.Tool, "*"))
	case r.Tool == "read":
		return contains(readTools, tool)
	case r.Tool == "edit":
		return contains(editTools, tool)
	}
	return r.Tool == tool
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ParseRule parses one rule: TOOL or TOOL(specifier). Tool names are
// lowercased (Bash(...) is bash(...), as Claude Code writes them).
func ParseRule(s string) (Rule, error) {
	raw := s
	s = strings.TrimSpace(s)
	tool, spec, hasSpec := strings.Cut(s, "(")
	tool = strings.TrimSpace(tool)
	if hasSpec {
		if !strings.HasSuffix(spec, ")") {
			return Rule{}, fmt.Errorf("rule %q: the specifier has no closing parenthesis: write TOOL(specifier)", raw)
		}
		spec = strings.TrimSuffix(spec, ")")
		if strings.TrimSpace(spec) == "" {
			return Rule{}, fmt.Errorf("rule %q: the specifier is empty: write TOOL for every call of the tool", raw)
		}
	}
	if name := strings.TrimSuffix(tool, "*"); !rules.ValidToolName(name, rules.MaxToolName) || strings.Count(tool, "*") > 1 {
		return Rule{}, fmt.Errorf("rule %q: %q is not a tool name (letters, digits, _ and -, up to 64; a final * for a family such as mcp__server__*)", raw, tool)
	}
	r := Rule{Tool: lowerFirst(tool), Spec: spec, raw: raw}
	if !hasSpec {
		return r, nil
	}
	switch {
	case r.Tool == "bash":
		re, err := commandPattern(spec)
		if err != nil {
			return Rule{}, fmt.Errorf("rule %q: %w", raw, err)
		}
		r.command = re
	case r.Tool == "read" || r.Tool == "edit" || contains(readTools, r.Tool) || contains(editTools, r.Tool):
		p, err := parsePath(spec)
		if err != nil {
			return Rule{}, fmt.Errorf("rule %q: %w", raw, err)
		}
		r.path = p
	case r.Tool == "fetch":
		h, err := parseHost(spec)
		if err != nil {
			return Rule{}, fmt.Errorf("rule %q: %w", raw, err)
		}
		r.host = h
	default:
		return Rule{}, fmt.Errorf("rule %q: only bash and the file tools (read, edit, write, grep, find, ls) and fetch (a host) take a specifier; write %s for every call of it", raw, r.Tool)
	}
	return r, nil
}

// lowerFirst lowercases a tool name's first letter, as Claude Code's
// rules capitalise them (Bash, Read, Edit); the rest is kept (an MCP
// tool's name is its own).
func lowerFirst(s string) string {
	switch s {
	case "Bash", "Read", "Edit", "Write", "Grep", "Find", "Ls", "LS", "Glob":
		if s == "Glob" {
			return "find"
		}
		return strings.ToLower(s)
	case "WebFetch":
		return "fetch"
	case "WebSearch":
		return "search"
	}
	return s
}

// commandPattern compiles a bash specifier: * matches any text; a space
// before a final * is a word boundary ("git push *" matches "git push"
// and "git push origin main", not "git pushx"). Words are compared as
// the parsed command's words joined by single spaces.
func commandPattern(spec string) (*regexp.Regexp, error) {
	spec = strings.Join(strings.Fields(spec), " ")
	if spec == "" {
		return nil, fmt.Errorf("the command pattern is empty")
	}
	var b strings.Builder
	b.WriteString("^")
	rest := spec
	trailing := strings.HasSuffix(rest, " *")
	if trailing {
		rest = strings.TrimSuffix(rest, " *")
	}
	for i, part := range strings.Split(rest, "*") {
		if i > 0 {
			b.WriteString(".*")
		}
		b.WriteString(regexp.QuoteMeta(part))
	}
	if trailing {
		b.WriteString("(?: .*)?")
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
