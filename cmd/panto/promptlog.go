package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/internal/linediff"
)

// panto prompt log and panto prompt diff: the prompt's history, read
// from the log alone (package promptlog).

const promptLogLong = `List every change of the system prompt on the current branch of a
session (this directory's latest without a session flag; --all: every
branch, each change once): the entry id, when, who made it (the block's
source), the mode or the section key, the lines of the prompt it added
and removed, and — for a session whose requests go to Anthropic — an
estimate of the cached tokens the change invalidated (what the last
request before it sent and the cache holds: its tools, its system
prompt and its messages, all sent again uncached after a change).
"*" marks the changes on the current path (with --all). --json writes
one JSON object a line, one per change. The log is only read; no
extension starts.`

const promptDiffLong = `Show a unified diff of the system prompt as recorded at two points of a
session (this directory's latest without a session flag), as the model
reads it. A and B are as panto prompt --at takes them: a number of up to
5 digits is the current branch's first N messages, anything else an
entry id (or a unique prefix) on any branch — panto session tree and
panto prompt log show them. Without B, the current leaf. The diff is
whole: nothing is cut.`

// promptHistoryCommands are panto prompt log and panto prompt diff.
func promptHistoryCommands(e *env, root *options) []*cobra.Command {
	var lo options
	all, asJSON := false, false
	logCmd := &cobra.Command{
		Use:   "log [flags]",
		Short: "List every change of the system prompt: who, what, lines, invalidated cache",
		Long:  promptLogLong,
		Example: `  panto prompt log                    this directory's latest session
  panto prompt log --session s.jsonl --all
  panto prompt log -c --json | jq -r 'select(.removed > 0) | .entry'`,
		Args: noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			lo.logLevel = root.logLevel
			path, err := historyLog(e, &lo)
			if err != nil {
				return err
			}
			changes, err := app.PromptLog(path, all)
			if err != nil {
				return fmt.Errorf("prompt log: %w", err)
			}
			if asJSON {
				return writePromptLogJSON(e, changes)
			}
			return writePromptLog(e, path, changes, all)
		},
	}
	lf := logCmd.Flags()
	historyFlags(lf, &lo)
	lf.BoolVar(&all, "all", false, "every branch's changes, each once, not only the current branch's")
	lf.BoolVar(&asJSON, "json", false, `one JSON object a line per change: {"entry", "parent", "time", "message", "source", "who", "mode", "key", "removal", "blocks", "change", "added", "removed", "on_path", "provider", "invalidated_tokens"}`)

	var do options
	diffCmd := &cobra.Command{
		Use:   "diff A [B] [flags]",
		Short: "Diff the system prompt between two points of a session",
		Long:  promptDiffLong,
		Example: `  panto prompt diff 3 12 -c              after the first 3 messages and after 12
  panto prompt diff 6af72378 b33e16f5 --session s.jsonl
  panto prompt diff 6af72378              that entry against the current leaf`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErrorf("%swant A and B: two entry ids or message counts (B defaults to the current leaf)", where(cmd))
			}
			for _, a := range args {
				if strings.TrimSpace(a) == "" || strings.HasPrefix(a, "-") {
					return usageErrorf("%s%q: want a number of messages, 0 or more, or an entry ID", where(cmd), a)
				}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			do.logLevel = root.logLevel
			path, err := historyLog(e, &do)
			if err != nil {
				return err
			}
			b := ""
			if len(args) == 2 {
				b = args[1]
			}
			return runPromptDiff(e, path, args[0], b)
		},
	}
	historyFlags(diffCmd.Flags(), &do)
	return []*cobra.Command{logCmd, diffCmd}
}

// historyFlags registers the flags that pick the session whose history
// is read: those of panto prompt, in words for a log that is only read.
func historyFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVar(&o.session, "session", "", "read the session log `FILE`")
	fs.BoolVarP(&o.continueLast, "continue", "c", false, "this directory's most recent session (the default)")
	fs.StringVar(&o.resume, "resume", "", "the session with this `ID` (or a unique prefix)")
}

// historyLog is the log the session flags name; this directory's latest
// without one. It is only read.
func historyLog(e *env, o *options) (string, error) {
	implicit := o.session == "" && o.resume == "" && !o.continueLast
	if implicit {
		o.continueLast = true
	}
	a, err := app.Load(e.appEnv(e.tell), o.appFlags())
	if err != nil {
		return "", err
	}
	defer a.Close()
	path, _, err := a.Store().Pick(o.pick(), time.Now())
	if implicit && errors.Is(err, app.ErrNothingToContinue) {
		return "", fmt.Errorf("no session in %s to read: give one with --session FILE or --resume ID", e.cwd)
	}
	return path, err
}

