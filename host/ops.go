package host

import (
	"context"
	"sync"
)

// operations are the front end's calls under way — a turn, a move, a
// compaction, a command — so that Close can refuse new ones, cut the
// running ones short and wait for them (as net/http's Server.Shutdown
// does with its connections). Its zero value is ready.
type operations struct {
	mu      sync.Mutex
	closing bool
	running sync.WaitGroup
	// stop is done once Close has begun (made on first use).
	stop   context.Context
	cancel context.CancelCauseFunc
}

func (o *operations) stopLocked() context.Context {
	if o.stop == nil {
		o.stop, o.cancel = context.WithCancelCause(context.Background())
	}
	return o.stop
}

// enter counts an operation in, or fails with ErrClosed once Close has
// begun. Call done when it has ended.
func (o *operations) enter() (done func(), err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closing {
		return nil, ErrClosed
	}
	o.running.Add(1)
	return o.running.Done, nil
}

// cut returns ctx, cancelled with the cause ErrClosed when Close begins;
// call release when the operation ends.
func (o *operations) cut(ctx context.Context) (_ context.Context, release func()) {
	o.mu.Lock()
	stop := o.stopLocked()
	o.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(stop, func() { cancel(ErrClosed) })
	return ctx, func() { unhook(); cancel(nil) }
}

// shut refuses every operation from now on and cuts short those that
// run (their contexts from cut are cancelled).
func (o *operations) shut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closing = true
	o.stopLocked()
	o.cancel(ErrClosed)
}

// wait returns once every operation counted in has ended.
func (o *operations) wait() { o.running.Wait() }

// exclusive begins an operation that runs alone (a turn, a move, a
// compaction, a model change): ErrClosed once Close has begun, ErrBusy
// while another runs. Its context is cut by Close; call done when it has
// ended.
func (s *Session) exclusive(ctx context.Context) (_ context.Context, done func(), err error) {
	leave, err := s.ops.enter()
	if err != nil {
		return nil, nil, err
	}
	if !s.turnMu.TryLock() {
		leave()
		return nil, nil, ErrBusy
	}
	s.busy.Store(true)
	ctx, release := s.ops.cut(ctx)
	return ctx, func() {
		release()
		s.busy.Store(false)
		s.turnMu.Unlock()
		leave()
	}, nil
}

// Busy reports whether a turn, a move, a compaction or a model change
// runs (Turn and the others return ErrBusy meanwhile). A front end whose
// subscription ended with Overflow while it waited for a TurnEnd asks it
// after subscribing again: the TurnEnd may have been among the events it
// missed. A turn is not busy any more just before its TurnEnd is emitted.
func (s *Session) Busy() bool { return s.busy.Load() }
