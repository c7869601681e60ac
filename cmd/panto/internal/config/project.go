package config

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/trust"
)

// A project's config.toml comes with a clone of somebody else's
// repository. It counts only once the user trusted it with its current
// content; and some keys never come from a project, trusted or not,
// because they decide where data goes or what guards it. docs/config.md
// has the table; this file is the rule.

// Project is the project layer's config file as Load found it.
type Project struct {
	Path string
	// Sum is the sha256 of its content: what trusting it records.
	Sum []byte
	// Status is what the trust store says of it.
	Status trust.Status
	// Applied says its settings count: it is trusted with this content.
	Applied bool
	// Settings are what it sets, in the order written (tables last).
	Settings []Setting
	// Err says why it could not be read or decoded, when it is not
	// trusted: it is then ignored rather than stopping panto (a trusted
	// file that does not decode is Load's error).
	Err error
}

// Setting is one value a project's config file sets.
type Setting struct {
	// Key is the key as a user writes it: "model",
	// "extensions.guard.required", `prices."gpt-4.1"`.
	Key string
	// Value is the value, as TOML writes it.
	Value string
	// Never, when set, says why a project never sets this, trusted or
	// not.
	Never string
	// Note, when set, says how the setting counts when it does.
	Note string
	// Table is the table the setting is a field of, for a list of what a
	// file sets ("mcp.docs": its url, headers and env are rows of their
	// own); empty for the others.
	Table string
}

// Ignored returns what did not count: every setting when the file is not
// applied, else those a project may never set.
func (p *Project) Ignored() []Setting {
	var out []Setting
	for _, s := range p.Settings {
		if !p.Applied || s.Never != "" {
			out = append(out, s)
		}
	}
	return out
}

// Never returns the settings a project may never set.
func (p *Project) Never() []Setting {
	var out []Setting
	for _, s := range p.Settings {
		if s.Never != "" {
			out = append(out, s)
		}
	}
	return out
}

// project describes the project layer's file f (at path, holding data)
// over cfg, the configuration the lower layers made.
func project(path string, data []byte, f file, cfg Config, opts Options) *Project {
	p := &Project{Path: path, Sum: trust.Sum(data)}
	if opts.Trust != nil {
		p.Status = opts.Trust.Check(path, p.Sum)
	}
	p.Applied = p.Status == trust.Trusted
	keyEnv := ""
	if opts.KeyEnv != nil {
		keyEnv = opts.KeyEnv(cfg.Provider)
	}
	type row struct {
		line int
		s    Setting
	}
	var rows []row
	v := reflect.ValueOf(f)
	for i := range v.NumField() {
		fv := v.Field(i)
		if fv.IsNil() {
			continue
		}
		key := v.Type().Field(i).Tag.Get("toml")
		line, _, ok := locate(data, key)
		if !ok {
			line = 1 << 30 // a table: after the top-level keys
		}
		switch key {
		case "prices":
			for _, model := range slices.Sorted(maps.Keys(f.Prices)) {
				pr := f.Prices[model]
				rows = append(rows, row{line, Setting{Key: "prices." + strconv.Quote(model),
					Value: fmt.Sprintf("{ input = %s, output = %s, cache_read = %s, cache_write = %s }",
						tomlFloat(pr.Input), tomlFloat(pr.Output), tomlFloat(pr.CacheRead), tomlFloat(pr.CacheWrite))}})
			}
			continue
		case "extensions":
			for _, name := range slices.Sorted(maps.Keys(f.Extensions)) {
				x := f.Extensions[name]
				if x.Required == nil {
					continue
				}
				s := Setting{Key: "extensions." + name + ".required", Value: strconv.FormatBool(*x.Required)}
				if !*x.Required {
					s.Never = "a project may only mark an extension required, never the reverse"
				}
				rows = append(rows, row{line, s})
			}
			continue
		}
		if key == "permissions" || key == "sandbox" {
			continue // below, both at once
		}
		if key == "web" {
			for _, s := range webSettings(f.Web) {
				rows = append(rows, row{line, s})
			}
			continue
		}
		if key == "mcp" {
			for _, name := range slices.Sorted(maps.Keys(f.MCP)) {
				for _, s := range mcpSettings(name, f.MCP[name]) {
					rows = append(rows, row{line, s})
				}
			}
			continue
		}
		s := Setting{Key: key, Value: tomlValue(fv)}
		switch key {
		case "provider":
			s.Never = "a project never chooses the provider: that decides where your API key is sent"
		case "base_url":
			if keyEnv != "" {
				s.Never = "a project never chooses where your " + keyEnv + " is sent"
			} else {
				s.Note = "no API key for the " + cfg.Provider + " provider is in the environment, so none is sent there"
			}
		case "extension_api_keys":
			s.Never = "a project never hands your API key to an extension"
		case "confirm_default":
			if *f.ConfirmDefault == "yes" {
				s.Never = `a project may only make confirm_default stricter ("no", or "" to refuse)`
			}
		case "disabled_extensions":
			s.Note = "for this project's own extensions only (.panto/extensions), never one you installed"
		case "hook_timeout":
			s.Never, s.Note = shorter(key, f.HookTimeout.d, cfg.HookTimeout, "disables an extension whose hook runs longer")
		case "extension_start_timeout":
			s.Never, s.Note = shorter(key, f.ExtStartTimeout.d, cfg.ExtensionStartTimeout, "stops an extension that starts slower")
		}
		rows = append(rows, row{line, s})
	}
	for _, s := range projectPermissions(f, cfg) {
		rows = append(rows, row{1 << 30, s})
	}
	slices.SortStableFunc(rows, func(a, b row) int { return a.line - b.line })
	for _, r := range rows {
		p.Settings = append(p.Settings, r.s)
	}
	return p
}

