package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/sysprompt"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/host/render"
	"github.com/panto-dev/panto/sessionlog"
)

const promptUsage = `Usage: panto prompt [--session FILE | -c | --resume ID] [--at N] [--json]
                   [--system-prompt TEXT|FILE] [--append-system-prompt TEXT|FILE]

Show the effective system prompt:
  - with no session flag, the prompt a fresh session would start with, from
    the current SYSTEM.md / APPEND_SYSTEM.md files and flags, and which layer
    file each block came from;
  - with a session, the prompt recorded in its log;
  - with --at N, the prompt as it was after the log's first N messages
    (N >= 0; panto session list shows how many a log has).

--json prints {"blocks": [{"text": ..., "source" or "message": ...}]}.
`

// promptBlock is one block of `panto prompt --json`.
type promptBlock struct {
	Text string `json:"text"`
	// Source is the file or flag a fresh session's block comes from.
	Source string `json:"source,omitempty"`
	// Message is the 1-based position of the system message a recorded
	// block comes from.
	Message int `json:"message,omitempty"`
}

func runPrompt(_ context.Context, e *env, args []string) error {
	var o options
	at := -1
	asJSON := false
	fset := newFlagSet("panto prompt")
	o.sessionFlags(fset)
	o.promptFlags(fset)
	fset.IntVar(&at, "at", -1, "")
	fset.BoolVar(&asJSON, "json", false, "")
	if err := parseSub(e, fset, args, promptUsage); err != nil {
		return err
	}
	if err := checkPromptFlags(&o); err != nil {
		return err
	}
	dirs, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return err
	}
	fromLog := o.session != "" || o.continueLast || o.resume != ""
	atSet := false
	fset.Visit(func(f *flag.Flag) { atSet = atSet || f.Name == "at" })
	if atSet && at < 0 {
		return usageErrorf("--at %d: want the number of messages, 0 or more", at)
	}
	if at >= 0 && !fromLog {
		return usageErrorf("--at needs a session (--session FILE, -c or --resume ID)")
	}
	var blocks []promptBlock
	if !fromLog {
		vars, err := freshVars(e, dirs)
		if err != nil {
			return err
		}
		resolved, err := sysprompt.Resolve(dirs, sysprompt.Flags{System: o.systemPrompt, Appends: o.appendSystem, Vars: vars})
		if err != nil {
			return err
		}
		for _, b := range resolved {
			blocks = append(blocks, promptBlock{Text: b.Text, Source: b.Source})
		}
	} else {
		path, _, err := pickSession(dirs, &o, time.Now(), e.stderr)
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
		if at >= 0 {
			msgs = msgs[:at]
		}
		for _, b := range conversation.EffectiveSystem(msgs) {
			blocks = append(blocks, promptBlock{Text: b.Text, Message: b.Index + 1})
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
	for i, b := range blocks {
		from := b.Source
		if from == "" {
			from = fmt.Sprintf("message %d", b.Message)
		}
		fmt.Fprintf(e.stdout, "--- block %d · %s ---\n%s\n", i+1, from, strings.TrimRight(b.Text, "\n"))
	}
	if len(blocks) == 0 {
		fmt.Fprintln(e.stdout, "(no system prompt)")
	}
	return nil
}

const sessionUsage = `Usage: panto session list

List this directory's sessions, newest first: id, last change, message
count (system messages included, as panto prompt --at N counts them) and
the first user line. Resume one with panto --resume ID.
`

func runSession(_ context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "list" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(e.stdout, sessionUsage)
			return nil
		}
		fmt.Fprint(e.stderr, sessionUsage)
		return usageErrorf("panto session: want the subcommand list")
	}
	fset := newFlagSet("panto session list")
	if err := parseSub(e, fset, args[1:], sessionUsage); err != nil {
		return err
	}
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

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

const dirsUsage = `Usage: panto dirs

Show panto's directories — PANTO_HOME, the base, user and project layers,
the sessions and log folders — and every file found in the layers.
`

func runDirs(e *env, args []string) error {
	fset := newFlagSet("panto dirs")
	if err := parseSub(e, fset, args, dirsUsage); err != nil {
		return err
	}
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

// parseSub parses a subcommand's flags; -h prints its usage to stdout.
func parseSub(e *env, fset *flag.FlagSet, args []string, usage string) error {
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, usage)
			return errHelpShown
		}
		return usageErrorf("%s: %v", fset.Name(), err)
	}
	if fset.NArg() > 0 {
		return usageErrorf("%s: unexpected argument %q", fset.Name(), fset.Arg(0))
	}
	return nil
}

// errHelpShown ends a command after its help was printed; exit status 0.
var errHelpShown = errors.New("help shown")

// freshVars are the variables a fresh session would render with: the
// built-ins and those of the extensions that would load.
func freshVars(e *env, dirs layers.Dirs) (render.Vars, error) {
	a, err := loadApp(e, &options{})
	if err != nil {
		return nil, err
	}
	defer a.close()
	extVars := map[string]string{}
	cands, err := discover(dirs, nil)
	if err != nil {
		return nil, err
	}
	var errs strings.Builder
	if specs := a.withEnviron(e, withoutDisabled(runnable(cands, e.stderr), a.cfg.DisabledExtensions)); len(specs) > 0 {
		m := extension.Start(context.Background(), specs, &scratch{}, extension.Options{Errors: &errs, Logger: a.logger})
		m.Disable(a.cfg.DisabledExtensions)
		extVars = m.Variables()
		m.Close(context.Background())
	}
	return a.vars(e, extVars), nil
}
