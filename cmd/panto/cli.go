package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/signals"
	"github.com/panto-dev/panto/host/provider"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// The CLI is built on cobra (as gh, kubectl and crush are): help, usage
// errors, suggestions for a mistyped command and shell completion all
// come from the flag and command definitions below, so nothing written by
// hand can drift from them.

// errUsage marks a command-line mistake: exit status 2. The app layer's
// mistakes of the flags' values are the same error.
var errUsage = app.ErrUsage

// usageErrorf reports a command-line mistake.
func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// options are the flags of the root command and of the subcommands that
// share them.
type options struct {
	print        string
	printSet     bool
	mode         string
	provider     string
	model        string
	baseURL      string
	session      string
	continueLast bool
	resume       string
	from         string
	noSession    bool
	systemPrompt string
	appendSystem []string
	logLevel     string
	extensions   []string
	noExtensions bool
	plain        bool
	permMode     string
	allow        []string
	// first is the message given as arguments (panto "TEXT"): the
	// interactive session's first, or print mode's prompt.
	first string
}

// appFlags are the flags as the app layer takes them.
func (o *options) appFlags() app.Flags {
	return app.Flags{
		Provider: o.provider, Model: o.model, BaseURL: o.baseURL, LogLevel: o.logLevel,
		SystemPrompt: o.systemPrompt, AppendSystem: o.appendSystem,
		Extensions: o.extensions, NoExtensions: o.noExtensions,
		PermissionMode: o.permMode, Allow: o.allow,
		Log: o.pick(),
	}
}

// pick is the session flags' choice of log.
func (o *options) pick() app.Pick {
	return app.Pick{Session: o.session, Continue: o.continueLast, Resume: o.resume, NoSession: o.noSession, From: o.from}
}

// sessionFlags registers the flags that pick a session.
func (o *options) sessionFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.session, "session", "", "record the session in `FILE` (resumed when it exists)")
	fs.BoolVarP(&o.continueLast, "continue", "c", false, "continue this directory's most recent session")
	fs.StringVar(&o.resume, "resume", "", "resume the session with this `ID` (or a unique prefix)")
}

// fromFlag registers --from, which continues a session from an entry.
func (o *options) fromFlag(fs *pflag.FlagSet) {
	fs.StringVar(&o.from, "from", "", "continue the session from entry `ID` (or a unique prefix; see panto session tree) as a new branch")
}

// promptFlags registers the flags that shape the system prompt.
func (o *options) promptFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.systemPrompt, "system-prompt", "", "seed the system prompt with `TEXT|FILE`, beating every SYSTEM.md")
	fs.StringArrayVar(&o.appendSystem, "append-system-prompt", nil, "add the system block `TEXT|FILE` (repeatable)")
}

// permissionFlags registers the flags of the permission policy.
func (o *options) permissionFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.permMode, "permission-mode", "", "decide the tool calls no rule matches by `MODE`: default, accept-edits, plan or bypass (beats config and PANTO_PERMISSION_MODE)")
	fs.StringArrayVar(&o.allow, "allow", nil, "allow the tool calls `RULE` matches, such as 'bash(go test *)', for this run (repeatable; see docs/permissions.md)")
}

// extensionFlags registers the flags that choose the extensions.
func (o *options) extensionFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.extensions, "extension", nil, "load the extension binary at `PATH` too (repeatable)")
	fs.BoolVar(&o.noExtensions, "no-extensions", false, "load no extension at all")
}

const rootLong = `panto is an agent whose system prompt is conversation state: recorded in
an append-only session log, sourced from layered SYSTEM.md and
APPEND_SYSTEM.md files, and exactly reconstructable as of any earlier
point (panto prompt --at N).

With stdin a terminal, panto runs an interactive session; with -p, or a
prompt piped on stdin, it runs one turn and prints the reply.

Environment: ANTHROPIC_API_KEY, OPENAI_API_KEY, ANTHROPIC_BASE_URL,
OPENAI_BASE_URL, PANTO_HOME, PANTO_LOG_LEVEL, PANTO_PERMISSION_MODE, XDG_DATA_HOME,
XDG_CONFIG_HOME, XDG_STATE_HOME.
Exit status: 0 ok, 1 error, 2 usage error, 130 Ctrl-C, 143 SIGTERM,
129 SIGHUP. See docs/cli.md.`

const rootExample = `  panto                                   interactive session
  panto -p "What does this project do?"    one turn, the reply on stdout
  git diff | panto -p "Review this:"       piped stdin is appended
  panto -c                                continue this directory's last session
  panto -c -p "again" --from 3fa2c1d0     continue from an earlier entry, as a new branch
  panto --provider echo -p hi              offline: no key, no network
  panto -p hi --mode json                  every event as a JSON line`

