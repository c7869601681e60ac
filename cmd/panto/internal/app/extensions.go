package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// Candidate is an extension found by discovery, trusted or not.
type Candidate struct {
	Spec extension.Spec
	// Skip says why it will not run (untrusted, changed); empty when it
	// runs.
	Skip string
}

// Discover finds the extensions to load with the layers d, in load
// order: each layer's extensions/ folder, base → user → project, by name
// within a folder; then flagPaths (--extension) in the order given. A
// project-layer binary runs only once trusted, with the checksum it was
// trusted with (go-plugin checks it again right before the start).
func Discover(d layers.Dirs, flagPaths []string) ([]Candidate, error) {
	ts, err := trust.Load(d.Layer(layers.User), trust.ExtensionsFile)
	if err != nil {
		return nil, err
	}
	var out []Candidate
	for _, l := range d.Layers {
		dir := filepath.Join(l.Dir, "extensions")
		ents, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list extensions in %s: %w", dir, err)
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for _, de := range ents {
			path := filepath.Join(dir, de.Name())
			if strings.HasPrefix(de.Name(), ".") || !IsExecutable(path) {
				continue
			}
			c := Candidate{Spec: extension.Spec{Path: path, Source: string(l.Name) + " layer"}}
			if l.Name == layers.Project {
				c.Skip, c.Spec.Checksum = checkTrust(ts, path)
			}
			out = append(out, c)
		}
	}
	for _, p := range flagPaths {
		abs := inDir(d.CWD, p)
		if !IsExecutable(abs) {
			return nil, usageErrorf("--extension %s: not an executable file", p)
		}
		out = append(out, Candidate{Spec: extension.Spec{Path: abs, Source: "--extension"}})
	}
	return out, nil
}

// checkTrust says whether a project-layer binary may run; when it may, it
// returns the checksum go-plugin verifies again right before the start.
func checkTrust(ts *trust.Store, path string) (skip string, checksum []byte) {
	if !ts.Known(path) {
		// Never trusted: nothing to hash it against (a huge file in a
		// clone cost every start its size in reading).
		return fmt.Sprintf("not trusted; run 'panto ext trust %s' to trust it", path), nil
	}
	sum, err := trust.FileSHA256(path)
	if err != nil {
		return fmt.Sprintf("cannot read it: %v", err), nil
	}
	switch ts.Check(path, sum) {
	case trust.Trusted:
		return "", sum
	case trust.Changed:
		return fmt.Sprintf("changed since it was trusted; check it, then run 'panto ext trust %s'", path), nil
	}
	return fmt.Sprintf("not trusted; run 'panto ext trust %s' to trust it", path), nil
}

// IsExecutable reports whether path is a regular file someone may run.
func IsExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// runnable returns the specs of the candidates that may run, and tells
// the others.
func (a *App) runnable(cands []Candidate) []extension.Spec {
	var specs []extension.Spec
	for _, c := range cands {
		if c.Skip != "" {
			a.env.notify(fmt.Sprintf("skipping extension %s: %s", c.Spec.Path, c.Skip))
			continue
		}
		specs = append(specs, c.Spec)
	}
	return specs
}

// withoutDisabled drops the specs whose file name is on the config's
// disabled_extensions list, so they never start. An extension whose name
// (from Init) differs from its file name can only be recognised once it
// has started; Manager.Disable stops it before any event reaches it.
func withoutDisabled(specs []extension.Spec, disabled []string) []extension.Spec {
	if len(disabled) == 0 {
		return specs
	}
	var out []extension.Spec
	for _, sp := range specs {
		if !slices.Contains(disabled, filepath.Base(sp.Path)) {
			out = append(out, sp)
		}
	}
	return out
}

