package main

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
//     is cancelled with a *stopSignal cause, a request in flight is
//     abandoned (nothing half-received is recorded), running tool calls
//     get "interrupted" results, extensions are stopped (each within its
//     deadline) and panto exits with 128+signal.
//   - SIGINT (Ctrl-C) interrupts what runs in the foreground: a turn, or
//     the interactive prompt (a reminder of how to leave; a second one in
//     a row leaves). When nothing has taken it (starting up, a
//     subcommand), or a second one comes while a turn is still stopping,
//     it ends panto too, with exit status 130.
//   - A second such signal while panto is already stopping, or the stop
//     taking longer than stopGrace, ends the process at once: every
//     recorded entry is already on disk, and the kernel releases the
//     session lock and kills the extensions (Pdeathsig).

// stopSignal is the cause of the root context when a signal ends panto.
type stopSignal struct{ sig os.Signal }

func (s *stopSignal) Error() string { return "stopped by " + signalName(s.sig) }

// code is the exit status for the signal: 128 + its number.
func (s *stopSignal) code() int {
	if n, ok := s.sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitError
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

// stopGrace bounds how long panto takes to stop cleanly after a signal
// ends it; then it exits at once.
const stopGrace = 5 * time.Second

// signalRouter takes the signals panto handles (see above) and routes
// them. Its zero value with nil fields ignores nothing and ends nothing.
type signalRouter struct {
	cancel context.CancelCauseFunc
	// exit ends the process at once; nil (in-process tests) never does.
	exit func(code int)

	mu       sync.Mutex
	onInt    func() // the foreground's Ctrl-C handler; nil: Ctrl-C ends panto
	stopping bool
}

// route starts delivering sigs; it returns at once.
func (r *signalRouter) route(sigs <-chan os.Signal) {
	if sigs == nil {
		return
	}
	go func() {
		for sig := range sigs {
			r.deliver(sig)
		}
	}()
}

func (r *signalRouter) deliver(sig os.Signal) {
	r.mu.Lock()
	onInt := r.onInt
	if sig == os.Interrupt && onInt != nil && !r.stopping {
		r.mu.Unlock()
		onInt()
		return
	}
	r.mu.Unlock()
	r.stop(sig)
}

// stop ends panto as sig does when nothing in the foreground takes it:
// the root context is cancelled, and the process ends at once after
// stopGrace or on a second call.
func (r *signalRouter) stop(sig os.Signal) {
	r.mu.Lock()
	stopping := r.stopping
	r.stopping = true
	r.mu.Unlock()
	cause := &stopSignal{sig}
	if sig == os.Interrupt {
		cause = nil
	}
	if stopping {
		// A second signal while stopping: the user means now.
		r.exitNow(cause)
		return
	}
	if cause == nil {
		r.cancel(errInterrupted)
	} else {
		r.cancel(cause)
	}
	time.AfterFunc(stopGrace, func() { r.exitNow(cause) })
}

// exitNow ends the process with the status of cause (nil: Ctrl-C).
func (r *signalRouter) exitNow(cause *stopSignal) {
	if r.exit == nil {
		return
	}
	code := 130
	what := "interrupted"
	if cause != nil {
		code, what = cause.code(), cause.Error()
	}
	fmt.Fprintf(os.Stderr, "panto: %s; exiting without waiting for the rest of the shutdown\n", what)
	r.exit(code)
}

// foreground returns a context that Ctrl-C cancels (cause errInterrupted)
// while it is in use, and a stop function to call when done. Signals that
// end panto cancel it too, through ctx. A second Ctrl-C while it is in
// use means what runs did not stop (an extension asking again and again,
// a hook that hangs): it ends panto, as a Ctrl-C with nothing in the
// foreground does.
func (r *signalRouter) foreground(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	var n atomic.Int32
	r.mu.Lock()
	prev := r.onInt
	r.onInt = func() {
		if n.Add(1) == 1 {
			cancel(errInterrupted)
			return
		}
		r.stop(os.Interrupt)
	}
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		r.onInt = prev
		r.mu.Unlock()
		cancel(nil)
	}
}

// onInterrupt makes Ctrl-C call f until the returned function is called.
func (r *signalRouter) onInterrupt(f func()) func() {
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

// exitCode is the exit status when ctx was ended by a signal, else -1.
func exitCode(ctx context.Context) int {
	var s *stopSignal
	if errors.As(context.Cause(ctx), &s) {
		return s.code()
	}
	return -1
}
