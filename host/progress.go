package host

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/host/extension"
)

// A running tool call's progress, as front ends see it: the ToolProgress
// events of each call, from its ToolStart to its ToolEnd, at most one
// every progressEvery, so that a command that floods its output cannot
// flood the subscriptions' queues (a reader that falls behind loses its
// events). Between two events the output is gathered, and only its last
// maxProgressText bytes kept; the Tail of each event is the last
// progressTailLines lines of everything so far.

const (
	progressEvery     = 100 * time.Millisecond
	maxProgressText   = 16 << 10
	progressTailLines = 10
	maxProgressTail   = 4 << 10
)

// liveCalls are the tool calls running now, by id.
type liveCalls struct {
	mu   sync.Mutex
	byID map[string]*liveCall
}

// liveCall is one running call's progress.
type liveCall struct {
	s     *Session
	id    string
	name  string
	start time.Time

	mu       sync.Mutex
	pending  []byte // since the last event
	tail     []byte // the end of all of it (at most maxProgressTail bytes)
	last     time.Time
	timer    *time.Timer
	finished bool
}

// begin counts the call in; finish, called before its ToolEnd, ends its
// progress: nothing of it is emitted after.
func (s *Session) beginLive(id, name string, start time.Time) (finish func()) {
	c := &liveCall{s: s, id: id, name: name, start: start}
	s.live.mu.Lock()
	if s.live.byID == nil {
		s.live.byID = map[string]*liveCall{}
	}
	s.live.byID[id] = c
	s.live.mu.Unlock()
	return func() {
		s.live.mu.Lock()
		if s.live.byID[id] == c {
			delete(s.live.byID, id)
		}
		s.live.mu.Unlock()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.finished = true
		if c.timer != nil {
			c.timer.Stop()
		}
	}
}

// toolProgress takes a piece of output of the running call id; one of a
// call not running is dropped.
func (s *Session) toolProgress(id, text string) {
	s.live.mu.Lock()
	c := s.live.byID[id]
	s.live.mu.Unlock()
	if c == nil || text == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	c.pending = keepLast(append(c.pending, text...), maxProgressText)
	c.tail = keepLast(append(c.tail, text...), maxProgressTail)
	if c.timer != nil {
		return // the scheduled flush takes it
	}
	if wait := progressEvery - time.Since(c.last); wait > 0 {
		c.timer = time.AfterFunc(wait, c.flush)
		return
	}
	c.emitLocked()
}

// flush emits what is pending once progressEvery has passed since the
// last event (a timer may fire a little early).
func (c *liveCall) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = nil
	if c.finished || len(c.pending) == 0 {
		return
	}
	if wait := progressEvery - time.Since(c.last); wait > 0 {
		c.timer = time.AfterFunc(wait, c.flush)
		return
	}
	c.emitLocked()
}

// emitLocked emits what is pending. Emitting under c.mu keeps every
// event of the call before its ToolEnd (finish takes c.mu).
func (c *liveCall) emitLocked() {
	c.last = time.Now()
	ev := ToolProgress{ID: c.id, Name: c.name, Text: string(c.pending), Tail: lastLines(string(c.tail), progressTailLines), Elapsed: c.last.Sub(c.start)}
	c.pending = c.pending[:0]
	c.s.emit(ev)
}

// keepLast is the last n bytes of b, from a character's start.
func keepLast(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	cut := len(b) - n
	for cut < len(b) && !utf8.RuneStart(b[cut]) {
		cut++
	}
	return append(b[:0], b[cut:]...)
}

// lastLines is the last n lines of text, a final newline not starting
// one.
func lastLines(text string, n int) string {
	body := strings.TrimSuffix(text, "\n")
	i := len(body)
	for range n {
		j := strings.LastIndexByte(body[:i], '\n')
		if j < 0 {
			return text
		}
		i = j
	}
	return text[i+1:]
}

// ToolProgress forwards an extension's progress of a call to the session.
func (r recorder) ToolProgress(_, id, text string) { r.s.toolProgress(id, text) }

// CacheEstimate is the session's CacheRisk, for an extension that asks.
func (r recorder) CacheEstimate() (int, time.Time) {
	c := r.s.CacheRisk()
	return c.Tokens, c.LastReply
}

var _ extension.ProgressRecorder = recorder{}