// changeJSON is one line of panto prompt log --json.
type changeJSON struct {
	Entry   string `json:"entry"`
	Parent  string `json:"parent,omitempty"`
	Time    string `json:"time"`
	Message int    `json:"message"`
	Source  string `json:"source,omitempty"`
	Who     string `json:"who"`
	Mode    string `json:"mode"`
	Key     string `json:"key,omitempty"`
	Removal bool   `json:"removal,omitempty"`
	Blocks  int    `json:"blocks"`
	Change  string `json:"change"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	OnPath  bool   `json:"on_path"`
	// Provider is the provider of the session's requests at the change;
	// InvalidatedTokens, only for Anthropic, the estimate.
	Provider          string `json:"provider,omitempty"`
	InvalidatedTokens *int   `json:"invalidated_tokens,omitempty"`
}

func writePromptLogJSON(e *env, changes []app.LoggedChange) error {
	enc := json.NewEncoder(e.jsonStdout())
	for _, c := range changes {
		j := changeJSON{Entry: c.Entry, Parent: c.Parent, Time: c.Time.UTC().Format(time.RFC3339Nano), Message: c.Message,
			Source: c.Source, Who: c.Who, Mode: string(c.Mode), Key: c.Key, Removal: c.Removal, Blocks: c.Blocks,
			Change: c.What, Added: c.Added, Removed: c.Removed, OnPath: c.OnPath, Provider: c.Provider}
		if c.Cached {
			n := c.Invalidated
			j.InvalidatedTokens = &n
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}

// writePromptLog writes the changes as a table.
func writePromptLog(e *env, path string, changes []app.LoggedChange, all bool) error {
	if len(changes) == 0 {
		fmt.Fprintf(e.stdout, "%s: no change of the system prompt is recorded\n", termtext.Line(path))
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	head := "ENTRY\tTIME\tMSG\tMODE/KEY\tLINES\tCACHE (EST.)\tWHO\n"
	if all {
		head = "  " + head
	}
	fmt.Fprint(tw, head)
	cached := false
	for _, c := range changes {
		row := ""
		if all {
			row = "  "
			if c.OnPath {
				row = "* "
			}
		}
		cache := "-"
		if c.Cached {
			cached = true
			cache = fmt.Sprintf("~%d", c.Invalidated)
		}
		row += fmt.Sprintf("%s\t%s\t%d\t%s\t+%d −%d\t%s\t%s\n", treeview.Short(c.Entry), c.Time.UTC().Format("2006-01-02 15:04:05"),
			c.Message, termtext.Line(modeKey(c)), c.Added, c.Removed, cache, termtext.Line(who(c)))
		fmt.Fprint(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if cached {
		fmt.Fprintln(e.stdout, "CACHE: estimated tokens of Anthropic's prompt cache the change invalidated (what the last request before it cached: its tools, system prompt and messages); - for another provider")
	}
	return nil
}

// who is the WHO column: the block's source, or who describe names when
// none was recorded.
func who(c app.LoggedChange) string {
	if c.Source == "" {
		return c.Who
	}
	return c.Source
}

// modeKey is the MODE/KEY column: the mode, or for a section its key
// (and whether the change removes it); more blocks than one say so.
func modeKey(c app.LoggedChange) string {
	s := string(c.Mode)
	if c.Key != "" {
		s = "section " + c.Key
		if c.Mode == "replace" {
			s = "replace, section " + c.Key
		}
		if c.Removal {
			s += " (removed)"
		}
	}
	if c.Blocks > 1 {
		s += fmt.Sprintf(" +%d blocks", c.Blocks-1)
	}
	return s
}

// runPromptDiff writes the diff of the prompt at a and b (the leaf when
// b is "").
func runPromptDiff(e *env, path, a, b string) error {
	from, to, hunks, err := app.PromptDiff(path, a, b)
	if err != nil {
		return fmt.Errorf("prompt diff: %w", err)
	}
	if len(hunks) == 0 {
		fmt.Fprintf(e.stderr, "panto: prompt diff: the system prompt is the same at %s and at %s\n", termtext.Line(point(from)), termtext.Line(point(to)))
		return nil
	}
	fmt.Fprintf(e.stdout, "--- the prompt at %s\n+++ the prompt at %s\n", termtext.Line(point(from)), termtext.Line(point(to)))
	fmt.Fprint(e.stdout, linediff.FormatAll(hunks))
	return nil
}

// point names one end of a prompt diff in its header.
func point(p app.PromptPoint) string {
	switch {
	case p.Count && p.Entry == "":
		return "0 messages (before the first: no prompt)"
	case p.Count:
		return fmt.Sprintf("%s messages (entry %s)", p.Ref, p.Entry)
	case p.Ref == "":
		return fmt.Sprintf("the current leaf, entry %s (message %d)", p.Entry, p.Message)
	}
	return fmt.Sprintf("entry %s (message %d)", p.Entry, p.Message)
}
