package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/export"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// The session tree in the line loop (/tree, /label, /fork) and for
// scripts (panto session tree, fork, label, export).

// treeWidth is how wide the line views draw the tree.
const treeWidth = 100

// tree shows the session tree (/tree), or moves to an entry of it
// (/tree ID, with --summary or --no-summary).
func (c *chat) tree(ctx context.Context, args string, out io.Writer) error {
	a, err := treeview.ParseArgs(args, c.app.cfg.BranchSummary)
	if err != nil {
		return err
	}
	ref, summarize, opt := a.Ref, a.Summarize, treeview.Options{Full: a.Full}
	t, err := c.sess.Tree()
	if err != nil {
		return fmt.Errorf("/tree: %w", err)
	}
	if ref == "" {
		rows, err := treeview.Build(t, opt)
		if err != nil {
			return fmt.Errorf("/tree: %w", err)
		}
		if err := treeview.Write(out, rows, treeWidth); err != nil {
			return err
		}
		fmt.Fprintln(out, "/tree ID continues from an entry (* marks the current path, ⚙ a change of the prompt)")
		return nil
	}
	id, err := t.Resolve(ref)
	if err != nil {
		return fmt.Errorf("/tree %s: %w", ref, err)
	}
	// A reply's row holds its tool calls' results: continue after them.
	// Going back to a message of yours means asking it again: continue
	// from before it, and show what you typed in it.
	id, retype := treeview.Jump(t, id)
	ctx, stop := c.e.sig.foreground(ctx)
	defer stop()
	res, err := c.sess.MoveTo(ctx, id, host.MoveOptions{Summarize: summarize})
	if errors.Is(err, host.ErrAlreadyThere) {
		fmt.Fprintf(out, "already at %s\n", treeview.Short(id))
		return nil
	}
	if err != nil {
		return fmt.Errorf("/tree %s: %w", ref, err)
	}
	fmt.Fprintf(out, "moved to %s; the next message continues from there", treeview.Short(res.To))
	if res.Left > 0 {
		fmt.Fprintf(out, " (the branch left, %d message(s), stays in the log: /tree shows it)", res.Left)
	}
	fmt.Fprintln(out)
	if res.Summary != "" {
		fmt.Fprintf(out, "branch summary recorded: %s\n", oneLine(res.Summary, 200))
	}
	if retype != "" {
		fmt.Fprintf(out, "your message there was:\n  %s\n", strings.ReplaceAll(strings.TrimRight(retype, "\n"), "\n", "\n  "))
	}
	return nil
}

// label labels an entry (/label [ID] TEXT): the row of the current leaf
// without an ID. An empty TEXT removes the label.
func (c *chat) label(_ context.Context, args string, out io.Writer) error {
	t, err := c.sess.Tree()
	if err != nil {
		return fmt.Errorf("/label: %w", err)
	}
	ref, text := splitRef(t, args)
	if ref == "" {
		if ref, err = hereRow(t); err != nil {
			return fmt.Errorf("/label: %w", err)
		}
	}
	id, err := c.sess.Label(ref, text)
	if err != nil {
		return fmt.Errorf("/label: %w", err)
	}
	if text == "" {
		fmt.Fprintf(out, "removed the label of %s\n", treeview.Short(id))
		return nil
	}
	fmt.Fprintf(out, "labelled %s %q\n", treeview.Short(id), text)
	return nil
}

// splitRef splits "/label" arguments: a first word that names an entry
// is its ref, the rest the text.
func splitRef(t *sessionlog.Tree, args string) (ref, text string) {
	first, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	if first != "" && len(first) >= 4 {
		if _, err := t.Resolve(first); err == nil {
			return first, strings.TrimSpace(rest)
		}
	}
	return "", strings.TrimSpace(args)
}

// hereRow is the entry of the tree view's row of the current leaf: the
// message (or summary) the leaf is at, not a move or a label after it.
func hereRow(t *sessionlog.Tree) (string, error) {
	rows, err := treeview.Build(t, treeview.Options{})
	if err != nil {
		return "", err
	}
	for _, r := range rows {
		if r.Here {
			return r.ID, nil
		}
	}
	return "", errors.New("the session has no entries yet")
}

