package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

const promptLong = `Show the system prompt, block by block, with where each block came from.

With no session flag: the prompt a fresh session here would start with,
the extensions' blocks included (they are started, as a session starts
them; --no-extensions shows the files' blocks only). With a session
(--session, -c, --resume): the prompt its next request will carry, as
resuming it now would make it, without recording anything. With --at N:
the prompt as it was recorded after the current branch's first N
messages (panto session list shows how many it has); with --at ID: as of
the entry ID or a unique prefix of it, on any branch (panto session tree
shows the ids). A number of up to 5 digits is a count; anything else an
id. Each block then names the entry that recorded it. --at reads the log
alone, by an index scan: no extension starts, and a large log is not
read whole.`

func promptCommand(ctx context.Context, e *env, root *options) *cobra.Command {
	var o options
	var at string
	asJSON, tools, perms, toks := false, false, false, false
	cmd := &cobra.Command{
		Use:   "prompt [flags]",
		Short: "Show the system prompt the next request will carry",
		Long:  promptLong,
		Example: `  panto prompt                      a fresh session's prompt
  panto prompt -c                   this directory's last session, as resuming it would send
  panto prompt --session s.jsonl --at 12 --json
  panto prompt -c --at 3fa2c1d0       as of that entry (panto session tree shows the ids)`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.logLevel = root.logLevel
			if cmd.Flags().Changed("at") && (strings.TrimSpace(at) == "" || strings.HasPrefix(strings.TrimSpace(at), "-")) {
				return usageErrorf("--at %s: want the number of messages, 0 or more, or an entry ID", at)
			}
			if toks {
				if tools || perms || cmd.Flags().Changed("at") {
					return usageErrorf("--tokens shows the next request: not with --tools, --permissions or --at")
				}
				return runPromptTokens(ctx, e, &o, asJSON)
			}
			if perms {
				if tools {
					return usageErrorf("--permissions and --tools: choose one")
				}
				return runPromptPermissions(ctx, e, &o, strings.TrimSpace(at), asJSON)
			}
			return runPrompt(ctx, e, &o, strings.TrimSpace(at), asJSON, tools)
		},
	}
	cmd.AddCommand(promptHistoryCommands(e, root)...) // panto prompt log, panto prompt diff (promptlog.go)
	f := cmd.Flags()
	o.sessionFlags(f)
	o.promptFlags(f)
	o.extensionFlags(f)
	f.StringVar(&at, "at", "", "the prompt as recorded after the current branch's first `N|ID` messages, or as of entry ID (or a unique prefix)")
	f.BoolVar(&asJSON, "json", false, `print {"blocks": [{"text", "source", "key", "message"}]}`)
	f.BoolVar(&perms, "permissions", false, `show the permission policy the tool calls run under instead: mode, rules, grants, sandbox (with --json: the log's permissions entry)`)
	o.permissionFlags(f)
	f.BoolVar(&toks, "tokens", false, `show where the next request's tokens go instead: each system block, each extension's tools, the conversation by role, the window left; beside the provider's count of the last request (with --json: the breakdown)`)
	f.BoolVar(&tools, "tools", false, `show the tools offered instead, by extension, as the log records them (with --json: {"tools": [{"extension", "reason", "tools": [{"name", "description", "parameters"}]}]})`)
	return cmd
}

// promptApp loads the app of panto prompt and picks the log the session
// flags name ("" for none: a fresh session's). Close the app when done.
func promptApp(e *env, o *options, at string) (*app.App, string, error) {
	fromLog := o.session != "" || o.continueLast || o.resume != ""
	if at != "" && !fromLog {
		return nil, "", usageErrorf("--at needs a session (--session FILE, -c or --resume ID)")
	}
	a, err := app.Load(e.appEnv(e.tell), o.appFlags())
	if err != nil {
		return nil, "", err
	}
	path := ""
	if fromLog {
		if path, _, err = a.Store().Pick(o.pick(), time.Now()); err != nil {
			a.Close()
			return nil, "", err
		}
	}
	return a, path, nil
}

// runPromptPermissions is panto prompt --permissions: the policy a
// session's tool calls run under — as recorded as of --at, or as the
// next run would open it (the config and flags over the log's grants).
func runPromptPermissions(ctx context.Context, e *env, o *options, at string, asJSON bool) error {
	a, path, err := promptApp(e, o, at)
	if err != nil {
		return err
	}
	defer a.Close()
	if at != "" {
		if asJSON {
			p, _, err := app.PermissionsAt(path, at)
			if err != nil {
				return err
			}
			return json.NewEncoder(e.jsonStdout()).Encode(p)
		}
		text, err := app.DescribePermissionsAt(path, at)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, text)
		return nil
	}
	var st sessionlog.Permissions
	var text string
	err = inMemory(ctx, e, a, path, func(sess *host.Session) error {
		st, _, _ = sess.PermissionState()
		text = app.DescribePermissions(sess)
		return nil
	})
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.jsonStdout()).Encode(st)
	}
	fmt.Fprintln(e.stdout, text)
	return nil
}

