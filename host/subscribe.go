package host

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/panto-dev/panto/host/internal/queue"
)

// How a session's events reach its front ends (the package comment has
// the whole rule). Subscribe is the one way to read them: every
// subscription gets every event emitted while it lasts, in the order the
// session emitted them, each through its own bounded queue, so a reader
// that is slow or stops never slows the session or another reader:
//
//   - Deltas (TextDelta, ThinkingDelta) that wait in a queue are merged:
//     a new piece joins the one of its kind waiting last, so however far
//     behind a reader is, no text is lost and the queue does not grow
//     with the stream.
//   - A status segment replaces the one with its key that still waits.
//   - An extension has at most maxQueuedNotices notices waiting; the
//     next ones are dropped and counted, and a notice of panto's says how
//     many once there is room again (or when the session closes).
//   - Any other event is never dropped or merged. When more than
//     MaxPending of them wait, the subscription ends: its reader gets
//     what waited, then Overflow, then the channel closes. Subscribe
//     again and read the state afresh (Messages, EffectiveSystem, Info).
//
// The session's first subscription also gets what happened before it
// existed, from the start of Open on, ending with Opened; a later one
// starts at its Subscribe. Cancelling a subscription's context ends it at
// once (its goroutine and its queue go); otherwise its channel is closed
// after the last event of Close.

// MaxPending is how many events other than deltas may wait for one
// subscription's reader; one more ends the subscription with Overflow.
const MaxPending = 4096

// maxQueuedNotices is how many of one extension's notices wait, at most,
// for one reader.
const maxQueuedNotices = 64

// Overflow is the last event of a subscription whose reader fell behind
// by more than MaxPending events (deltas not counted): the events after
// those are not on it. Subscribe again, and read the state afresh.
type Overflow struct {
	// Pending is how many events waited.
	Pending int
}

// Opened is the last of the events Open emitted: on the session's first
// subscription, what comes before it happened while the session opened
// (the start's SystemChanged, a repaired log, an extension that did not
// start). It never reaches a later subscription.
type Opened struct{}

func (Overflow) Kind() string { return "overflow" }
func (Opened) Kind() string   { return "opened" }

// hub delivers a session's events to its subscriptions.
type hub struct {
	mu   sync.Mutex
	subs []*subscription
	// first holds the events until the first Subscribe takes it over.
	first  *subscription
	closed bool
}

func newHub() *hub { return &hub{first: newSubscription()} }

// emit queues ev on every subscription. It never blocks on a reader.
func (h *hub) emit(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if h.first != nil {
		h.first.add(ev)
	}
	for _, s := range h.subs {
		s.add(ev)
	}
}

// subscribe starts a subscription (see Session.Subscribe).
func (h *hub) subscribe(ctx context.Context) <-chan Event {
	h.mu.Lock()
	s := h.first
	h.first = nil
	if s == nil {
		s = newSubscription()
		if h.closed {
			s.q.Close()
		}
	}
	if !h.closed {
		h.subs = append(h.subs, s)
	}
	h.mu.Unlock()
	out := make(chan Event)
	go func() {
		defer close(out)
		defer h.remove(s)
		for {
			ev, ok := s.q.Pop(ctx, s.took)
			if !ok {
				return
			}
			counted := true
			if r, ok := ev.(*deltaRun); ok {
				ev, counted = r.event(), false
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
			if counted {
				s.q.Edit(s.delivered) // it waited until now
			}
		}
	}()
	return out
}

// remove forgets s: nothing is queued on it from now on.
func (h *hub) remove(s *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i := slices.Index(h.subs, s); i >= 0 {
		h.subs = slices.Delete(h.subs, i, i+1)
	}
	s.q.Close()
}

// close ends every subscription once its reader has taken what waits;
// a Subscribe from now on gets a closed channel (the first one, what
// was held for it first).
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	all := slices.Clone(h.subs)
	if h.first != nil {
		all = append(all, h.first)
	}
	for _, s := range all {
		s.q.Edit(s.tellDrops)
		s.q.Close()
	}
}