// extensionSpecs are the extensions the flags and layers say to start, in
// load order, less those config disables by file name; those that may not
// run (untrusted, changed) are told. Those the base and user layers
// install are safeguards that must run for tools to run (Required),
// unless config's [extensions.NAME] says otherwise.
func (a *App) extensionSpecs() ([]extension.Spec, error) {
	if a.flags.NoExtensions {
		return nil, nil
	}
	cands, err := Discover(a.dirs, a.flags.Extensions)
	if err != nil {
		return nil, err
	}
	specs := withoutDisabled(a.runnable(cands), a.cfg.DisabledExtensions)
	specs = a.withoutProjectDisabled(specs)
	for i := range specs {
		specs[i].Environ = a.extensionEnviron(specs[i].Path, specs[i].Source == string(layers.Project)+" layer")
		specs[i].Required = a.required(specs[i])
	}
	specs, err = a.withMCP(specs)
	if err != nil {
		return nil, err
	}
	specs, err = a.withWeb(specs)
	if err != nil {
		return nil, err
	}
	return a.reattached(specs)
}

// required says whether the extension of spec is a safeguard: one the
// base or user layer installs, or one config marks required.
func (a *App) required(spec extension.Spec) bool {
	if r, ok := a.cfg.Required[filepath.Base(spec.Path)]; ok {
		return r
	}
	return spec.Source == string(layers.Base)+" layer" || spec.Source == string(layers.User)+" layer"
}

// withoutProjectDisabled applies a trusted project's disabled_extensions:
// to the project layer's own extensions only, by file name; an entry
// naming one the user installed is told and ignored.
func (a *App) withoutProjectDisabled(specs []extension.Spec) []extension.Spec {
	if len(a.cfg.ProjectDisabledExtensions) == 0 {
		return specs
	}
	project := string(layers.Project) + " layer"
	for _, name := range a.cfg.ProjectDisabledExtensions {
		for _, sp := range specs {
			if filepath.Base(sp.Path) == name && sp.Source != project {
				a.env.notify(fmt.Sprintf("ignoring disabled_extensions entry %q in the project settings %s: it names an extension you installed (%s); a project may only disable its own",
					name, a.cfg.Project.Path, sp.Source))
			}
		}
	}
	var out []extension.Spec
	for _, sp := range specs {
		if sp.Source == project && slices.Contains(a.cfg.ProjectDisabledExtensions, filepath.Base(sp.Path)) {
			continue
		}
		out = append(out, sp)
	}
	return out
}

// reattached applies PANTO_REATTACH_EXTENSIONS: each extension it names,
// running under a debugger, is attached to instead of started — in the
// place of the one of that file name, or after the others.
func (a *App) reattached(specs []extension.Spec) ([]extension.Spec, error) {
	v := a.env.Getenv(extension.ReattachEnv)
	if v == "" {
		return specs, nil
	}
	m, err := extension.Reattachments(v)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		i := slices.IndexFunc(specs, func(s extension.Spec) bool { return filepath.Base(s.Path) == name })
		if i < 0 {
			specs = append(specs, extension.Spec{Path: name, Source: extension.ReattachEnv})
			i = len(specs) - 1
		} else {
			specs[i].Source += ", reattached by " + extension.ReattachEnv
		}
		specs[i].Reattach = m[name]
	}
	return specs, nil
}

// extensionEnviron is the environment the extension at path starts with:
// panto's, less the provider keys unless config's extension_api_keys
// names the extension's file name — never for a project-layer binary
// (project), whatever its name: trusting a project's binary to run is not
// handing it the key a same-named extension of yours gets — and with
// ownDirsEnv naming panto's own folders.
func (a *App) extensionEnviron(path string, project bool) []string {
	keep := !project && slices.Contains(a.cfg.ExtensionAPIKeys, filepath.Base(path))
	out := []string{}
	if a.env.Environ != nil {
		for _, kv := range a.env.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if (keep || !isProviderKey(k)) && k != ownDirsEnv {
				out = append(out, kv)
			}
		}
	}
	return append(out, ownDirsEnv+"="+a.ownDirs())
}

// ownDirsEnv names panto's own folders for every extension: the tools
// extension's write and edit refuse them, and the guard example asks
// before a bash command that names them (docs/tools.md).
const ownDirsEnv = "PANTO_OWN_DIRS"

// ownDirs are panto's own folders — the user layer, the base layer, the
// sessions and the state folder — as one list (filepath.ListSeparator).
func (a *App) ownDirs() string {
	dirs := []string{a.dirs.Layer(layers.User), a.dirs.Layer(layers.Base), a.dirs.Sessions, a.dirs.State}
	return strings.Join(dirs, string(filepath.ListSeparator))
}

