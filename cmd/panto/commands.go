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

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
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
the prompt as it was recorded after the log's first N messages (panto
session list shows how many a log has).`

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
	return from
}

func promptCommand(ctx context.Context, e *env, root *options) *cobra.Command {
	var o options
	at := -1
	asJSON := false
	cmd := &cobra.Command{
		Use:   "prompt [flags]",
		Short: "Show the system prompt the next request will carry",
		Long:  promptLong,
		Example: `  panto prompt                      a fresh session's prompt
  panto prompt -c                   this directory's last session, as resuming it would send
  panto prompt --session s.jsonl --at 12 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.logLevel = root.logLevel
			switch {
			case !cmd.Flags().Changed("at"):
				at = -1
			case at < 0:
				return usageErrorf("--at %d: want the number of messages, 0 or more", at)
			}
			return runPrompt(ctx, e, &o, at, asJSON)
		},
	}
	f := cmd.Flags()
	o.sessionFlags(f)
	o.promptFlags(f)
	o.extensionFlags(f)
	f.IntVar(&at, "at", 0, "the prompt as recorded after the log's first `N` messages")
	f.BoolVar(&asJSON, "json", false, `print {"blocks": [{"text", "source", "key", "message"}]}`)
	return cmd
}

func runPrompt(ctx context.Context, e *env, o *options, at int, asJSON bool) error {
	if err := checkPromptFlags(o); err != nil {
		return err
	}
	fromLog := o.session != "" || o.continueLast || o.resume != ""
	if at >= 0 && !fromLog {
		return usageErrorf("--at needs a session (--session FILE, -c or --resume ID)")
	}
	a, err := loadApp(e, o)
	if err != nil {
		return err
	}
	defer a.close()
	var blocks []promptBlock
	if at >= 0 {
		// What was recorded: the log alone, no extension started.
		path, _, err := pickSession(a.dirs, o, nowFunc(), e.stderr)
		if err != nil {
			return err
		}
		log, err := sessionlog.Read(path)
		if err != nil {
			return err
		}
		for _, w := range log.Warnings {
			fmt.Fprintf(e.stderr, "panto: warning: %s\n", w)
		}
		msgs := log.Messages()
		if at > len(msgs) {
			return fmt.Errorf("--at %d: session %s has only %d messages", at, path, len(msgs))
		}
		blocks = blocksOf(conversation.EffectiveSystem(msgs[:at]))
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
		events := sess.Events()
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
		enc := json.NewEncoder(e.stdout)
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
		Short:   "List and inspect this directory's sessions",
		Args:    cobra.ArbitraryArgs,
		RunE:    groupArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List this directory's sessions, newest first",
		Long: `List this directory's sessions, newest first: id, last change, message
count (system messages included, as panto prompt --at N counts them; "-"
for a log too large to count without reading it whole) and the first user
line. Resume one with panto --resume ID.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return runSessionList(e) },
	})
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
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tMESSAGES\tFIRST MESSAGE")
	var buf []byte // reused from log to log
	for _, s := range list {
		// Each row reads the log's header and its start, never the
		// whole of a large log (summarize). An unreadable log keeps its
		// row, marked, and hides nothing after it.
		err := s.headerErr
		var sum summary
		if err == nil {
			sum, buf, err = summarize(s.path, buf)
		}
		if err != nil {
			// The id names the file; the reason need not repeat its path.
			why := err.Error()
			if rest, ok := strings.CutPrefix(why, "session log "+s.path); ok {
				why = strings.TrimLeft(rest, ": ")
			}
			fmt.Fprintf(tw, "%s\t%s\t?\t(unreadable: %s)\n", s.id, s.modTime.Local().Format("2006-01-02 15:04"), oneLine(why, 160))
			continue
		}
		first := "(none)"
		switch {
		case sum.first != "":
			first = oneLine(sum.first, 60)
		case sum.count < 0:
			first = "(none in the first 1 MiB)"
		}
		// Every message counts, system ones too, as in /session and
		// --at N: the count given to --at shows the whole conversation.
		// A log too large to read whole shows "-" (/session counts it).
		count := "-"
		if sum.count >= 0 {
			count = fmt.Sprint(sum.count)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.header.ID, s.modTime.Local().Format("2006-01-02 15:04"), count, first)
	}
	return tw.Flush()
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
