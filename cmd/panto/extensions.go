package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
	"github.com/spf13/cobra"
)

// candidate is an extension found by discovery, trusted or not.
type candidate struct {
	spec extension.Spec
	// skip says why it will not run (untrusted, changed); empty when it
	// runs.
	skip string
}

// discover finds the extensions to load, in load order: each layer's
// extensions/ folder, base → user → project, by name within a folder;
// then the --extension flags in the order given.
func discover(d layers.Dirs, flagPaths []string) ([]candidate, error) {
	ts, err := trust.Load(d.Layer(layers.User), trust.ExtensionsFile)
	if err != nil {
		return nil, err
	}
	var out []candidate
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
			if strings.HasPrefix(de.Name(), ".") || !isExecutable(path) {
				continue
			}
			c := candidate{spec: extension.Spec{Path: path, Source: string(l.Name) + " layer"}}
			if l.Name == layers.Project {
				c.skip, c.spec.Checksum = checkTrust(ts, path)
			}
			out = append(out, c)
		}
	}
	for _, p := range flagPaths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("--extension %s: %w", p, err)
		}
		if !isExecutable(abs) {
			return nil, usageErrorf("--extension %s: not an executable file", p)
		}
		out = append(out, candidate{spec: extension.Spec{Path: abs, Source: "--extension"}})
	}
	return out, nil
}