// fork copies the path up to an entry (the current leaf without one) to
// a new session, and switches to it (/fork [ID]).
func (c *chat) fork(ctx context.Context, args string, out io.Writer) error {
	info := c.sess.Info()
	if info.Path == "" {
		return fmt.Errorf("/fork: %w", host.ErrNotRecorded)
	}
	ref := strings.TrimSpace(args)
	if t, err := c.sess.Tree(); err == nil && ref != "" {
		if full, err := t.Resolve(ref); err == nil {
			ref = treeview.ContinueAt(t, full) // a reply's fork holds its results
		}
	}
	id := sessionlog.NewID()
	dst := newSessionPath(filepath.Dir(info.Path), id, nowFunc())
	h, err := host.ForkContext(ctx, info.Path, ref, dst, id)
	if err != nil {
		return fmt.Errorf("/fork: %w", err)
	}
	// The fork is a session of its own: open it in this one's place, as
	// a resume (the extensions see session_end, then session_start).
	if err := c.switchTo(ctx, dst); err != nil {
		return fmt.Errorf("/fork: the fork was written to %s, but opening it failed: %w (resume it with panto --session %s)", dst, err, dst)
	}
	fmt.Fprintf(out, "forked at %s into session %s\nlog %s\n(the session you left is %s: panto --resume %s)\n",
		treeview.Short(h.ParentEntry), h.ID, dst, info.ID, info.ID)
	return nil
}

// switchTo closes the session and opens the log at path in its place,
// with the same flags and extensions (they see session_end, then
// session_start). When path cannot be opened, the session left is opened
// again, so the loop always has one.
func (c *chat) switchTo(ctx context.Context, path string) error {
	left := c.sess.Info().Path
	if left == "" {
		// A session not recorded cannot be opened again: open the other
		// first, and close this one only once it has.
		sess, err := c.reopen(ctx, path)
		if err != nil {
			return err
		}
		if err := c.sess.Close(ctx); err != nil {
			fmt.Fprintf(c.e.stderr, "panto: close session: %v\n", err)
		}
		<-c.drained
		c.attach(sess)
		c.once.Do(c.follow)
		return nil
	}
	if err := c.sess.Close(ctx); err != nil {
		fmt.Fprintf(c.e.stderr, "panto: close session: %v\n", err)
	}
	<-c.drained
	sess, err := c.reopen(ctx, path)
	if err != nil && left != "" {
		if back, berr := c.reopen(ctx, left); berr == nil {
			sess = back
		} else {
			return fmt.Errorf("%w; reopening %s failed too: %v", err, left, berr)
		}
	}
	if sess != nil {
		c.attach(sess)
		c.once.Do(c.follow)
	}
	return err
}

// resume lists this directory's sessions (/resume), or switches to one
// of them by its number in the list or its id (/resume N|ID).
func (c *chat) resume(ctx context.Context, args string, out io.Writer) error {
	list, err := dirSessions(c.app.dirs, warnOnce(c.e.stderr))
	if err != nil {
		return fmt.Errorf("/resume: %w", err)
	}
	sums := summaries(list)
	current := c.sess.Info().Path
	if args = strings.TrimSpace(args); args == "" {
		if len(list) == 0 {
			fmt.Fprintln(out, "no sessions here yet")
			return nil
		}
		for i, s := range list {
			mark := " "
			if s.path == current {
				mark = "*"
			}
			if sums[i].err != nil {
				fmt.Fprintf(out, "%s %2d. %s  (unreadable: %s)\n", mark, i+1, s.id, oneLine(sums[i].err.Error(), 80))
				continue
			}
			sum := sums[i].sum
			first := sum.FirstUserText
			if first == "" {
				first = "(no message yet)"
			}
			line := fmt.Sprintf("%s %2d. %s  %s  %d msgs", mark, i+1, treeview.Short(sum.Header.ID), sum.LastTime.Local().Format("2006-01-02 15:04"), sum.Messages)
			if sum.Branches > 1 {
				line += fmt.Sprintf(", %d branches", sum.Branches)
			}
			fmt.Fprintf(out, "%s  %s\n", line, oneLine(first, 60))
		}
		fmt.Fprintln(out, "/resume N (or an id) switches to a session; * is this one")
		return nil
	}
	var path string
	if n, err := strconv.Atoi(args); err == nil {
		if n < 1 || n > len(list) {
			return fmt.Errorf("/resume %d: want 1 to %d (see /resume)", n, len(list))
		}
		path = list[n-1].path
	} else if path, err = findSession(c.app.dirs, args, warnOnce(c.e.stderr)); err != nil {
		return errors.New("/" + strings.TrimPrefix(err.Error(), "--"))
	}
	if path == current {
		fmt.Fprintln(out, "already in that session")
		return nil
	}
	if err := c.switchTo(ctx, path); err != nil {
		return fmt.Errorf("/resume: %w", err)
	}
	info := c.sess.Info()
	fmt.Fprintf(out, "resumed session %s (%d messages)\nlog %s\n", info.ID, c.sess.MessageCount(), info.Path)
	return nil
}

