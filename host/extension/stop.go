package extension

import (
	"context"
	"fmt"
	"os"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/panto-dev/panto/internal/pb"
)

// How an extension's process ends: a graceful stop (Shutdown, then the
// process's exit), a kill of its process group, or its start deadline
// passing; and how that is told.

// shutdownGrace bounds a graceful stop: the Shutdown calls and the wait
// for the process to exit. Then its process group is killed.
const shutdownGrace = time.Second

// StopKind says how an extension's process ended.
type StopKind string

const (
	// StopGraceful: it exited by itself after Shutdown.
	StopGraceful StopKind = "graceful"
	// StopTimeout: it did not exit within 1 s of Shutdown; it was killed.
	StopTimeout StopKind = "shutdown timeout"
	// StopKilled: it was killed without being asked (it had crashed,
	// hung, answered nonsense or was refused at start).
	StopKilled StopKind = "killed"
	// StopExited: it had exited by itself before panto stopped it, or
	// never ran.
	StopExited StopKind = "exited"
)

// Stop is how an extension's process ended.
type Stop struct {
	Kind StopKind
	// Leftovers: its process group still had processes once it exited
	// (children it did not end); they were killed.
	Leftovers bool
	// PipesHeld: a process outside its group (a new session) still held
	// its stdout or stderr once it exited; panto closed its own ends.
	PipesHeld bool
	// Undead: it did not die within 1 s of SIGKILL (uninterruptible
	// sleep); panto stopped waiting for it.
	Undead bool
	// Exit is the process's exit error ("exit status 1", "signal:
	// killed"); nil for exit status 0.
	Exit error
	// Took is how long the stop took.
	Took time.Duration
}

// Clean reports whether it exited by itself after Shutdown and left
// nothing running.
func (s Stop) Clean() bool {
	return s.Kind == StopGraceful && !s.Leftovers && !s.PipesHeld && !s.Undead
}

// String says how it ended, for people.
func (s Stop) String() string {
	var out string
	switch s.Kind {
	case StopGraceful:
		out = "it exited after Shutdown"
	case StopTimeout:
		out = fmt.Sprintf("it did not exit within %s of Shutdown; panto killed its process group", shutdownGrace)
	case StopKilled:
		out = "panto killed its process group"
	default:
		out = fmt.Sprintf("it had already exited (%s)", exitText(s.Exit))
	}
	if s.Leftovers {
		out += "; it left processes running in its process group, which panto killed"
	}
	if s.PipesHeld {
		out += "; a process outside its process group still held its stdout or stderr"
	}
	if s.Undead {
		out += fmt.Sprintf("; it did not die within %s of SIGKILL", killWait)
	}
	return out
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// Stopped returns how the extension's process ended, once it has been
// stopped.
func (e *Ext) Stopped() (Stop, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.how == nil {
		return Stop{}, false
	}
	return *e.how, true
}

// stop ends the extension's process, once, within a bound: with
// graceful, Shutdown (panto's, then go-plugin's GRPCController) and a
// wait for it to exit, at most min(timeout, 1 s); then, always, SIGKILL
// to its whole process group. Without graceful it is killed at once. A
// second call waits for the first to finish. It never calls go-plugin's
// Client.Kill (a second GRPCController call, then up to 2 s of waiting)
// and never waits on the EOF of pipes a child holds.
func (e *Ext) stop(graceful bool, timeout time.Duration) {
	e.stopping.Store(true)
	e.stopOnce.Do(func() {
		t0 := time.Now()
		e.mu.Lock()
		p := e.proc
		e.mu.Unlock()
		st := Stop{Kind: StopExited}
		if e.spec.Reattach != nil && graceful && e.conn != nil {
			// Attached under a debugger: the process is the user's. Tell
			// it the session is over (the SDK then returns from Serve);
			// never kill it.
			ctx, cancel := context.WithTimeout(context.Background(), min(timeout, shutdownGrace))
			if _, err := e.conn.Extension.Shutdown(ctx, &pb.ShutdownRequest{}); err == nil {
				st.Kind = StopGraceful
			}
			cancel()
		}
		if p != nil {
			switch {
			case p.stopped():
			case graceful:
				st.Kind = e.shutdown(p, min(timeout, shutdownGrace))
			default:
				st.Kind = StopKilled
			}
			st.Undead = !p.end()
			st.Leftovers, st.PipesHeld = p.leftovers()
			st.Exit = p.exitErr()
			if st.Kind == StopKilled && !killedBySIGKILL(st.Exit) {
				st.Kind = StopExited // it had exited, not yet reaped
			}
		}
		e.release()
		st.Took = time.Since(t0)
		e.mu.Lock()
		e.how = &st
		e.mu.Unlock()
		e.logger.Debug("extension stopped", "path", e.spec.Path, "how", st.String(), "took", st.Took)
	})
}

// release frees what go-plugin holds for the extension: its broker, its
// connection and its socket folder, as its Client.Kill would, without
// that Kill's second GRPCController call and 2 s wait. go-plugin's
// goroutines end by themselves: the process is reaped and the pipes they
// read are closed.
func (e *Ext) release() {
	if e.conn != nil {
		_ = e.conn.Broker.Close()
	}
	if e.rpc != nil {
		_ = e.rpc.Close()
	}
	if e.sockDir != "" {
		_ = os.RemoveAll(e.sockDir)
	}
}

// shutdown asks the extension to exit and waits for it, up to grace.
// Panto's Shutdown comes first (an extension in another language exits
// after answering it), then go-plugin's GRPCController.Shutdown (what
// makes a Go extension's Serve return); one that serves neither is simply
// waited for.
func (e *Ext) shutdown(p *process, grace time.Duration) StopKind {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		if e.conn != nil {
			_, _ = e.conn.Extension.Shutdown(ctx, &pb.ShutdownRequest{})
		}
		if e.rpc != nil {
			_ = e.rpc.Invoke(ctx, "/plugin.GRPCController/Shutdown", &emptypb.Empty{}, &emptypb.Empty{})
		}
	}()
	select {
	case <-p.exited:
		return StopGraceful
	case <-ctx.Done():
		return StopTimeout
	}
}

// expire is the start deadline: the process group is killed, whichever
// step of the start it is in.
func (e *Ext) expire() {
	e.mu.Lock()
	e.expired = true
	p := e.proc
	e.mu.Unlock()
	if p != nil {
		p.end()
	}
}

func (e *Ext) hasExpired() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.expired
}

// setProc records the process go-plugin is about to start; false once
// the start deadline has passed.
func (e *Ext) setProc(p *process) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.expired {
		return false
	}
	e.proc = p
	return true
}

// process is its OS process; nil until go-plugin asks for it, and for
// one attached under a debugger.
func (e *Ext) process() *process {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.proc
}
