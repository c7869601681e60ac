package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

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
	a, err := app.Load(e.appEnv(e.tell), o.appFlags())
	if err != nil {
		return err
	}
	defer a.Close()
	list, err := a.Extensions(ctx, flags)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no extensions found (see panto ext --help)")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tTRUSTED\tVERSION\tHANDLES\tPATH")
	for _, x := range list {
		name, ver, handles := filepath.Base(x.Spec.Path), "-", "-"
		trusted := "yes"
		switch {
		case x.Skip != "":
			trusted = "no: " + x.Skip
		case x.Err != nil:
			handles = "(failed to start: " + termtext.OneLine(x.Err.Error(), 60) + ")"
		default:
			name, ver = x.Info.Name, x.Info.Version
			if x.Disabled {
				trusted += " (disabled in config)"
			}
			h := append([]string(nil), x.Info.Events...)
			for _, cmd := range x.Info.Commands {
				h = append(h, "/"+cmd.Name)
			}
			for _, tool := range x.Info.Tools {
				h = append(h, "tool:"+tool.Name)
			}
			handles = strings.Join(h, " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, x.Spec.Source, trusted, ver, handles, x.Spec.Path)
	}
	return tw.Flush()
}

func extCheck(ctx context.Context, e *env, o *options, arg string) error {
	path, err := filepath.Abs(arg)
	if err != nil {
		return err
	}
	if !app.IsExecutable(path) {
		return fmt.Errorf("ext check %s: not an executable file", path)
	}
	a, err := app.Load(e.appEnv(e.tell), o.appFlags())
	if err != nil {
		return err
	}
	defer a.Close()
	log := newCheckLog(e.stderr)
	start := time.Now()
	sess, err := a.OpenCheck(ctx, path, log.logger())
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
		fmt.Fprintf(e.stdout, "tool: %s — %s\n", t.Name, termtext.OneLine(t.Description, 80))
	}
	for k, v := range info.Variables {
		fmt.Fprintf(e.stdout, "variable: {{%s}} = %q\n", k, termtext.OneLine(v, 60))
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

func extTrust(e *env, args []string) error {
	d, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return err
	}
	return app.TrustExtensions(d, args, func(path string, sum []byte) {
		fmt.Fprintf(e.stdout, "trusted %s (sha256 %s)\n", path, hex.EncodeToString(sum)[:16])
	})
}
