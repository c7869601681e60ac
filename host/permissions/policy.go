package permissions

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mode is what a call no rule matches gets.
type Mode string

// The modes.
const (
	// ModeDefault allows the tools that only read, and asks for edits,
	// bash and every other tool.
	ModeDefault Mode = "default"
	// ModeAcceptEdits allows edits in the workspace too.
	ModeAcceptEdits Mode = "accept-edits"
	// ModePlan offers only the tools that cannot write: edits are
	// denied (bash is asked about; the sandbox holds it read-only).
	ModePlan Mode = "plan"
	// ModeBypass allows everything no rule denies or asks about.
	ModeBypass Mode = "bypass"
)

// ParseMode checks a mode's name; "" is ModeDefault.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeDefault, nil
	case ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass:
		return m, nil
	}
	return "", fmt.Errorf("permission mode %q: want default, accept-edits, plan or bypass", s)
}

// Verdict is what happens to a call.
type Verdict int

// The verdicts, from the most to the least permissive.
const (
	Allow Verdict = iota
	Ask
	Deny
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "deny"
}

// Decision is the verdict on a call and what gave it.
type Decision struct {
	Verdict Verdict
	// Rule is the rule that decided, as written; "" when the mode did.
	// Source is where a deny or ask rule was written (Rule.Source).
	Rule, Source string
	// Why says it for people ("bash(rm *) denies rm -rf build").
	Why string
}

// Policy is the rules in force and the mode.
type Policy struct {
	Mode             Mode
	Allow, Ask, Deny []Rule
}

// Env is where a call's paths are read from.
type Env struct {
	// Workspace is the project directory; Home the user's home. Both
	// absolute.
	Workspace, Home string
}

// readOnly are the tools that only read files; edits the tools that
// change them.
func readOnly(tool string) bool { return contains(readTools, tool) }
func edits(tool string) bool    { return contains(editTools, tool) }

// Edits reports whether tool is one of the file tools that change files
// (edit, write): plan mode never runs them.
func Edits(tool string) bool { return edits(tool) }

// Decide says whether the call of tool with input runs: deny rules
// first, then ask, then allow — a rule matches a bash line when it
// matches any of its simple commands (deny, ask) or all of them (allow)
// — and with no match, the mode's default.
func (p Policy) Decide(tool string, input json.RawMessage, env Env) Decision {
	var line *Line
	var path, host string
	switch {
	case tool == "bash":
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(input, &in)
		l := ParseLine(in.Command)
		line = &l
	case readOnly(tool) || edits(tool):
		var in struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(input, &in)
		path = resolve(in.Path, env)
	case tool == "fetch":
		var in struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(input, &in)
		host = URLHost(in.URL)
	}
	match := func(r Rule, all bool) (bool, string) {
		if !r.Covers(tool) {
			return false, ""
		}
		switch {
		case r.command != nil && line != nil:
			return matchLine(r, *line, all)
		case r.path != nil:
			if path == "" {
				return false, ""
			}
			return r.path.match(path, env.Workspace, env.Home), path
		case r.host != nil:
			if host == "" {
				return false, ""
			}
			return r.host.match(host), host
		case r.command != nil || r.path != nil:
			return false, ""
		}
		return true, ""
	}
	for _, r := range p.Deny {
		if ok, what := match(r, false); ok {
			return Decision{Verdict: Deny, Rule: r.raw, Source: r.Source, Why: says(r, "denies", what)}
		}
	}
	for _, r := range p.Ask {
		if ok, what := match(r, false); ok {
			return Decision{Verdict: Ask, Rule: r.raw, Source: r.Source, Why: says(r, "asks before", what)}
		}
	}
	if line != nil && p.Mode != ModeBypass {
		switch {
		case line.Err != nil:
			return Decision{Verdict: Ask, Why: line.Err.Error() + ": asked, whatever the rules"}
		case line.Opaque != "":
			return Decision{Verdict: Ask, Why: line.Opaque + ": the rules cannot see what it runs, so it is asked about"}
		}
	}
	if line != nil {
		if d, ok := allowLine(p.Allow, *line); ok {
			return d
		}
		return p.byMode(tool, path, env)
	}
	for _, r := range p.Allow {
		if ok, _ := match(r, true); ok {
			return Decision{Verdict: Allow, Rule: r.raw}
		}
	}
	return p.byMode(tool, path, env)
}

// allowLine allows a bash line when a rule allows every bash call, or
// when each of its commands is allowed by one of the rules.
func allowLine(allow []Rule, l Line) (Decision, bool) {
	var used []string
	for _, r := range allow {
		if r.Covers("bash") && r.command == nil {
			return Decision{Verdict: Allow, Rule: r.raw}, true
		}
	}
	if l.Err != nil || len(l.Commands) == 0 {
		return Decision{}, false
	}
	for _, c := range l.Commands {
		if c.Carrier {
			continue // what it runs is checked
		}
		found := ""
		for _, r := range allow {
			if r.command != nil && r.command.MatchString(c.Text) {
				found = r.raw
				break
			}
		}
		if found == "" {
			return Decision{}, false
		}
		if !contains(used, found) {
			used = append(used, found)
		}
	}
	return Decision{Verdict: Allow, Rule: strings.Join(used, ", ")}, true
}

// matchLine matches a bash rule against a line's commands: any of them
// (all false) or every one (all true).
func matchLine(r Rule, l Line, all bool) (bool, string) {
	if l.Err != nil || len(l.Commands) == 0 {
		return false, ""
	}
	for _, c := range l.Commands {
		ok := r.command.MatchString(c.Text) || !all && r.command.MatchString(c.Base)
		switch {
		case ok && !all:
			return true, c.Text
		case !ok && all:
			return false, ""
		}
	}
	return all, ""
}

func says(r Rule, verb, what string) string {
	if what == "" {
		return fmt.Sprintf("%s %s every %s call", r.raw, verb, r.Tool)
	}
	return fmt.Sprintf("%s %s %s", r.raw, verb, what)
}

// byMode is the mode's verdict on a call no rule matched.
func (p Policy) byMode(tool, path string, env Env) Decision {
	mode := p.Mode
	if mode == "" {
		mode = ModeDefault
	}
	d := func(v Verdict, why string) Decision {
		return Decision{Verdict: v, Why: why + " (permission mode " + string(mode) + ")"}
	}
	switch {
	case mode == ModeBypass:
		return d(Allow, "every call runs")
	case readOnly(tool):
		return d(Allow, "a tool that only reads")
	case edits(tool) && mode == ModePlan:
		return d(Deny, "planning: nothing is changed")
	case edits(tool) && mode == ModeAcceptEdits && inside(path, env.Workspace):
		return d(Allow, "edits in the workspace are accepted")
	case edits(tool):
		return d(Ask, "edits are asked about")
	case tool == "bash":
		return d(Ask, "bash is asked about")
	}
	return d(Ask, tool+" is asked about")
}

// resolve makes a tool's path absolute and clean, as the tool does (a
// leading ~ is home), through the symlinks that exist: a rule about
// ~/.ssh holds for a link to it.
func resolve(p string, env Env) string {
	if p == "" {
		p = "."
	}
	switch {
	case p == "~":
		p = env.Home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(env.Home, p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(env.Workspace, p)
	}
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	// A file to be made: its directory's real path.
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p))
	}
	return p
}

// inside reports whether p is the directory root or below it.
func inside(p, root string) bool {
	if p == "" || root == "" {
		return false
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(os.PathSeparator))
}