// resolveSession turns a SESSION argument into a log path: a file, or a
// session id (or a unique prefix of one); "" is this directory's most
// recent session.
func resolveSession(e *env, arg string) (string, error) {
	dirs, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return "", err
	}
	if arg == "" {
		list, err := dirSessions(dirs, warnOnce(e.stderr))
		if err != nil {
			return "", err
		}
		if p, _ := latestSession(list, func(s sessionFile) {
			if s.headerErr == nil {
				fmt.Fprintf(e.stderr, "panto: warning: skipping %s: %s\n", s.path, headerOnlyWhy)
			}
		}); p != "" {
			return p, nil
		}
		return "", fmt.Errorf("no session in %s (give SESSION: a log file or a session id)", dirs.CWD)
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.cwd, p)
	}
	if st, err := os.Stat(p); err == nil {
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("%s: %s, want a session log file", arg, layers.Kind(st.Mode()))
		}
		return p, nil
	}
	if strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".jsonl") {
		return "", fmt.Errorf("%s: no such session log", arg)
	}
	path, err := findSession(dirs, arg, warnOnce(e.stderr))
	if err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), "--resume "))
	}
	return path, nil
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
			rows, err := treeview.Build(t, treeview.Options{Full: full})
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
			id, dst := sessionlog.NewID(), outPath
			if dst == "" {
				dst = newSessionPath(filepath.Dir(src), id, nowFunc())
			} else {
				dirs, err := layers.Resolve(e.getenv, e.cwd)
				if err != nil {
					return err
				}
				if dst, err = outputPath("session fork", absIn(e.cwd, dst), src, dirs, false); err != nil {
					return err
				}
			}
			// What a fork killed outright left there (never a log: see
			// host.Fork) goes first.
			_, _ = atomicfile.RemoveStale(filepath.Dir(dst))
			h, err := host.ForkContext(cmd.Context(), src, at, dst, id)
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
			id, err := labelLog(path, args[1], args[2])
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
	var all bool
	exp := &cobra.Command{
		Use:   "export [SESSION]",
		Short: "Export a session as one HTML file or as Markdown",
		Long: `Export a session (this directory's latest without SESSION) to read or
share: --format html is one self-contained file (no script, no network)
with tool calls folded and every change of the system prompt inline with
its source, each message one click from the whole prompt as of it;
--format md is Markdown for pasting into an issue. The current branch,
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
				if target, err = outputPath("session export", absIn(e.cwd, outPath), path, dirs, true); err != nil {
					return err
				}
			}
			log, err := sessionlog.Read(path)
			if err != nil {
				return err
			}
			render := func(w io.Writer) error {
				if format == "html" {
					return export.HTML(w, log, export.Options{All: all})
				}
				return export.Markdown(w, log, export.Options{All: all})
			}
			if target == "" {
				return render(e.stdout)
			}
			return writeExport(cmd.Context(), target, render)
		},
	}
	exp.Flags().StringVar(&format, "format", "html", "`FORMAT` html or md")
	exp.Flags().BoolVar(&all, "all", false, "export the whole tree, every branch")
	exp.Flags().StringVarP(&outPath, "output", "o", "", "write to `FILE` instead of stdout")
	completeWords(exp, "format", "html", "md")
	for _, c := range []*cobra.Command{tree, fork, label, exp} {
		c.ValidArgsFunction = completeSessionIDs(e)
	}
	return []*cobra.Command{tree, fork, label, exp}
}

// labelLog appends a label entry to the log at path: it takes the log's
// writer, so it fails (ErrLocked) while a session runs on it.
func labelLog(path, ref, text string) (string, error) {
	text = strings.TrimSpace(conversation.ValidText(text))
	if strings.ContainsAny(text, "\r\n") {
		return "", errors.New("session label: a label is one line")
	}
	w, log, err := sessionlog.Open(path)
	if err != nil {
		return "", fmt.Errorf("session label: %w", err)
	}
	defer w.Close()
	id, err := log.Tree().Resolve(strings.TrimSpace(ref))
	if err != nil {
		return "", fmt.Errorf("session label %s: %w", path, err)
	}
	if _, err := w.Append(sessionlog.LabelEntry(id, text)); err != nil {
		return "", fmt.Errorf("session label: %w", err)
	}
	return id, w.Close()
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
