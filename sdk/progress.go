package sdk

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"
)

// Progress sends text, the next piece of a running tool call's output,
// to panto (API v6): the lines a command has printed so far, say, in the
// order it printed them. ctx is the context panto's call gave the tool's
// Run (or one derived from it). panto shows the end of the output while
// the call runs — the last lines and the time the call has taken — and
// writes it as tool_progress lines in --mode json. The model never reads
// it but in one case: when the user interrupts the call and the tool
// gives no answer of its own (it hangs, or the extension dies), the
// output so far becomes the call's result, marked interrupted. So a tool
// that streams its output should still put it in its result.
//
// Progress never blocks and never fails: the pieces are sent in the
// background, gathered at most 20 times a second (of a flood, only the
// last 64 KiB between two sends), and dropped silently where there is
// nowhere to send them — a panto older than v6, a context that is not a
// tool call's.
func Progress(ctx context.Context, text string) {
	if fn, _ := ctx.Value(progressKey{}).(func(string)); fn != nil && text != "" {
		fn(text)
	}
}

// WithProgress returns ctx whose Progress calls go to fn, one call per
// piece, on the caller's goroutine. Serve sets it for every tool call; a
// harness that runs a tool's Run in-process sets its own (sdktest does,
// and shows what the tool sent).
func WithProgress(ctx context.Context, fn func(text string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

type progressKey struct{}

// The SDK's batching of a call's progress.
const (
	progressEvery   = 50 * time.Millisecond
	progressMax     = 64 << 10
	progressTimeout = 5 * time.Second
)

// progressSender gathers one call's pieces and sends them, at most one
// send in flight and one every progressEvery, keeping at most
// progressMax bytes (the newest) between two sends.
type progressSender struct {
	send func(ctx context.Context, text string) error

	mu      sync.Mutex
	pending []byte
	queued  bool // a send is scheduled or in flight
	stopped bool
}

func newProgressSender(send func(ctx context.Context, text string) error) *progressSender {
	return &progressSender{send: send}
}

func (p *progressSender) add(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.pending = append(p.pending, text...)
	if len(p.pending) > 2*progressMax { // amortized: flush cuts it to progressMax
		p.pending = append(p.pending[:0], lastOf(p.pending, progressMax)...)
	}
	if !p.queued {
		p.queued = true
		time.AfterFunc(progressEvery, p.flush)
	}
}

// flush sends what is pending, then schedules the next send if more came
// meanwhile.
func (p *progressSender) flush() {
	p.mu.Lock()
	text := string(lastOf(p.pending, progressMax))
	p.pending = p.pending[:0]
	stopped := p.stopped
	p.mu.Unlock()
	if !stopped && text != "" {
		ctx, cancel := context.WithTimeout(context.Background(), progressTimeout)
		_ = p.send(ctx, text) // progress is best effort: the result is what counts
		cancel()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pending) > 0 && !p.stopped {
		time.AfterFunc(progressEvery, p.flush)
		return
	}
	p.queued = false
}

// stop drops what is pending: the call has answered, and its result
// replaces its progress.
func (p *progressSender) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped, p.pending = true, nil
}

// lastOf is the last n bytes of b, or fewer: from a character's start.
func lastOf(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	cut := len(b) - n
	for cut < len(b) && !utf8.RuneStart(b[cut]) {
		cut++
	}
	return b[cut:]
}
