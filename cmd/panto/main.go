// Command panto is an LLM agent host whose system prompt is conversation
// state: recorded in an append-only session log, sourced from layered
// SYSTEM.md / APPEND_SYSTEM.md files, and exactly reconstructable as of any
// earlier point. See docs/cli.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/keys"
	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
	"github.com/panto-dev/panto/cmd/panto/internal/signals"
)

func main() {
	// First, before anything is started: no process panto starts can
	// read a provider key (internal/keys).
	keys, keyErr := keys.Protect()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// A reader of stdout that goes away (panto -p hi | head -c 10) must
	// not kill panto before the reply is recorded: with SIGPIPE ignored a
	// write returns EPIPE, which stdoutWriter takes as the reader gone.
	signal.Ignore(syscall.SIGPIPE)
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "."
	}
	// At a terminal, stdout and stderr sanitize what is written
	// (streams.go).
	s := newStreams(os.Stdout, os.Stderr)
	if keyErr != nil {
		fmt.Fprintf(s.stderr, "panto: %v\n", keyErr)
	}
	code := run(context.Background(), &env{
		stdin:     os.Stdin,
		stdout:    s.stdout,
		stderr:    s.stderr,
		rawStdout: s.rawStdout,
		termOut:   s.termOut,
		getenv:    keys.Getenv,
		environ:   keys.Environ,
		cwd:       cwd,
		terminal:  isTerminal(os.Stdin),
		ttyOut:    isTerminal(os.Stdout),
		signals:   sigs,
		exit:      os.Exit,
		maxProcs:  runtime.GOMAXPROCS,
	}, os.Args[1:])
	s.flush()
	os.Exit(code)
}

// env is everything run takes from the process, so tests can run the CLI
// in-process with their own streams and environment.
type env struct {
	stdin io.Reader
	// stdout and stderr are what panto writes to; at a terminal they
	// sanitize every byte (termtext), so outside text never drives it.
	stdout io.Writer
	stderr io.Writer
	// rawStdout is stdout without the sanitizer, set when stdout is a
	// terminal (nil: stdout is raw already): for output made safe its own
	// way (JSON, through jsonStdout).
	rawStdout io.Writer
	// termOut is the terminal stdout is, for the full-screen UI, which
	// writes its own styling and sanitizes the text it draws; nil when
	// stdout is not a terminal (and in tests).
	termOut *os.File
	getenv  func(string) string
	// environ is the whole environment, passed on to extensions (less the
	// provider keys); nil means os.Environ.
	environ  func() []string
	cwd      string
	terminal bool // stdin is a terminal: interactive mode
	ttyOut   bool // stdout is a terminal too: the full-screen UI (unless --plain)
	// signals delivers SIGINT (Ctrl-C), SIGTERM and SIGHUP; nil never
	// fires.
	signals <-chan os.Signal
	// exit ends the process at once (a second signal while stopping); nil
	// in tests that run the CLI in-process.
	exit func(code int)
	// sig routes the signals; run sets it.
	sig *signals.Router
	// maxProcs is runtime.GOMAXPROCS; nil (in tests that run the CLI
	// in-process) leaves the process's setting alone.
	maxProcs func(int) int
}

// stdoutWriter is stdout that outlives its reader: once a write fails
// with EPIPE (the reader went away), it drops what is written, so panto
// goes on and records the reply instead of dying or failing the turn.
type stdoutWriter struct {
	w    io.Writer
	gone atomic.Bool
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	if s.gone.Load() {
		return len(p), nil
	}
	n, err := s.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		s.gone.Store(true)
		return len(p), nil
	}
	return n, err
}

// appEnv is the process as the app layer takes it, with notify told each
// notice.
func (e *env) appEnv(notify func(string)) app.Env {
	environ := e.environ
	if environ == nil {
		environ = os.Environ
	}
	return app.Env{Getenv: e.getenv, Environ: environ, CWD: e.cwd, MaxProcs: e.maxProcs, Version: version, Notify: notify}
}

// tell writes a notice on stderr, as the line front ends and the
// subcommands show them: "panto: NOTICE".
func (e *env) tell(notice string) { fmt.Fprintf(e.stderr, "panto: %s\n", notice) }

// lineOptions are the line front ends' streams.
func (e *env) lineOptions() lineloop.Options {
	return lineloop.Options{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, JSON: e.jsonStdout(), Terminal: e.rawStdout, Signals: e.sig, Version: version}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
