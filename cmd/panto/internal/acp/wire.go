package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// wire is stdout as the connection writes it: one JSON-RPC message a
// line, each in one Write (acp-go-sdk's). It adds two things the SDK
// has no hook for: messages of the schema the SDK does not model yet
// (the notice update), written whole between the SDK's, and gates that
// open once a given session's session/new response has gone out, so
// that no session/update of a session precedes it.
type wire struct {
	mu    sync.Mutex
	w     io.Writer
	gates map[string]chan struct{}
	// answered counts the responses written, for the shutdown to wait
	// for those of the requests under way (answered).
	answered int
	changed  chan struct{}

	// Requests of panto's the SDK does not model (request): their ids
	// are strings of panto's own ("panto-N"), never the SDK's numbers,
	// and peek hands their responses back here (answer).
	nextID  int
	waiting map[string]chan rawResponse
}

// rawResponse is the response to a request sent with request.
type rawResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func newWire(w io.Writer) *wire {
	return &wire{w: w, gates: map[string]chan struct{}{}, changed: make(chan struct{}), waiting: map[string]chan rawResponse{}}
}

// Write writes one message, and opens the gate of the session whose
// session/new response it is.
func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.w.Write(p)
	if isResponse(p) {
		w.answered++
		close(w.changed)
		w.changed = make(chan struct{})
	}
	if err == nil && len(w.gates) > 0 && bytes.Contains(p, []byte(`"result"`)) {
		for id, ch := range w.gates {
			if bytes.Contains(p, []byte(`"sessionId":"`+id+`"`)) {
				close(ch)
				delete(w.gates, id)
			}
		}
	}
	return n, err
}

// isResponse reports whether the message p is a response: an id and no
// method.
func isResponse(p []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(p, &m) == nil && len(m.ID) > 0 && m.Method == ""
}

// answeredAtLeast waits until n responses have been written, or done.
func (w *wire) answeredAtLeast(n int, done <-chan struct{}) {
	for {
		w.mu.Lock()
		got, changed := w.answered, w.changed
		w.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-done:
			return
		}
	}
}

// gate returns a channel closed once the response that names the
// session id has been written (session/new's).
func (w *wire) gate(id string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	w.gates[id] = ch
	return ch
}

// rawIDPrefix starts the ids of panto's own requests.
const rawIDPrefix = "panto-"

// request sends a request the SDK does not model and waits for its
// response, or for ctx; a cancelled request is withdrawn with
// $/cancel_request.
func (w *wire) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	w.mu.Lock()
	w.nextID++
	id := fmt.Sprintf("%s%d", rawIDPrefix, w.nextID)
	ch := make(chan rawResponse, 1)
	w.waiting[id] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.waiting, id)
		w.mu.Unlock()
	}()
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s (code %d)", method, r.Error.Message, r.Error.Code)
		}
		return r.Result, nil
	case <-ctx.Done():
		_ = w.notify("$/cancel_request", map[string]any{"requestId": id})
		return nil, context.Cause(ctx)
	}
}

// answer hands back the response to one of panto's own requests; false
// when line is no such response.
func (w *wire) answer(line []byte) bool {
	if !bytes.Contains(line, []byte(`"`+rawIDPrefix)) {
		return false
	}
	var m struct {
		ID     string `json:"id"`
		Method string `json:"method"`
		rawResponse
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "" || !strings.HasPrefix(m.ID, rawIDPrefix) {
		return false
	}
	w.mu.Lock()
	ch := w.waiting[m.ID]
	w.mu.Unlock()
	if ch != nil {
		ch <- m.rawResponse
	}
	return true
}

// notify writes a JSON-RPC notification the SDK does not model.
func (w *wire) notify(method string, params any) error {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// peek is stdin as the connection reads it, unchanged. It looks at some
// messages on the way, before the SDK dispatches them, for what the
// SDK's types drop or do not say: the client's session capabilities
// (initialize), and which session a session/cancel or a session/prompt
// is about — the SDK cancels a session's running prompt for both, and
// panto answers the two differently (cancelled; the second refused).
type peek struct {
	r    io.Reader
	line []byte
	// long is set while a line longer than maxPeek goes by: not looked at.
	long bool
	// seen is told each message looked at, in the order they came.
	seen func(method string, params json.RawMessage)
	// answer is offered each line first: the responses to panto's own
	// requests (wire.answer).
	answer func(line []byte) bool
}

// maxPeek bounds the line peek keeps to look at.
const maxPeek = 16 << 20

// peeked are the methods peek looks at.
var peeked = [][]byte{[]byte(`"initialize"`), []byte(`"session/cancel"`), []byte(`"session/prompt"`)}

func (p *peek) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.look(b[:n])
	}
	return n, err
}

func (p *peek) look(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.keep(b)
			return
		}
		p.keep(b[:i])
		b = b[i+1:]
		if !p.long {
			p.message(p.line)
		}
		p.line, p.long = p.line[:0], false
	}
}

func (p *peek) keep(b []byte) {
	if p.long || len(p.line)+len(b) > maxPeek {
		p.line, p.long = p.line[:0], true
		return
	}
	p.line = append(p.line, b...)
}

func (p *peek) message(line []byte) {
	if p.answer != nil && p.answer(line) {
		return
	}
	found := false
	for _, m := range peeked {
		if bytes.Contains(line, m) {
			found = true
			break
		}
	}
	if !found {
		return
	}
	var msg struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &msg) == nil && msg.Method != "" {
		p.seen(msg.Method, msg.Params)
	}
}