// newRoot builds the command tree; ctx is the root context of the run.
func newRoot(ctx context.Context, e *env) *cobra.Command {
	var o options
	root := &cobra.Command{
		Use:           "panto [flags] [MESSAGE]",
		Short:         "An agent whose system prompt is conversation state",
		Long:          rootLong,
		Example:       rootExample,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          rootArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.printSet = cmd.Flags().Changed("print")
			o.first = strings.Join(args, " ")
			return runChat(ctx, e, &o)
		},
	}
	root.SetVersionTemplate("panto {{.Version}}\n")
	root.SuggestionsMinimumDistance = 2
	f := root.Flags()
	f.StringVarP(&o.print, "print", "p", "", "run one turn with `TEXT`, print the reply and exit (piped stdin is appended)")
	f.StringVar(&o.mode, "mode", "text", "what print mode writes: `MODE` text (the reply) or json (every event as a JSON line)")
	f.StringVar(&o.provider, "provider", "", "the provider, by `NAME`: anthropic, openai or echo (offline; needs no key)")
	f.StringVar(&o.model, "model", "", "the model, by the provider's `NAME` for it")
	f.StringVar(&o.baseURL, "base-url", "", "the API root `URL`: Anthropic's without /v1, OpenAI's with it")
	f.BoolVar(&o.noSession, "no-session", false, "write no session log")
	f.BoolVar(&o.plain, "plain", false, "run the interactive session as a line loop, not full screen")
	o.sessionFlags(f)
	o.fromFlag(f)
	o.promptFlags(f)
	o.extensionFlags(f)
	o.permissionFlags(f)
	f.SortFlags = false
	root.PersistentFlags().StringVar(&o.logLevel, "log-level", "", "what panto's log file keeps: `LEVEL` trace, debug, info, warn, error or off")

	completeWords(root, "provider", provider.Anthropic, provider.OpenAI, provider.Echo)
	completeWords(root, "mode", "text", "json")
	completeWords(root, "permission-mode", "default", "accept-edits", "plan", "bypass")
	completeWords(root, "log-level", "trace", "debug", "info", "warn", "error", "off")
	_ = root.RegisterFlagCompletionFunc("resume", completeSessionIDs(e))

	root.AddCommand(promptCommand(ctx, e, &o), requestCommand(ctx, e, &o), sessionCommand(ctx, e, &o), dirsCommand(e), skillsCommand(e), extCommand(ctx, e, &o), mcpCommand(ctx, e, &o), trustCommand(e), acpCommand(ctx, e, &o),
		&cobra.Command{
			Use:   "version",
			Short: "Print panto's version",
			Args:  noArgs,
			Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), "panto", version) },
		})
	root.SetFlagErrorFunc(flagError)
	for _, c := range root.Commands() {
		c.SuggestionsMinimumDistance = 2
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	return root
}

// rootArgs takes the arguments as the first message (panto "TEXT",
// or panto fix the tests), except a first word that looks like a
// mistyped command: that gets a suggestion, and the way to send it
// anyway (after --, no word is taken for a command).
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 || cmd.ArgsLenAtDash() == 0 {
		return nil
	}
	if s := mistypedCommand(cmd, args[0]); s != "" {
		return usageErrorf("unknown command %q: did you mean `panto %s`? (to send it as a message: panto -- %s)", args[0], s, strings.Join(args, " "))
	}
	return nil
}

// mistypedCommand is the subcommand of cmd the word w looks like a typo
// of, or "": one edit away, two for a word of six letters or more, or
// the start of one (three letters at least). Any other word — "first",
// "test" — starts a message, though cobra's two edits would take them
// for dirs and trust.
func mistypedCommand(cmd *cobra.Command, w string) string {
	if strings.ContainsFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) {
		return "" // not a word a command is named with
	}
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		d := levenshtein(w, c.Name())
		if d <= 1 || d == 2 && len(w) >= 6 || len(w) >= 3 && strings.HasPrefix(c.Name(), w) {
			return c.Name()
		}
	}
	return ""
}

// where names cmd at the start of an error message ("prompt: "), or
// nothing for the root (finish says "panto: ").
func where(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return ""
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") + ": "
}

// noArgs refuses arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%sunexpected argument %q", where(cmd), args[0])
	}
	return nil
}

// flagError makes a flag mistake a usage error, with the nearest flag's
// name when one is close.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return usageErrorf("%s%s", where(cmd), msg)
	}
	best, dist := "", 3 // at most two edits away, or a prefix
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		d := levenshtein(name, f.Name)
		if strings.HasPrefix(f.Name, name) {
			d = 1
		}
		if d < dist {
			best, dist = f.Name, d
		}
	})
	if best != "" {
		return usageErrorf("%sunknown flag --%s: did you mean --%s?", where(cmd), name, best)
	}
	return usageErrorf("%sunknown flag --%s (see %s --help)", where(cmd), name, cmd.CommandPath())
}

// levenshtein is the edit distance of a and b.
func levenshtein(a, b string) int { return app.Distance(a, b) }

// completeWords completes a flag's value from a fixed list.
func completeWords(cmd *cobra.Command, flag string, words ...string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp))
}

func run(ctx context.Context, e *env, args []string) int {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e.sig = signals.NewRouter(cancel, e.exit)
	e.sig.Route(e.signals)
	root := newRoot(ctx, e)
	root.SetArgs(args)
	code := finish(e, root.ExecuteContext(ctx))
	if c := signals.ExitCode(ctx); c >= 0 {
		// A signal ended panto: its status, whatever the command made of
		// the cancellation.
		return c
	}
	return code
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// finish prints err (if any) and returns the exit status for it.
func finish(e *env, err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(e.stderr, "panto: %s\nRun 'panto --help' for usage.\n", strings.TrimPrefix(err.Error(), "usage: "))
		return exitUsage
	case errors.Is(err, signals.ErrInterrupted):
		fmt.Fprintln(e.stderr, "panto: interrupted")
		return 130
	case errors.As(err, new(*signals.Stopped)):
		fmt.Fprintf(e.stderr, "panto: %v\n", err)
		return exitError // run replaces it with the signal's status
	default:
		fmt.Fprintf(e.stderr, "panto: %v\n", err)
		return exitError
	}
}