// shorter says whether a project's timeout for key, v, may count over
// the one the lower layers (or the defaults) give, base: a project may
// lengthen it, never shorten it, since a shorter one stops the
// extensions you installed (the sixth adversary pass's T3: hook_timeout
// = "1ms" disabled the user's env and context, extension_start_timeout =
// "1ms" kept every extension from starting). It returns the Never or
// the Note of the setting.
func shorter(key string, v, base time.Duration, what string) (never, note string) {
	if v < base {
		return fmt.Sprintf("a project may lengthen %s, never shorten it below yours (%s): a shorter one %s, and so stops the extensions you installed", key, base, what), ""
	}
	return "", fmt.Sprintf("a project may lengthen it, never shorten it below yours (%s)", base)
}

// apply returns f without what a project may never set, and moves its
// disabled_extensions to the project's own list in cfg.
func (p *Project) apply(f file, cfg *Config) file {
	for _, s := range p.Never() {
		switch {
		case s.Key == "provider":
			f.Provider = nil
		case s.Key == "base_url":
			f.BaseURL = nil
		case s.Key == "extension_api_keys":
			f.ExtAPIKeys = nil
		case s.Key == "confirm_default":
			f.ConfirmDefault = nil
		case s.Key == "hook_timeout":
			f.HookTimeout = nil
		case s.Key == "extension_start_timeout":
			f.ExtStartTimeout = nil
		case s.Key == "web.search":
			f.Web = nil
		case strings.HasPrefix(s.Key, "extensions."):
			name := strings.TrimSuffix(strings.TrimPrefix(s.Key, "extensions."), ".required")
			x := f.Extensions[name]
			x.Required = nil
			f.Extensions = maps.Clone(f.Extensions)
			f.Extensions[name] = x
		}
	}
	f = applyPermissions(f, p.Never())
	cfg.ProjectDisabledExtensions = append(cfg.ProjectDisabledExtensions, f.DisabledExts...)
	f.DisabledExts = nil
	return f
}

// tomlValue writes a file field's value as TOML does.
func tomlValue(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return tomlFloat(x)
	case duration:
		return strconv.Quote(x.d.String())
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// mcpSettings are the rows of one [mcp.NAME] table: every field it sets,
// each on its own row and as written — a ${VAR} unexpanded, and its note
// naming the variables of yours it reads — since once trusted each is
// used: the headers are sent to the url, the env is the command's
// environment (the sixth adversary pass's T5: a header holding
// ${GITHUB_TOKEN} was sent to the project's server, and the trust
// question had shown its url only).
func mcpSettings(name string, m mcpFile) []Setting {
	table := "mcp." + tomlKey(name)
	var out []Setting
	add := func(field, value, note string) {
		if vars := envRefs(value); len(vars) > 0 {
			if note != "" {
				note += "; "
			}
			note += "reads " + strings.Join(vars, ", ") + " from your environment"
		}
		out = append(out, Setting{Key: table + "." + field, Value: value, Note: note, Table: table})
	}
	if m.URL != nil {
		add("url", strconv.Quote(*m.URL), "an MCP server panto connects to")
	}
	for _, k := range slices.Sorted(maps.Keys(m.Headers)) {
		add("headers."+tomlKey(k), strconv.Quote(m.Headers[k]), "sent to the server with every request")
	}
	if m.Command != nil {
		add("command", strconv.Quote(*m.Command), "an MCP server panto runs: "+strings.Join(append([]string{*m.Command}, m.Args...), " "))
	}
	if m.Args != nil {
		add("args", tomlValue(reflect.ValueOf(m.Args)), "")
	}
	if m.Cwd != nil {
		add("cwd", strconv.Quote(*m.Cwd), "the folder the server runs in")
	}
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		add("env."+tomlKey(k), strconv.Quote(m.Env[k]), "in the server's environment")
	}
	if m.EnabledTools != nil {
		add("enabled_tools", tomlValue(reflect.ValueOf(m.EnabledTools)), "")
	}
	if m.DisabledTools != nil {
		add("disabled_tools", tomlValue(reflect.ValueOf(m.DisabledTools)), "")
	}
	if m.StartupTimeout != nil {
		add("startup_timeout", tomlValue(reflect.ValueOf(m.StartupTimeout)), "")
	}
	if m.ToolTimeout != nil {
		add("tool_timeout", tomlValue(reflect.ValueOf(m.ToolTimeout)), "")
	}
	if m.Required != nil {
		add("required", strconv.FormatBool(*m.Required), "")
	}
	return out
}

// envVar is a ${VAR} (or ${VAR:-default}) reference, as the mcp servers'
// values are expanded (mcpconfig.Expand).
var envVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// envRefs are the variables s refers to, each once, in order.
func envRefs(s string) []string {
	var out []string
	for _, m := range envVar.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// bareKey is what a TOML key may be without quotes.
var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// tomlKey is k as one part of a dotted TOML key: quoted unless bare.
func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return strconv.Quote(k)
}
