package extension

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
)

// A tool call's progress (API v6): the pieces of output an extension
// sends for a call it runs (Host.ToolProgress). The Recorder is told
// each piece, when it shows progress (ProgressRecorder); and the end of
// the output is kept here, for the call's result when the user
// interrupts it and the extension gives no answer of its own (it does
// not take tool_cancel, hangs past the grace, or dies). Keeping it here,
// in panto, and not asking the extension for it, is what makes it hold
// when the extension is the part that failed.

// ProgressRecorder is a Recorder that shows tool calls' progress:
// ToolProgress is told each piece of output an extension sent for a
// call it is running, in the order sent. It must not block. A Recorder
// without it is sent none.
type ProgressRecorder interface {
	ToolProgress(by, callID, text string)
}

// CacheRecorder estimates what a change of the system prompt made now
// would invalidate of the provider's prompt cache (GetCacheEstimate). A
// Recorder without it answers nothing cached.
type CacheRecorder interface {
	CacheEstimate() (tokens int, lastReply time.Time)
}

// MaxProgressKept is how much of a call's progress panto keeps: the
// last 16 KiB.
const MaxProgressKept = 16 << 10

// outputs are the calls an extension runs now, by id, with the output
// each has sent. Its zero value is ready.
type outputs struct {
	mu   sync.Mutex
	byID map[string]*output
}

// output is the kept end of one call's progress.
type output struct {
	mu   sync.Mutex
	tail []byte
	cut  bool // more came than tail holds
}

// begin counts the call id in; end counts it out. Two calls of one id
// at once share their output.
func (o *outputs) begin(id string) (out *output, end func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byID == nil {
		o.byID = map[string]*output{}
	}
	out = o.byID[id]
	if out == nil {
		out = &output{}
		o.byID[id] = out
	}
	return out, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.byID[id] == out {
			delete(o.byID, id)
		}
	}
}

func (o *outputs) get(id string) *output {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.byID[id]
}

func (o *output) add(text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tail = append(o.tail, text...)
	if len(o.tail) > 2*MaxProgressKept {
		o.tail, o.cut = append(o.tail[:0], o.tail[len(o.tail)-MaxProgressKept:]...), true
	}
}

// text is the output kept, valid UTF-8, at most MaxProgressKept bytes,
// starting at a whole line (after a note) when its start was cut.
func (o *output) text() string {
	o.mu.Lock()
	raw, cut := o.tail, o.cut
	if len(raw) > MaxProgressKept {
		raw, cut = raw[len(raw)-MaxProgressKept:], true
	}
	s := string(raw)
	o.mu.Unlock()
	if !cut {
		return conversation.ValidText(s)
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 && i+1 < len(s) {
		s = s[i+1:]
	}
	return "[output cut: showing its last " + fmt.Sprint(len(s)) + " bytes]\n" + conversation.ValidText(s)
}

// interrupted is the result of a call the user interrupted that gave no
// answer of its own: the output it sent so far, then why there is no
// more; or, when it sent none, the reason alone as before.
func interrupted(out *output, after time.Duration, why string) string {
	text := ""
	if out != nil {
		text = out.text()
	}
	if text == "" {
		return "interrupted by the user while running; " + why
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return fmt.Sprintf("%s[interrupted by the user after %s, while running; this is its output until then; %s]", text, roundElapsed(after), why)
}

// roundElapsed is d as people read a call's time: 3.2s, 45ms, 2m5s.
func roundElapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// ToolProgress takes a piece of output of a call the extension runs; a
// call it does not run now is ignored.
func (h *hostServer) ToolProgress(_ context.Context, req *pb.ToolProgressRequest) (*pb.ToolProgressResponse, error) {
	if !h.ext.ready.Load() || req.GetText() == "" {
		return &pb.ToolProgressResponse{}, nil
	}
	out := h.ext.outputs.get(req.GetToolCallId())
	if out == nil {
		return &pb.ToolProgressResponse{}, nil
	}
	text := conversation.ValidText(req.GetText())
	out.add(text)
	if pr, ok := h.rec.(ProgressRecorder); ok {
		pr.ToolProgress(h.ext.Name(), req.GetToolCallId(), text)
	}
	return &pb.ToolProgressResponse{}, nil
}

// GetCacheEstimate answers with the Recorder's estimate (API v7).
func (h *hostServer) GetCacheEstimate(context.Context, *pb.GetCacheEstimateRequest) (*pb.GetCacheEstimateResponse, error) {
	cr, ok := h.rec.(CacheRecorder)
	if !ok {
		return &pb.GetCacheEstimateResponse{}, nil
	}
	tokens, last := cr.CacheEstimate()
	resp := &pb.GetCacheEstimateResponse{Tokens: int64(tokens)}
	if !last.IsZero() {
		resp.LastReplyUnixMs = last.UnixMilli()
	}
	return resp, nil
}
