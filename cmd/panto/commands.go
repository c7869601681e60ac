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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/conversation"
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

// promptBlock is one block of panto prompt --json.
type promptBlock struct {
	Text string `json:"text"`
	// Source says where the block came from, for people; empty in a log
	// written before panto recorded sources.
	Source string `json:"source,omitempty"`
	// Key is the section's key, for a section.
	Key string `json:"key,omitempty"`
	// Message is the 1-based position of the system message the block's
	// text comes from.
	Message int `json:"message"`
	// Entry is the id of that message's log entry (with --at).
	Entry string `json:"entry,omitempty"`
}

func blocksOf(sys []conversation.SystemText) []promptBlock {
	out := make([]promptBlock, 0, len(sys))
	for _, b := range sys {
		out = append(out, promptBlock{Text: b.Text, Source: b.Source, Key: b.Key, Message: b.Index + 1})
	}
	return out
}

// writeBlocks shows blocks as text: each with where it came from.
func writeBlocks(w io.Writer, blocks []promptBlock) {
	for i, b := range blocks {
		fmt.Fprintf(w, "--- block %d · %s ---\n%s\n", i+1, b.from(), strings.TrimRight(b.Text, "\n"))
	}
}

// from says where a block came from: its source (or its message, in a log
// written before sources), and its section key.
func (b promptBlock) from() string {
	from := b.Source
	if from == "" {
		from = fmt.Sprintf("message %d", b.Message)
	}
	if b.Key != "" {
		from += " · section " + b.Key
	}
	if b.Entry != "" {
		from += fmt.Sprintf(" · entry %s (message %d)", treeview.Short(b.Entry), b.Message)
	}
	return from
}

func promptCommand(ctx context.Context, e *env, root *options) *cobra.Command {
	var o options
	var at string
	asJSON := false
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
			return runPrompt(ctx, e, &o, strings.TrimSpace(at), asJSON)
		},
	}
	f := cmd.Flags()
	o.sessionFlags(f)
	o.promptFlags(f)
	o.extensionFlags(f)
	f.StringVar(&at, "at", "", "the prompt as recorded after the current branch's first `N|ID` messages, or as of entry ID (or a unique prefix)")
	f.BoolVar(&asJSON, "json", false, `print {"blocks": [{"text", "source", "key", "message"}]}`)
	return cmd
}

