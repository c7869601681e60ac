package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
)

const mcpLong = `MCP servers give the model tools: a database, a browser, an issue tracker.
Configure them in any layer's config.toml as [mcp.NAME] tables (stdio:
command, args, env, cwd; Streamable HTTP: url, headers), or in the
project's .mcp.json in Claude Code's format. Their tools are offered as
mcp__SERVER__TOOL, through panto's first-party mcp extension, which starts
only when servers are configured.

A project's servers (./.mcp.json, or [mcp] in ./.panto/config.toml) run
code from the repository, so they run only once you trust them: panto mcp
trust records .mcp.json's sha256, and a file that changes is untrusted
again (./.panto/config.toml is trusted with panto trust). See docs/mcp.md.`

func mcpCommand(ctx context.Context, e *env, root *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List MCP servers and their tools; trust a project's .mcp.json",
		Long:  mcpLong,
		Args:  cobra.ArbitraryArgs,
		RunE:  groupArgs,
	}
	var asJSON bool
	var listExts []string
	list := &cobra.Command{
		Use:   "list",
		Short: "Start the MCP servers configured here and list their state and tools",
		Long: `Start the MCP servers configured here, as a session starts them, and list
each: its transport, where it is configured, its state (ready, failed, needs
auth) and its tools, by the name the model calls them. Nothing is recorded.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			a, err := app.Load(e.appEnv(e.tell), (&options{logLevel: root.logLevel, extensions: listExts}).appFlags())
			if err != nil {
				return err
			}
			defer a.Close()
			out, err := a.MCPList(ctx, asJSON)
			if errors.Is(err, app.ErrNoMCP) && !asJSON {
				fmt.Fprintln(e.stdout, err.Error())
				return nil
			}
			if errors.Is(err, app.ErrNoMCP) {
				fmt.Fprintln(e.stdout, "[]")
				return nil
			}
			if err != nil {
				return fmt.Errorf("mcp list: %w", err)
			}
			if asJSON {
				// Made safe for a terminal as --mode json is: escapes
				// that still decode (a \U000e0041 would not).
				fmt.Fprintln(e.jsonStdout(), out)
				return nil
			}
			fmt.Fprintln(e.stdout, termtext.Sanitize(out))
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the servers as a JSON array")
	list.Flags().StringArrayVar(&listExts, "extension", nil, "load this extension binary too, `PATH` (the mcp extension, when it is not installed)")
	var show, revoke bool
	trustCmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a project's .mcp.json (DIR defaults to the working directory)",
		Long: `Show the MCP servers DIR's .mcp.json configures — what each runs or where it
connects — and trust them as they are now, by the file's sha256: a file
that changes is untrusted again. --show trusts nothing; --revoke untrusts.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("%swant at most one DIR", where(cmd))
			}
			if show && revoke {
				return usageErrorf("%s--show and --revoke go alone", where(cmd))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			dir := e.cwd
			if len(args) == 1 {
				dir = args[0]
			}
			return mcpTrust(e, dir, show, revoke)
		},
	}
	trustCmd.Flags().BoolVar(&show, "show", false, "show what the file's servers run and whether it is trusted; trust nothing")
	trustCmd.Flags().BoolVar(&revoke, "revoke", false, "untrust the file")
	authCmd := &cobra.Command{
		Use:   "auth NAME",
		Short: "Authorize an MCP server at a url (OAuth), in this terminal",
		Long: `Authorize the MCP server NAME, one at a url whose authorization server
speaks OAuth: panto listens on a loopback port, prints the URL to open in a
browser on this machine, and waits (at most 5 minutes) for the redirect.
The token and the client panto registered are kept under the state
directory (mode 0600); the next sessions use them. /mcp auth NAME does the
same in a session.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("%swant one NAME", where(cmd))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error { return mcpAuth(ctx, e, root, listExts, args[0]) },
	}
	authCmd.Flags().StringArrayVar(&listExts, "extension", nil, "load this extension binary too, `PATH` (the mcp extension, when it is not installed)")
	cmd.AddCommand(list, trustCmd, authCmd)
	return cmd
}

// mcpAuth runs /mcp auth NAME in an in-memory session and waits for the
// server to be ready (or to fail).
func mcpAuth(ctx context.Context, e *env, root *options, exts []string, name string) error {
	a, err := app.Load(e.appEnv(e.tell), (&options{logLevel: root.logLevel, extensions: exts}).appFlags())
	if err != nil {
		return err
	}
	defer a.Close()
	sess, err := a.OpenMCP(ctx)
	if err != nil {
		return fmt.Errorf("mcp auth: %w", err)
	}
	events := sess.Subscribe(context.WithoutCancel(ctx)) // read to its end: Close ends it
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		lineloop.ShowNotices(e.stderr, events) // a URL that came late, and how it ended
	}()
	defer func() {
		sess.Close(context.WithoutCancel(ctx))
		<-shown
	}()
	out, err := sess.RunCommand(ctx, "mcp", "auth "+name)
	if err != nil {
		return fmt.Errorf("mcp auth: %w", err)
	}
	fmt.Fprintln(e.stdout, termtext.Sanitize(out))
	for deadline := time.Now().Add(5*time.Minute + 10*time.Second); time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return fmt.Errorf("mcp auth: %w", context.Cause(ctx))
		case <-time.After(200 * time.Millisecond):
		}
		js, err := sess.RunCommand(ctx, "mcp", "--json")
		if err != nil {
			return fmt.Errorf("mcp auth: %w", err)
		}
		var infos []struct {
			Name, State, Error string
			Tools              []json.RawMessage
		}
		if err := json.Unmarshal([]byte(js), &infos); err != nil {
			return fmt.Errorf("mcp auth: read the servers' state: %w", err)
		}
		for _, si := range infos {
			if si.Name != name {
				continue
			}
			switch si.State {
			case "ready":
				fmt.Fprintf(e.stdout, "mcp server %s is authorized: %d tools\n", termtext.Line(name), len(si.Tools))
				return nil
			case "failed":
				return fmt.Errorf("mcp auth: mcp server %s: %s", name, si.Error)
			}
		}
	}
	return fmt.Errorf("mcp auth: mcp server %s: no authorization within 5 minutes", name)
}

func mcpTrust(e *env, dir string, show, revoke bool) error {
	d, err := trustDirs(e, dir)
	if err != nil {
		return err
	}
	if show {
		p, _, err := app.LoadProjectMCP(d)
		if err != nil {
			return err
		}
		if p.Path == "" {
			return fmt.Errorf("mcp trust: %s has no .mcp.json", d.CWD)
		}
		if p.Err != nil {
			return fmt.Errorf("mcp trust: %w", p.Err)
		}
		describeMCP(e.stdout, p)
		fmt.Fprintf(e.stdout, "Trusted: %s\n", trustWord(p.Status))
		return nil
	}
	p, was, err := app.TrustProjectMCP(d, revoke)
	if err != nil {
		return err
	}
	if revoke {
		if was {
			fmt.Fprintf(e.stdout, "Untrusted %s: its servers no longer run.\n", termtext.Sanitize(p.Path))
		} else {
			fmt.Fprintf(e.stdout, "%s was not trusted.\n", termtext.Sanitize(p.Path))
		}
		return nil
	}
	describeMCP(e.stdout, p)
	fmt.Fprintln(e.stdout, "Trusted: panto runs these servers from now on, until the file changes.")
	return nil
}

func trustWord(s trust.Status) string {
	switch s {
	case trust.Trusted:
		return "yes"
	case trust.Changed:
		return "no: it changed since you trusted it"
	case trust.Declined:
		return "no: you declined it"
	}
	return "no (panto mcp trust trusts it)"
}

// describeMCP shows what a .mcp.json's servers run, each value on its
// own, with nothing from the file reaching the terminal as a control.
func describeMCP(w io.Writer, p app.ProjectMCP) {
	fmt.Fprintf(w, "%s configures %d MCP server(s):\n", termtext.Line(p.Path), len(p.Servers))
	for _, s := range p.Servers {
		fmt.Fprintf(w, "  %s: %s\n", termtext.Line(s.Name), termtext.Line(mcpWhat(s)))
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			fmt.Fprintf(w, "      env %s = %s\n", termtext.Line(k), termtext.Line(s.Env[k]))
		}
		for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
			fmt.Fprintf(w, "      header %s = %s\n", termtext.Line(k), termtext.Line(s.Headers[k]))
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  note: %s\n", termtext.Line(n))
	}
}

func mcpWhat(s config.MCPServer) string {
	if s.URL != "" {
		return "connects to " + s.URL
	}
	q := make([]string, 0, len(s.Args)+1)
	for _, a := range append([]string{s.Command}, s.Args...) {
		if a == "" || strings.ContainsAny(a, " \t'\"\\$`;&|<>()*?[]{}~#!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q = append(q, a)
	}
	what := "runs " + strings.Join(q, " ")
	if s.Cwd != "" {
		what += " in " + s.Cwd
	}
	return what
}
