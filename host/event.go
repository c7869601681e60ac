package host

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// Event is one thing that happened in a session, for a front end to show.
// The concrete types are below; a front end switches on them and ignores
// those it does not show. A turn's events come on the channel Turn
// returns, in order; events between turns (an extension editing the
// prompt from the background, a notice) come on Session.Events.
type Event interface {
	// Kind names the event in the JSON stream (panto --mode json).
	Kind() string
}

// TurnStart begins a turn: the user's message is recorded.
type TurnStart struct {
	// Text is what the user sent.
	Text string
}

// TextDelta is a piece of the reply's text, as it streams.
type TextDelta struct{ Text string }

// ThinkingDelta is a piece of the model's visible reasoning.
type ThinkingDelta struct{ Text string }

// Reply is one complete reply of the model, recorded. A turn that runs
// tools has one per request. A front end that showed no TextDelta for it
// (the provider did not stream) shows its text now.
type Reply struct {
	Message    conversation.Message
	StopReason serializers.StopReason
	// Streamed is set when its text came as TextDelta events.
	Streamed bool
}

// ToolStart is a tool call about to run. The calls of one reply start in
// the order the model made them, even though they run at once.
type ToolStart struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// ToolEnd is a finished tool call, in the order they finish.
type ToolEnd struct {
	ID, Name string
	Input    json.RawMessage
	// Result is the whole result the model reads; Excerpt its first line,
	// cut for display, and Lines how many lines it has.
	Result  string
	Excerpt string
	Lines   int
	IsError bool
	// Duration is how long the call took.
	Duration time.Duration
}

// SystemChanged is a change of the system prompt, recorded.
type SystemChanged struct {
	// By is who changed it: an extension's name, or "panto" (the
	// configured prompt, a re-seed, a removal on an extension's behalf).
	By   string
	Mode conversation.Mode
	Key  string
	// Text is the block's text; empty with a key removes that section.
	Text string
	// Source says where the text came from, for people.
	Source string
}

// SystemRefused is a system edit panto refused: its {{variables}} did
// not render (an unknown name). Nothing was recorded.
type SystemRefused struct {
	By   string
	Mode conversation.Mode
	Key  string
	// Text is the edit's text as the extension gave it.
	Text string
	Err  error
}

// CompactionStart is the start of a compaction.
type CompactionStart struct {
	// Auto is set when the context crossed the threshold (else /compact).
	Auto bool
	// Tokens is the estimated size of the next request before it.
	Tokens int
}

// CompactionDone is the end of a compaction; Err is set when it failed
// (nothing was changed then).
type CompactionDone struct {
	// Tokens is the estimated size of the next request after it.
	Tokens int
	Err    error
}

// Retry is a model request about to be retried.
type Retry struct {
	// Attempt counts retries from 1, of Max.
	Attempt, Max int
	// Wait is how long panto waits first.
	Wait time.Duration
	// Reason is what failed.
	Reason string
}

// Usage is what one model request cost, as the provider reported it.
type Usage struct {
	serializers.Usage
	Model string
}

// Notice is something a front end should show that is not part of the
// conversation: an extension that failed, a log that was repaired, or an
// extension's Notify (By names it; empty for panto's own).
type Notice struct {
	Level NoticeLevel
	Text  string
	By    string
}

// NoticeLevel says how serious a notice is.
type NoticeLevel string

// The notice levels.
const (
	NoticeInfo    NoticeLevel = "info"
	NoticeWarning NoticeLevel = "warning"
	NoticeError   NoticeLevel = "error"
)

// Error is a failure of a turn (it then ends) or of a compaction. The
// turn's TurnEnd carries it too.
type Error struct{ Err error }

// TurnEnd is a turn's last event. Err is why it stopped early, or nil;
// Reply is the last reply (empty when none was recorded).
type TurnEnd struct {
	Reply      conversation.Message
	StopReason serializers.StopReason
	Err        error
}

