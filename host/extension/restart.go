package extension

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/panto-dev/panto/internal/protocol"
)

// An extension whose process dies while the session runs — it crashed,
// exited or was killed, and panto did not stop it — is restarted once:
// the same executable, started as at the session's start, put in the old
// one's place in the load order, told session_start again (Resumed), and
// the host told (Restarter) so that its tools and guidance are recorded
// as they are now. Its sections stay in the prompt meanwhile: what it
// sets again that is unchanged records nothing. If it dies a second time
// it is stopped for the session, its sections removed, as a disabled
// one's are; a tool_call watcher then blocks every call (fail closed)
// until the user reloads (/reload) or disables it (DisableForSession).
//
// A death is noticed either way it shows: the process exits (watch), or
// a call to it fails because its connection broke (ask). Either way the
// death is handled once (lost); a call that comes meanwhile waits for
// the restart (live) instead of failing.

// Restarter is told that an extension was restarted: *host.Session's
// recorder records its tools and guidance again. Optional: a Recorder
// without it is told nothing.
type Restarter interface {
	Restarted(name string)
}

// restartWait bounds the wait for a dead extension's exit status, when its
// connection broke before the process was reaped.
const restartWait = time.Second

// watch waits for e's process to exit; an exit panto did not cause is a
// death.
func (m *Manager) watch(e *Ext) {
	p := e.process()
	if p == nil {
		return // attached under a debugger: the process is the user's
	}
	select {
	case <-p.exited:
	case <-m.life.Done():
		return
	}
	if e.stopping.Load() {
		return
	}
	m.lost(e)
}

// lost handles e's death, once, and returns when that is done: the
// extension restarted, or stopped for the session.
func (m *Manager) lost(e *Ext) {
	e.lostOnce.Do(func() { go m.restart(e) })
	<-e.settled
}

// live returns the Ext that stands for e now: when e died and a restart
// is under way, it waits for it (at most until ctx ends) and returns the
// one restarted in its place; otherwise e.
func (m *Manager) live(ctx context.Context, e *Ext) *Ext {
	for {
		e.mu.Lock()
		dead := e.disabled != nil && errors.Is(e.disabled, errDied)
		next := e.next
		e.mu.Unlock()
		switch {
		case next != nil:
			e = next
			continue
		case !dead:
			return e
		}
		select {
		case <-e.settled:
		case <-ctx.Done():
			return e
		}
		e.mu.Lock()
		next = e.next
		e.mu.Unlock()
		if next == nil {
			return e
		}
		e = next
	}
}

// errDied is wrapped by the reason of an extension whose process died.
var errDied = errors.New("it crashed or exited")

// settleAll waits for the deaths being handled (Close: their restarts
// are cancelled).
func (m *Manager) settleAll() {
	for _, e := range m.list() {
		e.mu.Lock()
		dead := errors.Is(e.disabled, errDied)
		e.mu.Unlock()
		if dead {
			<-e.settled
		}
	}
}

