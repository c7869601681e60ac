package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/cmd/panto/internal/export"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/sessionlog"
)

// The session tree for scripts: panto session tree, fork, label and
// export.

// treeWidth is how wide panto session tree draws the tree.
const treeWidth = 100

// resolveSession turns a SESSION argument into a log path (app.Store.Resolve).
func resolveSession(e *env, arg string) (string, error) {
	st, err := e.store()
	if err != nil {
		return "", err
	}
	return st.Resolve(arg)
}

// sessionTreeCommands are panto session tree, fork, label and export.
func sessionTreeCommands(e *env) []*cobra.Command {
	var asJSON, full bool
	tree := &cobra.Command{
		Use:   "tree [SESSION]",
		Short: "Show a session's tree: branches, labels, prompt changes",
		Long: `Show a session's tree (this directory's latest without SESSION; SESSION is
a log file or a session id): each message with its short id, first words
and label, each change of the system prompt and who made it (⚙), "*" on
the current path and "← here" at the leaf. A tree of more than 2,000
rows folds the runs between the rows that matter (the start, branch
points, branch ends, labels, prompt changes, the rows before the leaf)
into "… N more …" rows; --full shows them all. Continue from an entry with
panto -p TEXT --session FILE --from ID (or /tree ID in a session).
With --json, the rows as JSON for scripts.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			path, err := resolveSession(e, first(args))
			if err != nil {
				return err
			}
			t, err := sessionlog.Scan(path)
			if err != nil {
				return err
			}
			// Sources shortened as the transcript shortens them.
			short := func(s string) string { return describe.ShortSource(s, e.cwd, e.getenv("HOME")) }
			rows, err := treeview.Build(t, treeview.Options{Full: full, Short: short})
			if err != nil {
				return fmt.Errorf("session tree %s: %w", path, err)
			}
			if asJSON {
				return writeTreeJSON(e.stdout, path, t, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintf(e.stdout, "%s: no entries yet\n", path)
				return nil
			}
			return treeview.Write(e.stdout, rows, treeWidth)
		},
	}
	tree.Flags().BoolVar(&asJSON, "json", false, "write the tree as JSON")
	tree.Flags().BoolVar(&full, "full", false, "show every row: a tree of more than 2,000 rows otherwise folds the runs between the rows that matter")

	var at, outPath string
	fork := &cobra.Command{
		Use:   "fork SESSION",
		Short: "Copy a session's path up to an entry into a new session",
		Long: `Write a new session log holding SESSION's path from its start up to the
entry --at names (an id or a unique prefix; the leaf without it): the
same entries, so the prompt and the conversation there are exactly the
original's. Its header names the session and entry it was forked from.
It goes to -o FILE, or beside SESSION; panto --session FILE (or
--resume ID) continues it. SESSION is only read. -o names a new file in
a directory that exists: nothing already there is replaced. The log
appears whole or not at all (a fork stopped midway leaves none).`,
		Args: exactArgs(1, "SESSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := resolveSession(e, args[0])
			if err != nil {
				return err
			}
			dst, id := app.NewPath(filepath.Dir(src), time.Now())
			if outPath != "" {
				dst = outPath
				dirs, err := layers.Resolve(e.getenv, e.cwd)
				if err != nil {
					return err
				}
				if dst, err = app.OutputPath("session fork", absIn(e.cwd, dst), src, dirs, false); err != nil {
					return err
				}
			}
			h, err := app.ForkLog(cmd.Context(), src, at, dst, id)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "forked %s at %s into session %s\n%s\n", h.ParentSession, treeview.Short(h.ParentEntry), h.ID, dst)
			return nil
		},
	}
	fork.Flags().StringVar(&at, "at", "", "fork at entry `ID` (or a unique prefix)")
	fork.Flags().StringVarP(&outPath, "output", "o", "", "write the new log to `FILE`")

	label := &cobra.Command{
		Use:   "label SESSION ID TEXT",
		Short: "Label an entry of a session (an empty TEXT removes it)",
		Long: `Give the entry ID (or a unique prefix) of SESSION the label TEXT, by
appending a label entry to its log; an empty TEXT ("") removes the
entry's label. Labels show in panto session tree and /tree. A session
another panto is running cannot be labelled from here: use /label in it.`,
		Args: exactArgs(3, "SESSION ID TEXT"),
		RunE: func(_ *cobra.Command, args []string) error {
			path, err := resolveSession(e, args[0])
			if err != nil {
				return err
			}
			id, err := app.LabelLog(path, args[1], args[2])
			if err != nil {
				return err
			}
			if strings.TrimSpace(args[2]) == "" {
				fmt.Fprintf(e.stdout, "removed the label of %s\n", treeview.Short(id))
			} else {
				fmt.Fprintf(e.stdout, "labelled %s %q\n", treeview.Short(id), strings.TrimSpace(args[2]))
			}
			return nil
		},
	}

	var format string
	var all, prompt bool
	exp := &cobra.Command{
		Use:   "export [SESSION]",
		Short: "Export a session as one HTML file or as Markdown",
		Long: `Export a session (this directory's latest without SESSION) to read or
share: --format html is one self-contained file (no script, no network)
with replies rendered from their Markdown, tool calls and results folded,
edits as diffs, a sidebar with the session tree and the prompt states,
every change of the system prompt inline with its source and each
message one click from the whole prompt as of it; --format md is
Markdown for pasting into an issue, without the system prompt's tool
guidance unless --prompt is given. The current branch,
or with --all the whole tree. To -o FILE, or stdout. -o writes a new
file or replaces a regular one, whole or not at all; it never replaces
a FIFO, a device, a socket, a lock file, a file in panto's sessions
folder or a file that looks like a session log, and its directory must
exist.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "html" && format != "md" {
				return usageErrorf("session export: --format %q: want html or md", format)
			}
			path, err := resolveSession(e, first(args))
			if err != nil {
				return err
			}
			var target string
			if outPath != "" {
				// Checked before the log is read: a refused -o costs nothing.
				dirs, err := layers.Resolve(e.getenv, e.cwd)
				if err != nil {
					return err
				}
				if target, err = app.OutputPath("session export", absIn(e.cwd, outPath), path, dirs, true); err != nil {
					return err
				}
			}
			log, err := sessionlog.Read(path)
			if err != nil {
				return err
			}
			opt := export.Options{All: all, Prompt: prompt}
			if dirs, err := layers.Resolve(e.getenv, e.cwd); err == nil {
				// The turns' cost: the built-in prices under config's.
				if opt.Prices, err = app.LoadPrices(e.appEnv(e.tell), dirs); err != nil {
					e.tell("warning: the config's [prices] are not applied: " + err.Error())
				}
			}
			render := func(w io.Writer) error {
				if format == "html" {
					return export.HTML(w, log, opt)
				}
				return export.Markdown(w, log, opt)
			}
			if target == "" {
				return render(e.stdout)
			}
			return app.WriteExport(cmd.Context(), target, render)
		},
	}
	exp.Flags().StringVar(&format, "format", "html", "`FORMAT` html or md")
	exp.Flags().BoolVar(&all, "all", false, "export the whole tree, every branch")
	exp.Flags().BoolVar(&prompt, "prompt", false, "with --format md, keep the system prompt's tool guidance (HTML always has it)")
	exp.Flags().StringVarP(&outPath, "output", "o", "", "write to `FILE` instead of stdout")
	completeWords(exp, "format", "html", "md")
	for _, c := range []*cobra.Command{tree, fork, label, exp} {
		c.ValidArgsFunction = completeSessionIDs(e)
	}
	return []*cobra.Command{tree, fork, label, exp}
}

// writeTreeJSON writes panto session tree --json.
func writeTreeJSON(w io.Writer, path string, t *sessionlog.Tree, rows []treeview.Row) error {
	h, err := sessionlog.ReadHeader(path)
	if err != nil {
		return err
	}
	if rows == nil {
		rows = []treeview.Row{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Version  int            `json:"version"`
		Session  string         `json:"session"`
		Path     string         `json:"path"`
		Leaf     string         `json:"leaf"`
		Branches int            `json:"branches"`
		Rows     []treeview.Row `json:"rows"`
	}{1, h.ID, path, t.Leaf(), len(t.Branches()), rows})
}

func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// exactArgs wants n arguments, named by what (for the usage error).
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%swant %s (got %d argument(s))", where(cmd), what, len(args))
		}
		return nil
	}
}

// absIn is path made absolute against dir (the working directory).
func absIn(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}