// checkTrust says whether a project-layer binary may run; when it may, it
// returns the checksum go-plugin verifies again right before the start.
func checkTrust(ts *trust.Store, path string) (skip string, checksum []byte) {
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

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// runnable returns the specs of the candidates that may run, and reports
// the others on w.
func runnable(cands []candidate, w io.Writer) []extension.Spec {
	var specs []extension.Spec
	for _, c := range cands {
		if c.skip != "" {
			fmt.Fprintf(w, "panto: skipping extension %s: %s\n", c.spec.Path, c.skip)
			continue
		}
		specs = append(specs, c.spec)
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

const extLong = `Extensions are loaded from each layer's extensions/ folder — base
($PANTO_HOME/agent/extensions), user ($XDG_CONFIG_HOME/panto/extensions),
project (./.panto/extensions) — by name within a folder, then from
--extension flags. Project-layer binaries run only once trusted.
See docs/extensions.md.`

func extCommand(ctx context.Context, e *env, root *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ext",
		Aliases: []string{"extensions"},
		Short:   "List, check and trust extensions",
		Long:    extLong,
		Args:    cobra.ArbitraryArgs,
		RunE:    groupArgs,
	}
	var listFlags []string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the extensions panto would load here, in load order",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			return extList(ctx, e, &options{logLevel: root.logLevel}, listFlags)
		},
	}
	list.Flags().StringArrayVar(&listFlags, "extension", nil, "list this extension binary too, `PATH` (repeatable)")
	check := &cobra.Command{
		Use:   "check PATH",
		Short: "Start one extension in an in-memory session and report what it does",
		Long: `Start the extension at PATH in an in-memory session, exactly as a session
starts it — the go-plugin handshake, Init, the configured prompt with
{{variables}} rendered strictly, its tool guidance, session_start — then
end the session (session_end, Shutdown) and report everything it did.
Nothing is recorded. Exit status 1 on any failure, a refused system edit
included, and when it had to be killed to stop.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("%swant one PATH", where(cmd))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return extCheck(ctx, e, &options{logLevel: root.logLevel}, args[0])
		},
	}
	trust := &cobra.Command{
		Use:   "trust [PATH...]",
		Short: "Trust project-layer extensions (all of ./.panto/extensions without PATH)",
		RunE:  func(_ *cobra.Command, args []string) error { return extTrust(e, args) },
	}
	cmd.AddCommand(list, check, trust)
	return cmd
}

func extList(ctx context.Context, e *env, o *options, flags []string) error {
	a, err := loadApp(e, o)
	if err != nil {
		return err
	}
	defer a.close()
	cands, err := discover(a.dirs, flags)
	if err != nil {
		return err
	}
	// What a session would attach to under a debugger, too.
	specs := make([]extension.Spec, len(cands))
	for i, c := range cands {
		specs[i] = c.spec
	}
	if specs, err = reattached(e, specs); err != nil {
		return err
	}
	for i, sp := range specs {
		if i < len(cands) {
			cands[i].spec = sp
		} else {
			cands = append(cands, candidate{spec: sp})
		}
	}
	if len(cands) == 0 {
		fmt.Fprintln(e.stdout, "no extensions found (see panto ext --help)")
		return nil
	}
	disabled := map[string]bool{}
	for _, n := range a.cfg.DisabledExtensions {
		disabled[n] = true
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tTRUSTED\tVERSION\tHANDLES\tPATH")
	for _, c := range cands {
		name, ver, handles := filepath.Base(c.spec.Path), "-", "-"
		trusted := "yes"
		c.spec.Environ = a.extensionEnviron(e, c.spec.Path)
		if c.skip != "" {
			trusted = "no: " + c.skip
		} else if info, err := extension.Describe(ctx, c.spec, a.extensionOptions()); err != nil {
			handles = "(failed to start: " + oneLine(err.Error(), 60) + ")"
		} else {
			name, ver = info.Name, info.Version
			if disabled[name] {
				trusted += " (disabled in config)"
			}
			h := append([]string(nil), info.Events...)
			for _, cmd := range info.Commands {
				h = append(h, "/"+cmd.Name)
			}
			for _, tool := range info.Tools {
				h = append(h, "tool:"+tool.Name)
			}
			handles = strings.Join(h, " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, c.spec.Source, trusted, ver, handles, c.spec.Path)
	}
	return tw.Flush()
}

func extCheck(ctx context.Context, e *env, o *options, arg string) error {
	path, err := filepath.Abs(arg)
	if err != nil {
		return err
	}
	if !isExecutable(path) {
		return fmt.Errorf("ext check %s: not an executable file", path)
	}
	a, err := loadApp(e, o)
	if err != nil {
		return err
	}
	defer a.close()
	spec := extension.Spec{Path: path, Source: "panto ext check", Environ: a.extensionEnviron(e, path)}
	cfg := a.hostConfig(e, o, host.Log{ID: "check"}, []extension.Spec{spec}, nil)
	cfg.MaxProcs = nil
	log := newCheckLog(e.stderr)
	cfg.ExtensionOptions.Logger = log.logger()
	start := time.Now()
	sess, err := host.Open(ctx, cfg)
	if err != nil {
		return fmt.Errorf("ext check: %w", err)
	}
	log.started(len(sess.ExtensionInfo()) > 0)
	infos := sess.ExtensionInfo()
	events := sess.Subscribe(context.WithoutCancel(ctx)) // from Open's start to Close's end
	if len(infos) == 0 {
		var failed []string
		for ev := range events {
			if n, ok := ev.(host.Notice); ok && n.Level == host.NoticeError {
				failed = append(failed, n.Text)
			}
			if _, ok := ev.(host.Opened); ok {
				break // what the start said
			}
		}
		sess.Close(ctx)
		for range events {
		}
		return fmt.Errorf("ext check: %s", strings.Join(failed, "; "))
	}
	info := infos[0]
	name := info.Name
	if info.Version != "" {
		name += " " + info.Version
	}
	fmt.Fprintf(e.stdout, "started %s in %s (panto API v%d)\n", name, time.Since(start).Round(time.Millisecond), info.APIVersion)
	if info.Description != "" {
		fmt.Fprintf(e.stdout, "description: %s\n", info.Description)
	}
	if len(info.Events) > 0 {
		fmt.Fprintf(e.stdout, "handles: %s\n", strings.Join(info.Events, ", "))
	}
	for _, c := range info.Commands {
		fmt.Fprintf(e.stdout, "command: /%s %s — %s\n", c.Name, c.Usage, c.Description)
	}
	for _, t := range info.Tools {
		fmt.Fprintf(e.stdout, "tool: %s — %s\n", t.Name, oneLine(t.Description, 80))
	}
	for k, v := range info.Variables {
		fmt.Fprintf(e.stdout, "variable: {{%s}} = %q\n", k, oneLine(v, 60))
	}
	// What the extension does, as it happens; every failure is a notice.
	var failed []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events {
			switch ev := ev.(type) {
			case host.SystemChanged:
				switch {
				case ev.By == host.Panto && ev.Key == "":
					// The configured prompt: panto prompt shows it.
				case ev.Key != "":
					what := "section " + ev.Key + " set"
					if ev.Text == "" {
						what = "section " + ev.Key + " removed"
					}
					if strings.HasSuffix(ev.Key, ":"+extension.GuidanceKey) {
						what += " (its tool guidance, as a session records it before session_start)"
					}
					fmt.Fprintf(e.stdout, "%s by %s: %q\n", what, ev.By, ev.Text)
				default:
					fmt.Fprintf(e.stdout, "system %s by %s: %q\n", ev.Mode, ev.By, ev.Text)
				}
			case host.SystemRefused:
				what := "system " + string(ev.Mode)
				if ev.Key != "" {
					what = "section " + ev.Key
				}
				fmt.Fprintf(e.stdout, "%s by %s REFUSED: %q: %v\n", what, ev.By, ev.Text, ev.Err)
			case host.Notice:
				// A failure is printed once, as the panto: line at the end.
				if ev.Level == host.NoticeError {
					failed = append(failed, ev.Text)
				} else {
					fmt.Fprintf(e.stdout, "%s: %s\n", ev.Level, ev.Text)
				}
			}
		}
	}()
	err = sess.Close(ctx)
	<-done
	if err != nil {
		return fmt.Errorf("ext check: %w", err)
	}
	if len(failed) > 0 {
		return fmt.Errorf("ext check: %s", strings.Join(failed, "; "))
	}
	// Clean only when it exited by itself after Shutdown and left nothing
	// running: an extension panto had to kill would be killed by every
	// session.
	for _, st := range sess.ExtensionStops() {
		if !st.Clean() {
			return fmt.Errorf("ext check: extension %s: %s", st.Name, st.Stop)
		}
	}
	fmt.Fprintln(e.stdout, "ok: shut down cleanly")
	return nil
}

// checkLog is ext check's log on stderr: the extension's own log lines
// at warn and above (those go-plugin relays from its stderr and those of
// the Host Log call), none of go-plugin's or panto's own. A failure is
// shown once, as the panto: line; that of a failed start ends with the
// extension's stderr, so the lines held back until the start are then
// dropped.
type checkLog struct {
	out hclog.Logger

	mu   sync.Mutex
	live bool
	held []checkLine
}

type checkLine struct {
	name  string
	level hclog.Level
	msg   string
	args  []any
}

func newCheckLog(w io.Writer) *checkLog {
	return &checkLog{out: hclog.New(&hclog.LoggerOptions{Output: w, Level: hclog.Warn})}
}

// logger returns the logger to hand to the extension host.
func (c *checkLog) logger() hclog.Logger {
	l := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "panto", Output: io.Discard, Level: hclog.Warn})
	l.RegisterSink(c)
	return l
}

// Accept implements hclog.SinkAdapter. The extension's lines are logged
// below panto.ext.NAME; go-plugin's own as panto.ext and
// panto.ext.stdio, panto's as panto.
func (c *checkLog) Accept(name string, level hclog.Level, msg string, args ...any) {
	if level < hclog.Warn || !strings.HasPrefix(name, "panto.ext.") || name == "panto.ext.stdio" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live {
		c.held = append(c.held, checkLine{name, level, msg, args})
		return
	}
	c.out.ResetNamed(name).Log(level, msg, args...)
}

// started shows the lines held back if the extension started, drops
// them if not, and shows later lines as they come.
func (c *checkLog) started(ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		for _, l := range c.held {
			c.out.ResetNamed(l.name).Log(l.level, l.msg, l.args...)
		}
	}
	c.held = nil
	c.live = true
}

// extensionOptions are the extension host's options from the config.
func (a *app) extensionOptions() extension.Options {
	return extension.Options{
		Logger:       a.logger.Named("extensions"),
		StartTimeout: a.cfg.ExtensionStartTimeout,
		HookTimeout:  a.cfg.HookTimeout,
		ToolTimeout:  a.cfg.ToolTimeout,
		HostVersion:  version,
		SocketDir:    a.sockets,
	}
}

func extTrust(e *env, args []string) error {
	d, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return err
	}
	paths := args
	if len(paths) == 0 {
		cands, err := discover(d, nil)
		if err != nil {
			return err
		}
		for _, c := range cands {
			if c.spec.Source == string(layers.Project)+" layer" {
				paths = append(paths, c.spec.Path)
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
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if !isExecutable(abs) {
			return fmt.Errorf("ext trust %s: not an executable file", p)
		}
		sum, err := trust.FileSHA256(abs)
		if err != nil {
			return fmt.Errorf("ext trust %s: %w", p, err)
		}
		ts.Trust(abs, sum)
		fmt.Fprintf(e.stdout, "trusted %s (sha256 %s)\n", abs, hex.EncodeToString(sum)[:16])
	}
	return ts.Save()
}
