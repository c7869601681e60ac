// Command panto is an LLM agent host whose system prompt is conversation
// state: recorded in an append-only session log, sourced from layered
// SYSTEM.md / APPEND_SYSTEM.md files, and exactly reconstructable as of any
// earlier point. See docs/cli.md.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "."
	}
	os.Exit(run(context.Background(), &env{
		stdin:    os.Stdin,
		stdout:   os.Stdout,
		stderr:   os.Stderr,
		getenv:   os.Getenv,
		cwd:      cwd,
		terminal: isTerminal(os.Stdin),
		signals:  sigs,
		maxProcs: runtime.GOMAXPROCS,
	}, os.Args[1:]))
}

// env is everything run takes from the process, so tests can run the CLI
// in-process with their own streams and environment.
type env struct {
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	getenv   func(string) string
	cwd      string
	terminal bool // stdin is a terminal: interactive mode
	// signals delivers Ctrl-C (SIGINT) and SIGTERM; nil never fires.
	signals <-chan os.Signal
	// maxProcs is runtime.GOMAXPROCS; nil (in tests that run the CLI
	// in-process) leaves the process's setting alone.
	maxProcs func(int) int
}

// interruptible returns a context cancelled (with cause errInterrupted)
// when a signal arrives, and a stop function to call when done.
func (e *env) interruptible(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-e.signals:
			cancel(errInterrupted)
		case <-done:
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
