package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/host/permissions"
)

// The [permissions] and [sandbox] tables say what the model's tools may
// do (docs/permissions.md): rules and a mode for each call, and the OS
// boundary bash runs in. Every layer's rules add up; a project's count
// only where they make things stricter (see projectPermissions).

// Permissions are the merged [permissions] tables.
type Permissions struct {
	// Mode is the mode of calls no rule matches: "default",
	// "accept-edits", "plan" or "bypass".
	Mode string
	// ModeFrom is the config file that set Mode, "" for the default.
	ModeFrom string
	// Allow, Ask and Deny are every layer's rules, lowest layer first.
	Allow, Ask, Deny []Rule
}

// Rule is a rule as written and the file it came from.
type Rule struct {
	Text string
	// Source is the config file ("" for a flag's).
	Source string
}

// Sandbox is the merged [sandbox] tables.
type Sandbox struct {
	// Mode is "workspace-write", "read-only" or "off".
	Mode string
	// Network lets bash use the network.
	Network bool
	// WritableRoots are absolute, cleaned paths bash may write besides
	// the project and the session's TMPDIR ("~/" expanded).
	WritableRoots []string
	// Required refuses bash where the kernel cannot sandbox it.
	Required bool
	// UnixSockets are unix socket paths bash may connect to with the
	// network off (an SSH agent, docker.sock), "~/" expanded.
	UnixSockets []string
}

// The sandbox modes.
const (
	SandboxOff            = "off"
	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
)

// permissionsFile is a [permissions] table.
type permissionsFile struct {
	Mode  *string  `toml:"mode"`
	Allow []string `toml:"allow"`
	Ask   []string `toml:"ask"`
	Deny  []string `toml:"deny"`
}

// sandboxFile is a [sandbox] table.
type sandboxFile struct {
	Mode          *string  `toml:"mode"`
	Network       *bool    `toml:"network"`
	WritableRoots []string `toml:"writable_roots"`
	Required      *bool    `toml:"required"`
	UnixSockets   []string `toml:"unix_sockets"`
}

// checkPermissions checks the two tables' values on their own.
func (f file) checkPermissions() *badValue {
	if p := f.Permissions; p != nil {
		if p.Mode != nil {
			if _, err := permissions.ParseMode(*p.Mode); err != nil || *p.Mode == "" {
				return &badValue{"permissions.mode", strconv.Quote(*p.Mode), `want "default", "accept-edits", "plan" or "bypass"`}
			}
		}
		for _, l := range []struct {
			key   string
			rules []string
		}{{"permissions.allow", p.Allow}, {"permissions.ask", p.Ask}, {"permissions.deny", p.Deny}} {
			for _, r := range l.rules {
				if _, err := permissions.ParseRule(r); err != nil {
					return &badValue{l.key, strconv.Quote(r), err.Error()}
				}
			}
		}
	}
	if s := f.Sandbox; s != nil {
		if s.Mode != nil && sandboxStrictness(*s.Mode) < 0 {
			return &badValue{"sandbox.mode", strconv.Quote(*s.Mode), `want "workspace-write", "read-only" or "off"`}
		}
		for _, r := range s.WritableRoots {
			if !filepath.IsAbs(r) && !strings.HasPrefix(r, "~/") {
				return &badValue{"sandbox.writable_roots", strconv.Quote(r), "want an absolute path or one in your home (~/…)"}
			}
		}
		for _, r := range s.UnixSockets {
			if !filepath.IsAbs(r) && !strings.HasPrefix(r, "~/") {
				return &badValue{"sandbox.unix_sockets", strconv.Quote(r), "want a socket's absolute path or one in your home (~/…)"}
			}
		}
	}
	return nil
}

// modeStrictness orders the permission modes from the most permissive;
// -1 for an unknown one.
func modeStrictness(m string) int {
	return slices.Index([]string{"bypass", "accept-edits", "default", "plan"}, m)
}

