package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const rootUsage = `panto — an agent whose system prompt is conversation state

Usage:
  panto [flags]                 interactive session (when stdin is a terminal)
  panto -p TEXT [flags]         one turn: print the reply and exit
  echo TEXT | panto [flags]     one turn, the prompt read from stdin
  panto prompt [flags]          show the effective system prompt
  panto session list            list this directory's sessions
  panto dirs                    show panto's directories and the files found
  panto ext list|check|trust    extensions: list, test one, trust project ones

Model flags:
  --provider NAME        anthropic, openai or echo (offline; no key needed)
  --model NAME           the provider's model name
  --base-url URL         API root: Anthropic's without /v1, OpenAI's with /v1

Session flags:
  --session FILE         use (or create) this session log
  -c, --continue         continue this directory's most recent session
  --resume ID            resume the session with this id (or unique prefix)
  --no-session           write no session log

Prompt flags:
  -p, --print TEXT       run one turn with TEXT (piped stdin is appended)
  --system-prompt TEXT|FILE         seed the system prompt (beats SYSTEM.md)
  --append-system-prompt TEXT|FILE  add a system block (repeatable)

Extension flags:
  --extension PATH       load this extension binary too (repeatable)
  --no-extensions        load no extension at all

Other:
  --log-level LEVEL      trace, debug, info, warn, error or off (PANTO_LOG_LEVEL)
  --version              print the version

Environment: ANTHROPIC_API_KEY, OPENAI_API_KEY, ANTHROPIC_BASE_URL,
OPENAI_BASE_URL, PANTO_HOME, PANTO_LOG_LEVEL, XDG_DATA_HOME, XDG_CONFIG_HOME,
XDG_STATE_HOME. Exit status: 0 ok, 1 error, 2 usage error, 130 interrupted.
See docs/cli.md.
`

// errUsage marks a command-line mistake: exit status 2.
var errUsage = errors.New("usage")

// usageErrorf reports a command-line mistake.
func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ", ") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

// options are the root command's flags.
type options struct {
	print        string
	printSet     bool
	provider     string
	model        string
	baseURL      string
	session      string
	continueLast bool
	resume       string
	noSession    bool
	systemPrompt string
	appendSystem multi
	logLevel     string
	version      bool
	extensions   multi
	noExtensions bool
}

// sessionFlags registers the flags that pick a session; prompt shares them.
func (o *options) sessionFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.session, "session", "", "")
	fs.BoolVar(&o.continueLast, "c", false, "")
	fs.BoolVar(&o.continueLast, "continue", false, "")
	fs.StringVar(&o.resume, "resume", "", "")
}

// promptFlags registers the flags that shape the system prompt.
func (o *options) promptFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.systemPrompt, "system-prompt", "", "")
	fs.Var(&o.appendSystem, "append-system-prompt", "")
}

// newFlagSet returns a quiet flag set: run prints usage (to stdout for
// -h, never twice) and errors itself.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

func run(ctx context.Context, e *env, args []string) int {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e.sig = &signalRouter{cancel: cancel, exit: e.exit}
	e.sig.route(e.signals)
	code := dispatch(ctx, e, args)
	if c := exitCode(ctx); c >= 0 {
		// A signal ended panto: its status, whatever the command made of
		// the cancellation.
		return c
	}
	return code
}

func dispatch(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "prompt":
			return finish(e, runPrompt(ctx, e, args[1:]))
		case "session", "sessions":
			return finish(e, runSession(ctx, e, args[1:]))
		case "dirs":
			return finish(e, runDirs(e, args[1:]))
		case "ext", "extensions":
			return finish(e, runExt(ctx, e, args[1:]))
		case "help":
			fmt.Fprint(e.stdout, rootUsage)
			return exitOK
		case "version":
			fmt.Fprintln(e.stdout, "panto", version)
			return exitOK
		}
	}
	var o options
	fs := newFlagSet("panto")
	fs.StringVar(&o.print, "p", "", "")
	fs.StringVar(&o.print, "print", "", "")
	fs.StringVar(&o.provider, "provider", "", "")
	fs.StringVar(&o.model, "model", "", "")
	fs.StringVar(&o.baseURL, "base-url", "", "")
	fs.BoolVar(&o.noSession, "no-session", false, "")
	fs.StringVar(&o.logLevel, "log-level", "", "")
	fs.BoolVar(&o.version, "version", false, "")
	fs.Var(&o.extensions, "extension", "")
	fs.BoolVar(&o.noExtensions, "no-extensions", false, "")
	o.sessionFlags(fs)
	o.promptFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, rootUsage)
			return exitOK
		}
		return finish(e, usageErrorf("%v", err))
	}
	if o.version {
		fmt.Fprintln(e.stdout, "panto", version)
		return exitOK
	}
	if fs.NArg() > 0 {
		return finish(e, usageErrorf("unexpected argument %q (did you mean -p %q?)", fs.Arg(0), strings.Join(fs.Args(), " ")))
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "p" || f.Name == "print" {
			o.printSet = true
		}
	})
	return finish(e, runChat(ctx, e, &o))
}

// finish prints err (if any) and returns the exit status for it.
func finish(e *env, err error) int {
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(e.stderr, "panto: %s\nRun 'panto --help' for usage.\n", strings.TrimPrefix(err.Error(), "usage: "))
		return exitUsage
	case errors.Is(err, errInterrupted):
		fmt.Fprintln(e.stderr, "panto: interrupted")
		return 130
	case errors.As(err, new(*stopSignal)):
		fmt.Fprintf(e.stderr, "panto: %v\n", err)
		return exitError // run replaces it with the signal's status
	default:
		fmt.Fprintf(e.stderr, "panto: %v\n", err)
		return exitError
	}
}

// errInterrupted is returned when the user pressed Ctrl-C.
var errInterrupted = errors.New("interrupted")