func runPrompt(ctx context.Context, e *env, o *options, at string, asJSON, showTools bool) error {
	a, path, err := promptApp(e, o, at)
	if err != nil {
		return err
	}
	defer a.Close()
	var blocks []app.PromptBlock
	var tools []sessionlog.Tools
	switch {
	case at != "" && showTools:
		if tools, err = app.ToolsAt(path, at); err != nil {
			return err
		}
	case at != "":
		// What was recorded: the log alone, no extension started.
		if blocks, err = app.PromptAt(path, at); err != nil {
			return err
		}
	default:
		// What the next request would carry: a session opened as a run
		// would open it, in memory.
		err := inMemory(ctx, e, a, path, func(sess *host.Session) error {
			blocks = app.BlocksOf(sess.EffectiveSystem())
			tools = sess.Tools()
			return nil
		})
		if err != nil {
			return err
		}
	}
	if showTools {
		return writeTools(e, tools, asJSON)
	}
	if asJSON {
		if blocks == nil {
			blocks = []app.PromptBlock{}
		}
		enc := json.NewEncoder(e.jsonStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"blocks": blocks})
	}
	app.WriteBlocks(e.stdout, blocks)
	if len(blocks) == 0 {
		fmt.Fprintln(e.stdout, "(no system prompt)")
	}
	return nil
}

// toolSetJSON is one extension's tools in panto prompt --tools --json.
type toolSetJSON struct {
	Extension string               `json:"extension"`
	Reason    string               `json:"reason,omitempty"`
	Tools     []sessionlog.ToolDef `json:"tools"`
}

// writeTools shows the tool sets panto prompt --tools reads.
func writeTools(e *env, sets []sessionlog.Tools, asJSON bool) error {
	if asJSON {
		out := []toolSetJSON{}
		for _, t := range sets {
			out = append(out, toolSetJSON{t.Extension, t.Reason, t.Tools})
		}
		enc := json.NewEncoder(e.jsonStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"tools": out})
	}
	if len(sets) == 0 {
		fmt.Fprintln(e.stdout, "(no tools)")
		return nil
	}
	for _, t := range sets {
		fmt.Fprintf(e.stdout, "--- tools of the %s extension (%d) ---\n", termtext.Line(t.Extension), len(t.Tools))
		for _, d := range t.Tools {
			desc, _, _ := strings.Cut(strings.TrimSpace(d.Description), "\n")
			fmt.Fprintf(e.stdout, "%s  %s\n", termtext.Line(d.Name), termtext.Line(desc))
		}
	}
	return nil
}

func sessionCommand(_ context.Context, e *env, _ *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "session",
		Aliases: []string{"sessions"},
		Short:   "List, inspect, fork, label and export sessions",
		Args:    cobra.ArbitraryArgs,
		RunE:    groupArgs,
	}
	var listJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List this directory's sessions, newest first",
		Long: `List this directory's sessions, newest first: id, its name (/name), last
change, the current branch's message count (system messages included, as
panto prompt --at N counts them), the number of branches, the labels, and
the first user line; --json as a JSON array. Resume one with panto
--resume ID. Each row comes from a small summary cached beside the log
(<log>.summary), rebuilt when the log changes, so listing never reads
whole logs.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return runSessionList(e, listJSON) },
	}
	list.Flags().BoolVar(&listJSON, "json", false, "the sessions as a JSON array")
	cmd.AddCommand(list)
	cmd.AddCommand(sessionTreeCommands(e)...)
	return cmd
}

func runSessionList(e *env, asJSON bool) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	list, err := st.List()
	if err != nil {
		return err
	}
	if asJSON {
		tab, err := app.LoadPrices(e.appEnv(e.tell), st.Dirs())
		if err != nil {
			e.tell("warning: the config's [prices] are not applied: " + err.Error())
		}
		return writeSessionListJSON(e.jsonStdout(), list, tab)
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "no sessions in %s\n", st.Dirs().CWD)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tUPDATED\tMESSAGES\tBRANCHES\tLABELS\tFIRST MESSAGE")
	for _, s := range list {
		// An unreadable log keeps its row, marked, and hides nothing
		// after it.
		if s.Err != nil {
			// The id names the file; the reason need not repeat its path.
			why := s.Err.Error()
			if rest, ok := strings.CutPrefix(why, "session log "+s.Path); ok {
				why = strings.TrimLeft(rest, ": ")
			}
			fmt.Fprintf(tw, "%s\t-\t%s\t?\t?\t\t(unreadable: %s)\n", s.ID, s.Updated.Local().Format("2006-01-02 15:04"), termtext.OneLine(why, 160))
			continue
		}
		first := "(none)"
		if s.First != "" {
			first = termtext.OneLine(s.First, 60)
		}
		// Every message of the current branch counts, system ones too, as
		// in /session and --at N: the count given to --at shows the whole
		// conversation.
		name := "-"
		if s.Name != "" {
			name = termtext.OneLine(s.Name, 40)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", s.ID, name, s.Updated.Local().Format("2006-01-02 15:04"),
			s.Messages, s.Branches, termtext.OneLine(strings.Join(s.Labels, ", "), 40), first)
	}
	return tw.Flush()
}

// sessionJSON is a row of panto session list --json.
type sessionJSON struct {
	ID       string   `json:"id"`
	Name     string   `json:"name,omitempty"`
	Path     string   `json:"path"`
	Updated  string   `json:"updated"`
	Messages int      `json:"messages"`
	Branches int      `json:"branches"`
	Labels   []string `json:"labels,omitempty"`
	First    string   `json:"first,omitempty"`
	// Tokens sums what the replies of every branch used (absent when
	// none recorded any); CostUSD prices them, absent when a model's
	// price is not known.
	Tokens  *sessionlog.Usage `json:"tokens,omitempty"`
	CostUSD *float64          `json:"cost_usd,omitempty"`
	Error   string            `json:"error,omitempty"`
}

// writeSessionListJSON writes panto session list --json, the tokens
// priced by tab.
func writeSessionListJSON(w io.Writer, list []app.SessionItem, tab prices.Table) error {
	rows := make([]sessionJSON, 0, len(list))
	for _, s := range list {
		r := sessionJSON{ID: s.ID, Name: s.Name, Path: s.Path, Updated: s.Updated.UTC().Format(time.RFC3339Nano),
			Messages: s.Messages, Branches: s.Branches, Labels: s.Labels, First: s.First}
		if len(s.Usage) > 0 {
			sum := tab.Sum(s.Usage)
			r.Tokens = &sum.Usage
			if sum.CostKnown {
				r.CostUSD = new(sum.CostUSD)
			}
		}
		if s.Err != nil {
			r.Error = s.Err.Error()
		}
		rows = append(rows, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

// store is the working directory's session logs, with what is skipped
// warned of on stderr.
func (e *env) store() (*app.Store, error) {
	dirs, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return nil, err
	}
	return app.NewStore(dirs, func(w string) { e.tell("warning: " + w) }), nil
}

func dirsCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "dirs",
		Short: "Show panto's directories and the files found in the layers",
		Long: `Show panto's directories — PANTO_HOME, the base, user and project layers,