// sandboxStrictness orders the sandbox modes from the most permissive;
// -1 for an unknown one.
func sandboxStrictness(m string) int {
	return slices.Index([]string{SandboxOff, SandboxWorkspaceWrite, SandboxReadOnly}, m)
}

// mergePermissions adds f's [permissions] and [sandbox] to c; path names
// f in the rules' sources. home expands "~/" in writable_roots.
func (f file) mergePermissions(c *Config, path, home string) {
	if p := f.Permissions; p != nil {
		if p.Mode != nil {
			c.Permissions.Mode, c.Permissions.ModeFrom = *p.Mode, path
		}
		add := func(dst *[]Rule, rules []string) {
			for _, r := range rules {
				*dst = append(*dst, Rule{Text: r, Source: path})
			}
		}
		add(&c.Permissions.Allow, p.Allow)
		add(&c.Permissions.Ask, p.Ask)
		add(&c.Permissions.Deny, p.Deny)
	}
	if s := f.Sandbox; s != nil {
		set(&c.Sandbox.Mode, s.Mode)
		set(&c.Sandbox.Network, s.Network)
		set(&c.Sandbox.Required, s.Required)
		addPaths(&c.Sandbox.WritableRoots, s.WritableRoots, home)
		addPaths(&c.Sandbox.UnixSockets, s.UnixSockets, home)
	}
}

// addPaths adds paths to dst, "~/" expanded to home and cleaned, each
// once.
func addPaths(dst *[]string, paths []string, home string) {
	for _, r := range paths {
		if rest, ok := strings.CutPrefix(r, "~/"); ok {
			r = filepath.Join(home, rest)
		}
		if r = filepath.Clean(r); !slices.Contains(*dst, r) {
			*dst = append(*dst, r)
		}
	}
}

// projectPermissions are the rows of a project's [permissions] and
// [sandbox] tables over cfg, what the lower layers made: a project may
// make them stricter, never looser (a cloned repository that allowed
// itself bash, or turned the network on, would have the model's tools
// do what the user never chose).
func projectPermissions(f file, cfg Config) []Setting {
	var out []Setting
	if p := f.Permissions; p != nil {
		const table = "permissions"
		if p.Mode != nil {
			s := Setting{Key: "permissions.mode", Value: strconv.Quote(*p.Mode), Table: table}
			if modeStrictness(*p.Mode) < modeStrictness(cfg.Permissions.Mode) {
				s.Never = fmt.Sprintf("a project may make the permission mode stricter, never looser than yours (%q)", cfg.Permissions.Mode)
			}
			out = append(out, s)
		}
		if p.Allow != nil {
			out = append(out, Setting{Key: "permissions.allow", Value: tomlList(p.Allow), Table: table,
				Never: "a project never allows a tool call: only you do (it may add ask and deny rules)"})
		}
		if p.Ask != nil {
			out = append(out, Setting{Key: "permissions.ask", Value: tomlList(p.Ask), Table: table, Note: "added to your rules"})
		}
		if p.Deny != nil {
			out = append(out, Setting{Key: "permissions.deny", Value: tomlList(p.Deny), Table: table, Note: "added to your rules"})
		}
	}
	if s := f.Sandbox; s != nil {
		const table = "sandbox"
		if s.Mode != nil {
			row := Setting{Key: "sandbox.mode", Value: strconv.Quote(*s.Mode), Table: table}
			if sandboxStrictness(*s.Mode) < sandboxStrictness(cfg.Sandbox.Mode) {
				row.Never = fmt.Sprintf("a project may make the sandbox stricter, never looser than yours (%q)", cfg.Sandbox.Mode)
			}
			out = append(out, row)
		}
		if s.Network != nil {
			row := Setting{Key: "sandbox.network", Value: strconv.FormatBool(*s.Network), Table: table}
			if *s.Network {
				row.Never = "a project never turns the sandbox's network on"
			}
			out = append(out, row)
		}
		if s.WritableRoots != nil {
			out = append(out, Setting{Key: "sandbox.writable_roots", Value: tomlList(s.WritableRoots), Table: table,
				Never: "a project never widens where bash may write"})
		}
		if s.UnixSockets != nil {
			out = append(out, Setting{Key: "sandbox.unix_sockets", Value: tomlList(s.UnixSockets), Table: table,
				Never: "a project never opens your unix sockets (an SSH agent, docker.sock) to bash"})
		}
		if s.Required != nil {
			row := Setting{Key: "sandbox.required", Value: strconv.FormatBool(*s.Required), Table: table}
			if !*s.Required {
				row.Never = "a project may only make the sandbox required, never the reverse"
			}
			out = append(out, row)
		}
	}
	return out
}