// subscription is one reader's queue and its policy. The fields after q
// are touched only in q's Edit and Pop functions, under its lock.
type subscription struct {
	q *queue.Queue[Event]

	// pending counts the events that are not deltas and that the reader
	// has not taken yet (the one being handed over included).
	pending int
	// tail is the delta run waiting last, which a new delta of its kind
	// joins; nil when the last event waiting is not one.
	tail *deltaRun
	// notices counts the waiting notices of each extension; drops those
	// dropped since panto last said so.
	notices map[string]int
	drops   map[string]int
	// status is the place of each waiting status segment, by extension
	// and key, counted from the first event ever queued: popped counts
	// those taken, so status[k]-popped is its index in the queue.
	status map[[2]string]int
	pushed int
	popped int
	over   bool
}

func newSubscription() *subscription {
	return &subscription{q: queue.New[Event]()}
}

// add queues ev under the policy.
func (s *subscription) add(ev Event) {
	full := false
	s.q.Edit(func(items []Event) []Event {
		if s.over {
			return items
		}
		switch e := ev.(type) {
		case TextDelta:
			return s.delta(items, false, e.Text)
		case ThinkingDelta:
			return s.delta(items, true, e.Text)
		case Status:
			k := [2]string{e.By, e.Key}
			if at, ok := s.status[k]; ok {
				items[at-s.popped] = e // the newest text, where the first stood
				return items
			}
			if s.status == nil {
				s.status = map[[2]string]int{}
			}
			s.status[k] = s.pushed
		case Notice:
			if e.By != "" {
				if s.notices[e.By] >= maxQueuedNotices {
					if s.drops == nil {
						s.drops = map[string]int{}
					}
					s.drops[e.By]++
					return items
				}
				items = s.tellDrop(items, e.By)
				if s.notices == nil {
					s.notices = map[string]int{}
				}
				s.notices[e.By]++
			}
		}
		if s.pending >= MaxPending {
			s.over, full = true, true
			return s.push(items, Overflow{Pending: s.pending})
		}
		s.pending++
		return s.push(items, ev)
	})
	if full {
		s.q.Close()
	}
}

func (s *subscription) push(items []Event, ev Event) []Event {
	s.tail = nil
	s.pushed++
	return append(items, ev)
}

// delta queues a piece of text or thinking, joined to the run of its
// kind that waits last.
func (s *subscription) delta(items []Event, thinking bool, text string) []Event {
	if s.tail != nil && s.tail.thinking == thinking {
		s.tail.b.WriteString(text)
		return items
	}
	r := &deltaRun{thinking: thinking}
	r.b.WriteString(text)
	items = s.push(items, r)
	s.tail = r
	return items
}

// took counts out an event the reader takes.
func (s *subscription) took(ev Event) {
	s.popped++
	switch e := ev.(type) {
	case *deltaRun:
		if s.tail == e {
			s.tail = nil
		}
	case Status:
		k := [2]string{e.By, e.Key}
		if at, ok := s.status[k]; ok && at < s.popped {
			delete(s.status, k)
		}
	case Notice:
		if e.By != "" {
			s.notices[e.By]--
		}
	}
}

// delivered counts out an event the reader has taken.
func (s *subscription) delivered(items []Event) []Event {
	s.pending--
	return items
}

// tellDrop queues panto's notice of the notices of by that were dropped,
// if any were (there is room for by's notices again).
func (s *subscription) tellDrop(items []Event, by string) []Event {
	n := s.drops[by]
	if n == 0 {
		return items
	}
	delete(s.drops, by)
	s.pending++
	return s.push(items, Notice{Level: NoticeWarning, Text: fmt.Sprintf(
		"%d notices from %s dropped (more than %d waited to be shown)", n, by, maxQueuedNotices)})
}

// tellDrops queues panto's notices of every extension's dropped notices:
// the session is closing.
func (s *subscription) tellDrops(items []Event) []Event {
	if s.over {
		return items
	}
	for _, by := range slices.Sorted(maps.Keys(s.drops)) {
		items = s.tellDrop(items, by)
	}
	return items
}

// deltaRun is deltas of one kind merged while they waited; the reader
// gets it as one TextDelta or ThinkingDelta.
type deltaRun struct {
	thinking bool
	b        strings.Builder
}

func (r *deltaRun) Kind() string { return r.event().Kind() }

func (r *deltaRun) event() Event {
	if r.thinking {
		return ThinkingDelta{Text: r.b.String()}
	}
	return TextDelta{Text: r.b.String()}
}
