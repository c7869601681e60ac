// Package queue is the in-order hand-off between goroutines that host's
// event subscriptions and the extension manager's delivery of prompt
// changes share: whoever adds never blocks, and one receiver takes what
// waits, first in first out, waiting when nothing does.
//
// The queue itself never drops, merges or bounds anything: a user that
// needs a policy (merging what may be merged, a bound) applies it in
// Edit, which runs under the queue's lock, and learns what the receiver
// took in Pop's took. Nothing else belongs here.
package queue

import (
	"context"
	"sync"
)

// Queue is a FIFO queue with one receiver. Its zero value is not ready:
// use New. It is safe for concurrent use.
type Queue[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	// wake holds a token when something was added or the queue closed
	// since the receiver last looked.
	wake chan struct{}
}

// New returns an empty, open queue.
func New[T any]() *Queue[T] {
	return &Queue[T]{wake: make(chan struct{}, 1)}
}

// Edit runs f on the waiting items, oldest first, with the queue's lock
// held, and keeps the slice it returns (f may append to it, change an
// item in place, or leave it as it is). Once the queue is closed Edit
// runs nothing and returns false. f must not call the queue.
func (q *Queue[T]) Edit(f func(items []T) []T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.items = f(q.items)
	q.signal()
	return true
}

// Push adds v at the end; false (nothing added) once the queue is closed.
func (q *Queue[T]) Push(v T) bool {
	return q.Edit(func(items []T) []T { return append(items, v) })
}

// Pop takes the oldest waiting item, waiting for one while the queue is
// open. took, when not nil, is called with it under the queue's lock, so
// a policy kept by Edit's functions can count it out. ok is false when
// the queue is closed and nothing waits any more, or when ctx is done.
// One goroutine at a time may Pop.
func (q *Queue[T]) Pop(ctx context.Context, took func(T)) (v T, ok bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			v = q.items[0]
			var zero T
			q.items[0] = zero // no reference kept to what was taken
			q.items = q.items[1:]
			if len(q.items) == 0 {
				q.items = nil // let the array go
			}
			if took != nil {
				took(v)
			}
			q.mu.Unlock()
			return v, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return v, false
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return v, false
		}
	}
}

// Close closes the queue: nothing is added from now on, and what waits
// is still taken by Pop, which then reports the end. Closing twice is a
// no-op.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.signal()
}

// Len returns how many items wait.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// signal leaves a wake token for the receiver (q.mu held).
func (q *Queue[T]) signal() {
	select {
	case q.wake <- struct{}{}:
	default: // one waits already
	}
}