// applyPermissions removes from f what the Never rows of a project's
// tables name.
func applyPermissions(f file, never []Setting) file {
	if f.Permissions != nil {
		p := *f.Permissions
		f.Permissions = &p
	}
	if f.Sandbox != nil {
		s := *f.Sandbox
		f.Sandbox = &s
	}
	for _, s := range never {
		switch s.Key {
		case "permissions.mode":
			f.Permissions.Mode = nil
		case "permissions.allow":
			f.Permissions.Allow = nil
		case "sandbox.mode":
			f.Sandbox.Mode = nil
		case "sandbox.network":
			f.Sandbox.Network = nil
		case "sandbox.writable_roots":
			f.Sandbox.WritableRoots = nil
		case "sandbox.unix_sockets":
			f.Sandbox.UnixSockets = nil
		case "sandbox.required":
			f.Sandbox.Required = nil
		}
	}
	return f
}

// guardPermissions are the guard keys of the two tables that loosen
// the boundary, as TOML writes them (see GuardKeys).
func (f file) guardPermissions(out map[string]string) {
	if p := f.Permissions; p != nil && p.Mode != nil {
		out["permissions.mode"] = strconv.Quote(*p.Mode)
	}
	if s := f.Sandbox; s != nil {
		if s.Mode != nil {
			out["sandbox.mode"] = strconv.Quote(*s.Mode)
		}
		if s.Network != nil {
			out["sandbox.network"] = strconv.FormatBool(*s.Network)
		}
		if s.WritableRoots != nil {
			out["sandbox.writable_roots"] = tomlList(s.WritableRoots)
		}
		if s.Required != nil {
			out["sandbox.required"] = strconv.FormatBool(*s.Required)
		}
		if s.UnixSockets != nil {
			out["sandbox.unix_sockets"] = tomlList(s.UnixSockets)
		}
	}
}

// tomlList writes a list of strings as TOML does.
func tomlList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Policy is the permission policy the rules make, with the rules given
// on the command line (--allow) and the mode (--permission-mode, or
// PANTO_PERMISSION_MODE) over the config's; mode "" keeps it.
func (p Permissions) Policy(mode string, allow []string) (permissions.Policy, error) {
	if mode == "" {
		mode = p.Mode
	}
	m, err := permissions.ParseMode(mode)
	if err != nil {
		return permissions.Policy{}, err
	}
	pol := permissions.Policy{Mode: m}
	parse := func(dst *[]permissions.Rule, rules []Rule) error {
		for _, r := range rules {
			rule, err := permissions.ParseRule(r.Text)
			if err != nil {
				if r.Source == "" {
					return fmt.Errorf("--allow %q: %w", r.Text, err)
				}
				return fmt.Errorf("config %s: %w", r.Source, err)
			}
			rule.Source = "config " + r.Source
			if r.Source == "" {
				rule.Source = "--allow"
			}
			*dst = append(*dst, rule)
		}
		return nil
	}
	flagRules := make([]Rule, len(allow))
	for i, a := range allow {
		flagRules[i] = Rule{Text: a}
	}
	for _, l := range []struct {
		dst   *[]permissions.Rule
		rules []Rule
	}{{&pol.Allow, append(slices.Clone(p.Allow), flagRules...)}, {&pol.Ask, p.Ask}, {&pol.Deny, p.Deny}} {
		if err := parse(l.dst, l.rules); err != nil {
			return permissions.Policy{}, err
		}
	}
	return pol, nil
}