// restart handles e's death: it restarts e once, or stops it for the
// session. It closes e.settled when done.
func (m *Manager) restart(e *Ext) {
	defer close(e.settled)
	name := e.Name()
	why := "its connection broke"
	if p := e.process(); p != nil {
		select {
		case <-p.exited:
			why = exitText(p.exitErr())
		case <-time.After(restartWait):
		}
	}
	e.mu.Lock()
	if e.disabled != nil {
		// Disabled already (a hang, the user's choice): nothing to restart.
		e.mu.Unlock()
		return
	}
	e.disabled = fmt.Errorf("%w (%s)", errDied, why)
	e.mu.Unlock()
	go e.stop(false, 0) // what is left of it: its group, its sockets
	if m.life.Err() != nil {
		return // the session is closing
	}
	m.opts.Logger.Warn("extension died", "extension", name, "path", e.spec.Path, "exit", why, "restarts", e.restarts)
	if e.restarts > 0 || e.spec.Reattach != nil {
		m.stoppedForGood(e, fmt.Sprintf("the %s extension stopped again (%s); it had been restarted once already, so panto stopped it for this session", name, why))
		return
	}
	ne, err := start(m.life, e.spec, m.rec, m.opts, m.report)
	if err == nil && ne.Name() != name {
		err = fmt.Errorf("it came back with another name, %q", ne.Name())
		ne.stop(true, m.opts.HookTimeout)
	}
	if err != nil {
		if m.life.Err() != nil {
			return
		}
		m.stoppedForGood(e, fmt.Sprintf("the %s extension stopped (%s) and panto could not restart it (%v), so it is stopped for this session", name, why, startReason(err)))
		return
	}
	ne.restarts = e.restarts + 1
	e.mu.Lock()
	byUser := errors.Is(e.disabled, errDisabledByUser)
	e.mu.Unlock()
	if byUser { // disabled by the user meanwhile
		ne.stop(true, m.opts.HookTimeout)
		return
	}
	m.extMu.Lock()
	if i := slices.Index(m.exts, e); i >= 0 {
		m.exts[i] = ne
	}
	ev := m.started
	m.extMu.Unlock()
	e.mu.Lock()
	e.next = ne
	e.mu.Unlock()
	go m.watch(ne)
	m.warn(fmt.Sprintf("the %s extension stopped (%s); restarted it", name, why))
	if r, ok := m.rec.(Restarter); ok {
		r.Restarted(name)
	}
	if ev != nil && ne.Handles(protocol.EventSessionStart) {
		again := *ev
		again.Resumed = true
		_, _ = m.ask(m.life, ne, sessionStartReq(again))
	}
}

// stoppedForGood tells the user that e is stopped for the session, what
// that means and what to do, and takes its sections out of the prompt.
func (m *Manager) stoppedForGood(e *Ext, what string) {
	name := e.Name()
	var means []string
	if len(e.tools()) > 0 {
		means = append(means, "its tools are not offered")
	}
	if e.Handles(protocol.EventToolCall) {
		means = append(means, "as it checks tool calls, panto runs none until it is back")
	}
	msg := what
	if len(means) > 0 {
		msg += ": " + strings.Join(means, ", and ")
	}
	msg += ". " + whatToDo(name)
	m.report(errors.New(msg))
	if err := m.rec.DisposeSections(name, "extension "+name+" stopped"); err != nil {
		m.report(fmt.Errorf("extension %s: remove its sections: %w", name, err))
	}
}

// whatToDo says what the user can do about a stopped extension.
func whatToDo(name string) string {
	return fmt.Sprintf("/extensions shows the extensions, /reload starts them again, /extensions disable %s goes on without it for this session", name)
}

// warn tells the user text (Options.Warn, else Report).
func (m *Manager) warn(text string) {
	m.opts.Logger.Warn(text)
	if m.opts.Warn != nil {
		m.opts.Warn(text)
		return
	}
	if m.opts.Report != nil {
		m.opts.Report(errors.New(text))
	}
}

// exitGrace is how long a call's failure waits for the extension's
// process to exit, to tell a death (the connection ends as the process
// does: "server closed the stream without sending trailers") from a bad
// answer.
const exitGrace = time.Second

// crashed reports whether err, from a call to e, comes of its process
// dying — its connection broke, or the process exits — not of a hang or
// a bad answer.
func (e *Ext) crashed(err error, timeout bool) bool {
	if timeout || err == nil {
		return false
	}
	if status.Code(err) == codes.Unavailable {
		return true
	}
	p := e.process()
	if p == nil {
		return false
	}
	select {
	case <-p.exited:
		// Not one panto stopped — unless it stops it because it died.
		return !e.stopping.Load() || errors.Is(e.Disabled(), errDied)
	case <-time.After(exitGrace):
		return false
	}
}