func runPrompt(ctx context.Context, e *env, o *options, at string, asJSON bool) error {
	if err := checkPromptFlags(o); err != nil {
		return err
	}
	fromLog := o.session != "" || o.continueLast || o.resume != ""
	if at != "" && !fromLog {
		return usageErrorf("--at needs a session (--session FILE, -c or --resume ID)")
	}
	a, err := loadApp(e, o)
	if err != nil {
		return err
	}
	defer a.close()
	var blocks []promptBlock
	if at != "" {
		// What was recorded: the log alone, no extension started; an
		// index scan, and only the system messages of the path decoded.
		path, _, err := pickSession(a.dirs, o, nowFunc(), e.stderr)
		if err != nil {
			return err
		}
		if blocks, err = promptAt(path, at, e.stderr); err != nil {
			return err
		}
	} else {
		// What the next request would carry: a session opened as a run
		// would open it, in memory.
		log := host.Log{}
		if fromLog {
			path, _, err := pickSession(a.dirs, o, nowFunc(), e.stderr)
			if err != nil {
				return err
			}
			log = host.Log{Path: path, ReadOnly: true}
		}
		specs, err := a.extensionSpecs(e, o)
		if err != nil {
			return err
		}
		cfg := a.hostConfig(e, o, log, specs, nil)
		cfg.MaxProcs = nil
		sess, err := host.Open(ctx, cfg)
		if err != nil {
			return err
		}
		done := make(chan struct{})
		events := sess.Subscribe(context.WithoutCancel(ctx)) // read to its end: Close ends it
		go func() {
			defer close(done)
			v := newTextView(e, false)
			for ev := range events {
				if n, ok := ev.(host.Notice); ok {
					v.show(n)
				}
			}
		}()
		blocks = blocksOf(sess.EffectiveSystem())
		err = sess.Close(ctx)
		<-done
		if err != nil {
			return err
		}
	}
	if asJSON {
		if blocks == nil {
			blocks = []promptBlock{}
		}
		enc := json.NewEncoder(e.jsonStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"blocks": blocks})
	}
	writeBlocks(e.stdout, blocks)
	if len(blocks) == 0 {
		fmt.Fprintln(e.stdout, "(no system prompt)")
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
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List this directory's sessions, newest first",
		Long: `List this directory's sessions, newest first: id, last change, the
current branch's message count (system messages included, as panto prompt
--at N counts them), the number of branches, the labels, and the first
user line. Resume one with panto --resume ID. Each row comes from a small
summary cached beside the log (<log>.summary), rebuilt when the log
changes, so listing never reads whole logs.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return runSessionList(e) },
	})
	cmd.AddCommand(sessionTreeCommands(e)...)
	return cmd
}

func runSessionList(e *env) error {
	dirs, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return err
	}
	list, err := dirSessions(dirs, warnOnce(e.stderr))
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "no sessions in %s\n", dirs.CWD)
		return nil
	}
	sums := summaries(list)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tMESSAGES\tBRANCHES\tLABELS\tFIRST MESSAGE")
	for i, s := range list {
		// Each row comes from the log's summary: its sidecar cache when
		// the log has not changed since, else one index scan of it. An
		// unreadable log keeps its row, marked, and hides nothing after it.
		sum, err := sums[i].sum, sums[i].err
		if err != nil {
			// The id names the file; the reason need not repeat its path.
			why := err.Error()
			if rest, ok := strings.CutPrefix(why, "session log "+s.path); ok {
				why = strings.TrimLeft(rest, ": ")
			}
			fmt.Fprintf(tw, "%s\t%s\t?\t?\t\t(unreadable: %s)\n", s.id, s.modTime.Local().Format("2006-01-02 15:04"), oneLine(why, 160))
			continue
		}
		first := "(none)"
		if sum.FirstUserText != "" {
			first = oneLine(sum.FirstUserText, 60)
		}
		updated := s.modTime
		if !sum.LastTime.IsZero() {
			updated = sum.LastTime
		}
		labels := make([]string, 0, len(sum.Labels))
		for _, l := range sum.Labels {
			labels = append(labels, l)
		}
		slices.Sort(labels)
		// Every message of the current branch counts, system ones too, as
		// in /session and --at N: the count given to --at shows the whole
		// conversation.
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", s.header.ID, updated.Local().Format("2006-01-02 15:04"),
			sum.Messages, sum.Branches, oneLine(strings.Join(labels, ", "), 40), first)
	}
	return tw.Flush()
}

// rowSummary is one log's summary for panto session list.
type rowSummary struct {
	sum sessionlog.Summary
	err error
}

// summaries reads the summaries of list's logs, on every core.
func summaries(list []sessionFile) []rowSummary {
	out := make([]rowSummary, len(list))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(list)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := list[i].headerErr; err != nil {
					out[i].err = err
					continue
				}
				out[i].sum, out[i].err = sessionlog.CachedSummary(list[i].path)
			}
		}()
	}
	for i := range list {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return out
}

// atCount reports whether an --at value is a message count: a decimal
// number of at most 5 digits. Anything else names an entry.
func atCount(at string) (int, bool) {
	if len(at) > 5 {
		return 0, false
	}
	n, err := strconv.Atoi(at)
	return n, err == nil && n >= 0 && !strings.HasPrefix(at, "+")
}

// promptAt is the prompt recorded in the log at path as of --at: after
// the current branch's first N messages, or as of an entry.
func promptAt(path, at string, stderr io.Writer) ([]promptBlock, error) {
	tree, err := sessionlog.Scan(path)
	if err != nil {
		return nil, err
	}
	var id string
	if n, ok := atCount(at); ok {
		if n > 0 {
			if id, err = tree.NthMessage(n); err != nil {
				return nil, fmt.Errorf("--at %d: %w", n, err)
			}
		}
	} else if id, err = tree.Resolve(at); err != nil {
		return nil, fmt.Errorf("--at %s: session log %s: %w", at, path, err)
	}
	if id == "" {
		return nil, nil // before the first message: no prompt
	}
	sys, err := tree.SystemAt(id)
	if err != nil {
		return nil, err
	}
	// Each block's entry: the chain's messages, numbered as Positions
	// number them.
	chain, err := tree.Chain(id)
	if err != nil {
		return nil, err
	}
	var msgIDs []string
	for _, c := range chain {
		if n, err := tree.Node(c); err == nil && n.Type == sessionlog.TypeMessage {
			msgIDs = append(msgIDs, c)
		}
	}
	var out []promptBlock
	for _, b := range conversation.EffectiveSystem(sys.Messages) {
		pos := sys.Positions[b.Index]
		pb := promptBlock{Text: b.Text, Source: b.Source, Key: b.Key, Message: pos + 1}
		if pos < len(msgIDs) {
			pb.Entry = msgIDs[pos]
		}
		out = append(out, pb)
	}
	return out, nil
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
		list, _ := dirSessions(dirs, func(string) {})
		var ids []string
		for _, s := range list {
			if s.headerErr == nil && strings.HasPrefix(s.header.ID, prefix) {
				ids = append(ids, s.header.ID)
			}
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}
