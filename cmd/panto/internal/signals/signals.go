// Package signals routes the signals panto handles — SIGINT (Ctrl-C),
// SIGTERM and SIGHUP — to what runs: the foreground's Ctrl-C handler (a
// turn, the line loop's prompt, the full-screen UI), or the end of panto.
// package main makes one Router for the process; the front ends take
// Ctrl-C through it (Foreground, OnInterrupt) and package main turns the
// cause it leaves in the root context into the exit status (ExitCode).
// It holds no session and prints nothing but the last line before an
// exit that cannot wait.
package signals

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// What panto does on each signal (docs/cli.md, "Signals"):
//
//   - SIGTERM and SIGHUP end panto, whatever it is doing: the root context
//     is cancelled with a *Stopped cause, a request in flight is
//     abandoned (nothing half-received is recorded), running tool calls
//     get "interrupted" results, extensions are stopped (each within its
//     deadline) and panto exits with 128+signal.
//   - SIGINT (Ctrl-C) interrupts what runs in the foreground: a turn, or
//     the interactive prompt (a reminder of how to leave; a second one in
//     a row leaves). When nothing has taken it (starting up, a
//     subcommand), or a second one comes while a turn is still stopping,
//     it ends panto too, with exit status 130.
//   - A second such signal while panto is already stopping, or the stop
//     taking longer than StopGrace, ends the process at once: every
//     recorded entry is already on disk, and the kernel releases the
//     session lock and kills the extensions (Pdeathsig).

// ErrInterrupted is the cause of what the user stopped with Ctrl-C: a
// command that returns it (wrapped) ends panto with exit status 130.
var ErrInterrupted = errors.New("interrupted")

// Stopped is the cause of the root context when a signal ends panto; its
// exit status is 128 + the signal's number (Code).
type Stopped struct{ sig os.Signal }

func (s *Stopped) Error() string { return "stopped by " + signalName(s.sig) }

// Code is the exit status for the signal: 128 + its number (1 for a
// signal without one).
func (s *Stopped) Code() int {
	if n, ok := s.sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case os.Interrupt:
		return "SIGINT"
	}
	return sig.String()
}

// StopGrace bounds how long panto takes to stop cleanly after a signal
// ends it; then it exits at once.
const StopGrace = 5 * time.Second

// Router takes the signals panto handles (see above) and routes them.
type Router struct {
	cancel context.CancelCauseFunc
	// exit ends the process at once; nil (in-process tests) never does.
	exit func(code int)

	mu       sync.Mutex
	onInt    func() // the foreground's Ctrl-C handler; nil: Ctrl-C ends panto
	stopping bool
}

// NewRouter returns a router that ends panto by cancelling the root
// context with cancel, and, when that does not end it in time, by exit
// (nil never exits: tests that run the CLI in-process).
func NewRouter(cancel context.CancelCauseFunc, exit func(code int)) *Router {
	return &Router{cancel: cancel, exit: exit}
}

// Route starts delivering sigs; it returns at once. A nil channel never
// delivers.
func (r *Router) Route(sigs <-chan os.Signal) {
	if sigs == nil {
		return
	}
	go func() {
		for sig := range sigs {
			r.deliver(sig)
		}
	}()
}

func (r *Router) deliver(sig os.Signal) {
	r.mu.Lock()
	onInt := r.onInt
	if sig == os.Interrupt && onInt != nil && !r.stopping {
		r.mu.Unlock()
		onInt()
		return
	}
	r.mu.Unlock()
	r.Stop(sig)
}

// Stop ends panto as sig does when nothing in the foreground takes it:
// the root context is cancelled, and the process ends at once after
// StopGrace or on a second call.
func (r *Router) Stop(sig os.Signal) {
	r.mu.Lock()
	stopping := r.stopping
	r.stopping = true
	r.mu.Unlock()
	cause := &Stopped{sig}
	if sig == os.Interrupt {
		cause = nil
	}
	if stopping {
		// A second signal while stopping: the user means now.
		r.exitNow(cause)
		return
	}
	if cause == nil {
		r.cancel(ErrInterrupted)
	} else {
		r.cancel(cause)
	}
	time.AfterFunc(StopGrace, func() { r.exitNow(cause) })
}

// exitNow ends the process with the status of cause (nil: Ctrl-C).
func (r *Router) exitNow(cause *Stopped) {
	if r.exit == nil {
		return
	}
	code := 130
	what := "interrupted"
	if cause != nil {
		code, what = cause.Code(), cause.Error()
	}
	fmt.Fprintf(os.Stderr, "panto: %s; exiting without waiting for the rest of the shutdown\n", what)
	r.exit(code)
}

// Foreground returns a context that Ctrl-C cancels (cause ErrInterrupted)
// while it is in use, and a stop function to call when done. Signals that
// end panto cancel it too, through ctx. A second Ctrl-C while it is in
// use means what runs did not stop (an extension asking again and again,
// a hook that hangs): it ends panto, as a Ctrl-C with nothing in the
// foreground does.
func (r *Router) Foreground(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	var n atomic.Int32
	r.mu.Lock()
	prev := r.onInt
	r.onInt = func() {
		if n.Add(1) == 1 {
			cancel(ErrInterrupted)
			return
		}
		r.Stop(os.Interrupt)
	}
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		r.onInt = prev
		r.mu.Unlock()
		cancel(nil)
	}
}

// OnInterrupt makes Ctrl-C call f until the returned function is called.
func (r *Router) OnInterrupt(f func()) func() {
	r.mu.Lock()
	prev := r.onInt
	r.onInt = f
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.onInt = prev
		r.mu.Unlock()
	}
}

// ExitCode is the exit status when ctx was ended by a signal, else -1.
func ExitCode(ctx context.Context) int {
	var s *Stopped
	if errors.As(context.Cause(ctx), &s) {
		return s.Code()
	}
	return -1
}
