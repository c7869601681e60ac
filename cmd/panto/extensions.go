package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/host/render"
	"github.com/panto-dev/panto/sdk/pb"
)

// trustFile is where trusted project-layer extensions are recorded, in the
// user layer: a project's binaries arrive with any git clone, so they run
// only once the user has trusted them.
const trustFile = "trusted-extensions.json"

// trustStore maps an extension's absolute path to the sha256 (hex) it was
// trusted with.
type trustStore struct {
	Version int               `json:"version"`
	Trusted map[string]string `json:"trusted"`
}

func loadTrust(d layers.Dirs) (trustStore, error) {
	path := filepath.Join(d.Layer(layers.User), trustFile)
	ts := trustStore{Version: 1, Trusted: map[string]string{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ts, nil
	}
	if err != nil {
		return ts, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &ts); err != nil {
		return ts, fmt.Errorf("read %s: %w (fix or delete it; it lists trusted extensions)", path, err)
	}
	if ts.Trusted == nil {
		ts.Trusted = map[string]string{}
	}
	return ts, nil
}

func saveTrust(d layers.Dirs, ts trustStore) error {
	dir := d.Layer(layers.User)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	data, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, trustFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func fileSHA256(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

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
	ts, err := loadTrust(d)
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
func checkTrust(ts trustStore, path string) (skip string, checksum []byte) {
	want, ok := ts.Trusted[path]
	if !ok {
		return fmt.Sprintf("not trusted; run 'panto ext trust %s' to trust it", path), nil
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return fmt.Sprintf("cannot read it: %v", err), nil
	}
	if hex.EncodeToString(sum) != want {
		return fmt.Sprintf("changed since it was trusted; check it, then run 'panto ext trust %s'", path), nil
	}
	return "", sum
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

// extOptions are the Manager options of the CLI.
func (a *app) extOptions(e *env, sessionID string) extension.Options {
	return extension.Options{
		Logger:       a.logger.Named("extensions"),
		Errors:       e.stderr,
		StartTimeout: a.cfg.ExtensionStartTimeout,
		HookTimeout:  a.cfg.HookTimeout,
		ToolTimeout:  a.cfg.ToolTimeout,
		HostVersion:  version,
		SessionID:    sessionID,
		CWD:          a.dirs.CWD,
	}
}

const extUsage = `Usage:
  panto ext list              the extensions panto would load here, in load order
  panto ext check PATH        start one extension against a scratch session and report
  panto ext trust [PATH...]   trust project-layer extensions (all of ./.panto/extensions
                              when no PATH is given)

Extensions are loaded from each layer's extensions/ folder — base
($PANTO_HOME/agent/extensions), user ($XDG_CONFIG_HOME/panto/extensions),
project (./.panto/extensions) — by name within a folder, then from
--extension flags. Project-layer binaries run only once trusted.
See docs/extensions.md.
`

func runExt(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, extUsage)
		return usageErrorf("panto ext: want list, check or trust")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, extUsage)
		return nil
	case "list":
		return extList(e, args[1:])
	case "check":
		return extCheck(ctx, e, args[1:])
	case "trust":
		return extTrust(e, args[1:])
	}
	fmt.Fprint(e.stderr, extUsage)
	return usageErrorf("panto ext: unknown subcommand %q", args[0])
}

func extList(e *env, args []string) error {
	var flags multi
	fs := newFlagSet("panto ext list")
	fs.Var(&flags, "extension", "")
	if err := parseSub(e, fs, args, extUsage); err != nil {
		return err
	}
	a, err := loadApp(e, &options{})
	if err != nil {
		return err
	}
	defer a.close()
	cands, err := discover(a.dirs, flags)
	if err != nil {
		return err
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
		if c.skip != "" {
			trusted = "no: " + c.skip
		} else if info, err := describe(e, c.spec); err != nil {
			handles = "(failed to start: " + oneLine(err.Error(), 60) + ")"
		} else {
			name, ver = info.GetName(), info.GetVersion()
			if disabled[name] {
				trusted += " (disabled in config)"
			}
			var h []string
			h = append(h, info.GetEvents()...)
			for _, cmd := range info.GetCommands() {
				h = append(h, "/"+cmd.GetName())
			}
			for _, tool := range info.GetTools() {
				h = append(h, "tool:"+tool.GetName())
			}
			handles = strings.Join(h, " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, c.spec.Source, trusted, ver, handles, c.spec.Path)
	}
	return tw.Flush()
}

// describe starts an extension alone with a throwaway recorder and returns
// what it said in Init.
func describe(e *env, spec extension.Spec) (*pb.InitResponse, error) {
	var errs strings.Builder
	m := extension.Start(context.Background(), []extension.Spec{spec}, &scratch{}, extension.Options{Errors: &errs})
	defer m.Close(context.Background())
	if len(m.Extensions()) == 0 {
		return nil, errors.New(strings.TrimSpace(strings.TrimPrefix(errs.String(), "panto: ")))
	}
	return m.Extensions()[0].Info(), nil
}

const extCheckUsage = `Usage: panto ext check PATH

Start the extension at PATH, run the go-plugin handshake and Init, record
its tool guidance and fire session_start against a scratch in-memory
session that renders {{variables}} as a real one does, run session_end
and shut it down, printing what it saw. Exit status 1 on any failure,
a refused system edit included.
`

func extCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("panto ext check")
	if err := fs.Parse(args); err != nil {
		return usageErrorf("panto ext check: %v", err)
	}
	if fs.NArg() != 1 {
		fmt.Fprint(e.stderr, extCheckUsage)
		return usageErrorf("panto ext check: want one PATH")
	}
	path, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return err
	}
	if !isExecutable(path) {
		return fmt.Errorf("ext check %s: not an executable file", path)
	}
	var errs strings.Builder
	rec := &scratch{out: e.stdout}
	log := newCheckLog(e.stderr)
	start := time.Now()
	m := extension.Start(ctx, []extension.Spec{{Path: path, Source: "panto ext check"}}, rec,
		extension.Options{Errors: &errs, Logger: log.logger(), HostVersion: version, SessionID: "check", CWD: e.cwd})
	log.started(len(m.Extensions()) > 0)
	if len(m.Extensions()) == 0 {
		m.Close(ctx)
		return fmt.Errorf("ext check: %s", strings.TrimSpace(strings.TrimPrefix(errs.String(), "panto: ")))
	}
	x := m.Extensions()[0]
	info := x.Info()
	fmt.Fprintf(e.stdout, "started %s %s in %s (panto API v%d)\n", info.GetName(), info.GetVersion(), time.Since(start).Round(time.Millisecond), info.GetApiVersion())
	if info.GetDescription() != "" {
		fmt.Fprintf(e.stdout, "description: %s\n", info.GetDescription())
	}
	if len(info.GetEvents()) > 0 {
		fmt.Fprintf(e.stdout, "handles: %s\n", strings.Join(info.GetEvents(), ", "))
	}
	for _, c := range info.GetCommands() {
		fmt.Fprintf(e.stdout, "command: /%s %s — %s\n", c.GetName(), c.GetUsage(), c.GetDescription())
	}
	for _, t := range info.GetTools() {
		fmt.Fprintf(e.stdout, "tool: %s — %s\n", t.GetName(), oneLine(t.GetDescription(), 80))
	}
	for k, v := range info.GetVariables() {
		fmt.Fprintf(e.stdout, "variable: {{%s}} = %q\n", k, oneLine(v, 60))
	}
	// Record as a real session does: variables rendered strictly (an
	// unknown one refuses the edit), then the tool guidance, then
	// session_start.
	vars := checkVars(e, m.Variables())
	rec.setRenderer(func(text, source string) (string, error) { return render.Render(text, source, vars) })
	for _, t := range info.GetTools() {
		if strings.TrimSpace(t.GetGuidance()) != "" {
			fmt.Fprintln(e.stdout, "recording tool guidance (as a session does before session_start)")
			break
		}
	}
	m.RecordGuidance(rec)
	fmt.Fprintln(e.stdout, "firing session_start (fresh scratch session)")
	m.SessionStart(ctx, &pb.SessionStart{SessionId: "check"})
	m.Close(ctx)
	if x.Disabled() != nil || errs.Len() > 0 {
		return fmt.Errorf("ext check: %s", strings.TrimSpace(strings.TrimPrefix(errs.String(), "panto: ")))
	}
	// Clean only when it exited by itself after Shutdown and left nothing
	// running: an extension panto had to kill would be killed by every
	// session.
	if st, _ := x.Stopped(); !st.Clean() {
		return fmt.Errorf("ext check: extension %s: %s", info.GetName(), st)
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

// logger returns the logger to hand to the extension Manager.
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

// checkVars are the variables a session would render extension text
// with: the built-ins over the extensions' own (see app.vars). Without a
// usable config, {{model}} and {{provider}} render empty.
func checkVars(e *env, extVars map[string]string) render.Vars {
	a, err := loadApp(e, &options{})
	if err != nil {
		fmt.Fprintf(e.stderr, "panto: warning: %v; {{model}} and {{provider}} render empty\n", err)
		return (&app{dirs: layers.Dirs{CWD: e.cwd}}).vars(e, extVars)
	}
	defer a.close()
	return a.vars(e, extVars)
}

// scratch is an in-memory session for ext list and ext check; with out
// set it prints what the extension records. With a renderer set it
// renders system text as a session does (host.Session.SetRenderer): a
// rendering error refuses the edit.
type scratch struct {
	mu     sync.Mutex
	conv   conversation.Conversation
	out    io.Writer
	render func(text, source string) (string, error)
}

func (s *scratch) setRenderer(f func(text, source string) (string, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.render = f
}

func (s *scratch) EditSystem(by string, mode conversation.Mode, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.render != nil {
		rendered, err := s.render(text, "extension "+by)
		if err != nil {
			if s.out != nil {
				fmt.Fprintf(s.out, "system %s by %s REFUSED: %q: %v\n", mode, by, text, err)
			}
			return err
		}
		text = rendered
	}
	s.conv.Append(conversation.SystemMessage(text, mode))
	if s.out != nil {
		fmt.Fprintf(s.out, "system %s by %s: %q\n", mode, by, text)
	}
	return nil
}

func (s *scratch) EffectiveSystem() []conversation.SystemText {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conv.EffectiveSystem()
}

func (s *scratch) Messages() []conversation.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]conversation.Message(nil), s.conv.Messages...)
}

func (s *scratch) AppendData(ext string, data json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out != nil {
		fmt.Fprintf(s.out, "data by %s: %s\n", ext, data)
	}
	return nil
}

func extTrust(e *env, args []string) error {
	fs := newFlagSet("panto ext trust")
	if err := fs.Parse(args); err != nil {
		return usageErrorf("panto ext trust: %v", err)
	}
	d, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return err
	}
	paths := fs.Args()
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
	ts, err := loadTrust(d)
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
		sum, err := fileSHA256(abs)
		if err != nil {
			return fmt.Errorf("ext trust %s: %w", p, err)
		}
		ts.Trusted[abs] = hex.EncodeToString(sum)
		fmt.Fprintf(e.stdout, "trusted %s (sha256 %s)\n", abs, hex.EncodeToString(sum)[:16])
	}
	return saveTrust(d, ts)
}