// ExtensionOptions are the extension host's options from the config.
func (a *App) ExtensionOptions() extension.Options {
	return extension.Options{
		Logger:       a.logger.Named("extensions"),
		StartTimeout: a.cfg.ExtensionStartTimeout,
		HookTimeout:  a.cfg.HookTimeout,
		ToolTimeout:  a.cfg.ToolTimeout,
		HostVersion:  a.env.Version,
		SocketDir:    a.sockets,
		Workspace:    a.flags.Workspace,
	}
}

// OpenCheck opens an in-memory session with the one extension binary at
// path (absolute), started as a session starts it — its environment,
// the configured prompt, its tool guidance, session_start — with the
// extension host logging to logger (panto ext check). Nothing is
// recorded; it has no provider.
func (a *App) OpenCheck(ctx context.Context, path string, logger hclog.Logger) (*host.Session, error) {
	spec := extension.Spec{Path: path, Source: "panto ext check", Environ: a.extensionEnviron(path, false)}
	cfg := a.HostConfig(host.Log{ID: "check"}, []extension.Spec{spec}, nil)
	cfg.MaxProcs = nil
	cfg.ExtensionOptions.Logger = logger
	return host.Open(ctx, cfg)
}

// TrustExtensions trusts the extension binaries at paths — every one in
// the project layer of d without any — by their sha256, telling trusted
// of each, and saves the trust store (panto ext trust). A file that
// changes is untrusted again.
func TrustExtensions(d layers.Dirs, paths []string, trusted func(path string, sum []byte)) error {
	if len(paths) == 0 {
		cands, err := Discover(d, nil)
		if err != nil {
			return err
		}
		for _, c := range cands {
			if c.Spec.Source == string(layers.Project)+" layer" {
				paths = append(paths, c.Spec.Path)
			}
		}
		if len(paths) == 0 {
			return fmt.Errorf("ext trust: no extensions in %s", filepath.Join(d.Layer(layers.Project), "extensions"))
		}
	}
	ts, err := trust.Load(d.Layer(layers.User), trust.ExtensionsFile)
	if err != nil {
		return err
	}
	for _, p := range paths {
		abs := inDir(d.CWD, p)
		if !IsExecutable(abs) {
			return fmt.Errorf("ext trust %s: not an executable file", p)
		}
		sum, err := trust.FileSHA256(abs)
		if err != nil {
			return fmt.Errorf("ext trust %s: %w", p, err)
		}
		ts.Trust(abs, sum)
		trusted(abs, sum)
	}
	return ts.Save()
}

// Listed is one extension of panto ext list.
type Listed struct {
	Candidate
	// Info is what it said of itself when started, when it may run and
	// did start; Err says why it did not start.
	Info extension.Info
	Err  error
	// Disabled is set when config's disabled_extensions names it.
	Disabled bool
}

// Extensions lists the extensions a session here would load, in load
// order, flagPaths (--extension) last, with what a session would attach
// to under a debugger: each that may run is started on its own and asked
// what it is (extension.Describe).
func (a *App) Extensions(ctx context.Context, flagPaths []string) ([]Listed, error) {
	cands, err := Discover(a.dirs, flagPaths)
	if err != nil {
		return nil, err
	}
	specs := make([]extension.Spec, len(cands))
	for i, c := range cands {
		specs[i] = c.Spec
	}
	if specs, err = a.reattached(specs); err != nil {
		return nil, err
	}
	for i, sp := range specs {
		if i < len(cands) {
			cands[i].Spec = sp
		} else {
			cands = append(cands, Candidate{Spec: sp})
		}
	}
	out := make([]Listed, len(cands))
	for i, c := range cands {
		c.Spec.Environ = a.extensionEnviron(c.Spec.Path, c.Spec.Source == string(layers.Project)+" layer")
		out[i].Candidate = c
		if c.Skip != "" {
			continue
		}
		out[i].Info, out[i].Err = extension.Describe(ctx, c.Spec, a.ExtensionOptions())
		out[i].Disabled = out[i].Err == nil && slices.Contains(a.cfg.DisabledExtensions, out[i].Info.Name)
	}
	return out, nil
}