the sessions and log folders — and every file found in the layers.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return runDirs(e) },
	}
}

func runDirs(e *env) error {
	d, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "PANTO_HOME  %s\n", d.Home)
	for _, l := range d.Layers {
		fmt.Fprintf(e.stdout, "%-11s %s%s\n", l.Name, l.Dir, missing(l.Dir))
		files, err := layerFiles(l.Dir)
		if err != nil {
			return err
		}
		for _, f := range files {
			fmt.Fprintf(e.stdout, "              %s\n", f)
		}
	}
	fmt.Fprintf(e.stdout, "sessions    %s%s\n", d.SessionDir(), missing(d.SessionDir()))
	fmt.Fprintf(e.stdout, "log         %s\n", filepath.Join(d.State, "panto.log"))
	return nil
}

func missing(dir string) string {
	if _, err := os.Stat(dir); err != nil {
		return "  (does not exist)"
	}
	return ""
}

// layerFiles lists the files of a layer directory, two levels deep (so
// extensions/ shows its binaries), relative to dir.
func layerFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if de.IsDir() {
			if strings.Count(rel, string(filepath.Separator)) >= 1 {
				return fs.SkipDir
			}
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	return out, nil
}

// groupArgs runs a command that only groups subcommands: without one, or
// with a word that is none of them, it is a usage error, with a suggestion
// when one is close.
func groupArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usageErrorf("%swant one of: %s", where(cmd), subcommandNames(cmd))
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		return usageErrorf("%sunknown command %q: did you mean `%s %s`?", where(cmd), args[0], cmd.CommandPath(), s[0])
	}
	return usageErrorf("%sunknown command %q (want one of: %s)", where(cmd), args[0], subcommandNames(cmd))
}

func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// completeSessionIDs completes --resume with this directory's session ids.
func completeSessionIDs(e *env) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		dirs, err := layers.Resolve(e.getenv, e.cwd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return app.NewStore(dirs, nil).IDs(prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

// inMemory opens, in memory, the session a run would open from the log
// at path ("" for a fresh one; app.OpenReadOnly), runs fn on it while
// its notices go to stderr, and closes it: fn's error first, then
// Close's.
func inMemory(ctx context.Context, e *env, a *app.App, path string, fn func(*host.Session) error) error {
	sess, err := a.OpenReadOnly(ctx, path)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	events := sess.Subscribe(context.WithoutCancel(ctx)) // read to its end: Close ends it
	go func() {
		defer close(done)
		lineloop.ShowNotices(e.stderr, events)
	}()
	ferr := fn(sess)
	err = sess.Close(ctx)
	<-done
	if ferr != nil {
		return ferr
	}
	return err
}