// The event names of the JSON stream.
func (TurnStart) Kind() string       { return "turn_start" }
func (TextDelta) Kind() string       { return "text_delta" }
func (ThinkingDelta) Kind() string   { return "thinking_delta" }
func (Reply) Kind() string           { return "reply" }
func (ToolStart) Kind() string       { return "tool_start" }
func (ToolEnd) Kind() string         { return "tool_end" }
func (SystemChanged) Kind() string   { return "system_changed" }
func (SystemRefused) Kind() string   { return "system_refused" }
func (CompactionStart) Kind() string { return "compaction_start" }
func (CompactionDone) Kind() string  { return "compaction_done" }
func (Retry) Kind() string           { return "retry" }
func (Usage) Kind() string           { return "usage" }
func (Notice) Kind() string          { return "notice" }
func (Error) Kind() string           { return "error" }
func (Question) Kind() string        { return "question" }
func (QuestionClosed) Kind() string  { return "question_closed" }
func (Status) Kind() string          { return "status" }
func (TurnEnd) Kind() string         { return "turn_end" }

// stream delivers events in order to a channel without ever blocking the
// sender: events wait in a queue until the reader takes them. A session
// has one for the events between turns; each turn has its own.
//
// What extensions send cannot grow the queue without bound, however
// slowly it is read: an extension has at most maxQueuedNotices notices
// waiting (the next ones are dropped and counted, and a notice of
// panto's says how many once the reader takes the queue), and a status
// segment replaces the one with its key that waits still (the session
// bounds the keys). The session's own events are never dropped.
type stream struct {
	out chan Event

	mu      sync.Mutex
	queue   []Event
	closed  bool
	started bool // the pump runs
	wake    chan struct{}

	// notices counts the queued notices of each extension; drops those
	// dropped since the reader last took the queue; status is the place
	// in queue of each queued status segment, by extension and key.
	notices map[string]int
	drops   map[string]int
	status  map[[2]string]int
}

// maxQueuedNotices is how many of one extension's notices wait, at most,
// for a reader.
const maxQueuedNotices = 64

// newStream returns a stream whose channel is fed at once.
func newStream() *stream {
	s := newIdleStream()
	s.start()
	return s
}

// newIdleStream returns a stream that keeps what it is sent until start:
// the session's events, which a front end may never read.
func newIdleStream() *stream {
	return &stream{out: make(chan Event), wake: make(chan struct{}, 1)}
}

// start starts feeding the channel (once).
func (s *stream) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started = true
	go s.pump()
}

// takeUnread takes what waits in a stream that is not started: nobody
// has asked for its events yet.
func (s *stream) takeUnread() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return nil
	}
	return s.takeLocked()
}

// takeLocked takes the queue, the notices of what was dropped last.
func (s *stream) takeLocked() []Event {
	q := s.queue
	s.queue = nil
	clear(s.notices)
	clear(s.status)
	if len(s.drops) > 0 {
		for _, by := range slices.Sorted(maps.Keys(s.drops)) {
			q = append(q, Notice{Level: NoticeWarning, Text: fmt.Sprintf(
				"%d notices from %s dropped (more than %d waited to be shown)", s.drops[by], by, maxQueuedNotices)})
		}
		clear(s.drops)
	}
	return q
}

// send queues ev; after close it is dropped.
func (s *stream) send(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	switch e := ev.(type) {
	case Notice:
		if e.By != "" {
			if s.notices[e.By] >= maxQueuedNotices {
				if s.drops == nil {
					s.drops = map[string]int{}
				}
				s.drops[e.By]++
				return
			}
			if s.notices == nil {
				s.notices = map[string]int{}
			}
			s.notices[e.By]++
		}
	case Status:
		k := [2]string{e.By, e.Key}
		if i, ok := s.status[k]; ok {
			s.queue[i] = e // the newest text, where the first stood
			return
		}
		if s.status == nil {
			s.status = map[[2]string]int{}
		}
		s.status[k] = len(s.queue)
	}
	s.queue = append(s.queue, ev)
	s.signal()
}

// close delivers what is queued, then closes the channel. A stream never
// started drops what it holds: nobody reads it.
func (s *stream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if !s.started {
		s.started = true // never: nothing is read
		s.queue = nil
		close(s.out)
		return
	}
	s.signal()
}

func (s *stream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *stream) pump() {
	defer close(s.out)
	for range s.wake {
		s.mu.Lock()
		batch, closed := s.takeLocked(), s.closed
		s.mu.Unlock()
		for _, ev := range batch {
			s.out <- ev
		}
		if closed {
			return
		}
	}
}
