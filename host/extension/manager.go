package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/internal/queue"
	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
)

// Manager runs a session's extensions.
type Manager struct {
	opts Options
	rec  Recorder
	// exts are the extensions in load order: the order every event is
	// delivered in. A restart (restart.go) puts the new Ext in the old
	// one's place, under extMu; read them with list.
	extMu sync.RWMutex
	exts  []*Ext
	// started is what session_start told the extensions (a restarted one
	// is told it again); nil before.
	started *SessionStart
	// life ends when Close begins: a restart under way is cancelled, and
	// none begins.
	life    context.Context
	endLife context.CancelFunc

	// changes holds system_prompt_changed events; one goroutine delivers
	// them in order, never from inside a Host call (that could deadlock).
	// It is unbounded, so no change is ever dropped, and closed by Close:
	// a change that arrives later (an extension's background goroutine
	// still editing) is recorded but told to nobody. It is the queue the
	// session's event subscriptions use (host/internal/queue).
	changes *queue.Queue[*pb.SystemPromptChanged]
	done    chan struct{} // closed once every queued change is delivered

	// clashes holds the tool clashes already reported (see reportClash).
	clashMu sync.Mutex
	clashes map[string]bool

	// required holds the required extensions that did not start (see
	// required.go): tool calls are blocked while there are any.
	required requiredSet

	// fatal is the start failure of the extensions that had to start.
	fatalMu sync.Mutex
	fatal   error
}

// Start launches the extensions concurrently and initialises them. The
// result keeps the order of specs. One that fails to start is reported on
// opts.Report and left out; the others run.
func Start(ctx context.Context, specs []Spec, rec Recorder, opts Options) *Manager {
	opts.defaults()
	m := &Manager{opts: opts, rec: rec, changes: queue.New[*pb.SystemPromptChanged](), done: make(chan struct{})}
	m.life, m.endLife = context.WithCancel(context.WithoutCancel(ctx))
	started := make([]*Ext, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ext, err := start(ctx, spec, rec, opts, m.report)
			if err != nil {
				if spec.MustStart && ctx.Err() == nil {
					m.setFatal(err)
				}
				if spec.Required {
					m.required.add(spec, "", err)
					err = requiredStartErr(spec, err)
				}
				if ctx.Err() == nil { // panto stopping is not the extension's failure
					m.report(err)
				}
				return
			}
			started[i] = ext
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, e := range started {
		if e == nil {
			continue
		}
		if seen[e.Name()] {
			err := fmt.Errorf("extension %s (%s): another extension already has that name; not loaded", e.Name(), e.spec.Path)
			if e.spec.Required {
				m.required.add(e.spec, e.Name(), err)
				err = requiredStartErr(e.spec, err)
			}
			m.report(err)
			e.stop(true, opts.HookTimeout)
			continue
		}
		seen[e.Name()] = true
		m.exts = append(m.exts, e)
	}
	for _, e := range m.list() {
		go m.watch(e)
	}
	go m.deliverChanges()
	return m
}

// list returns the extensions in load order, as they are now.
func (m *Manager) list() []*Ext {
	m.extMu.RLock()
	defer m.extMu.RUnlock()
	return slices.Clone(m.exts)
}

// setFatal records the start failure of an extension that must start.
func (m *Manager) setFatal(err error) {
	m.fatalMu.Lock()
	defer m.fatalMu.Unlock()
	m.fatal = errors.Join(m.fatal, err)
}

// Fatal is the start failure of each extension that had to start
// (Spec.MustStart), joined; nil when there was none.
func (m *Manager) Fatal() error {
	m.fatalMu.Lock()
	defer m.fatalMu.Unlock()
	return m.fatal
}

// Extensions returns the running extensions in load order.
func (m *Manager) Extensions() []*Ext { return m.list() }

// Names returns the loaded extensions' names in load order.
func (m *Manager) Names() []string {
	out := []string{}
	for _, e := range m.list() {
		if e.Disabled() == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// Infos returns what each enabled extension said about itself in Init,
// in load order.
func (m *Manager) Infos() []Info {
	var out []Info
	for _, e := range m.list() {
		if e.Disabled() == nil {
			out = append(out, e.Info())
		}
	}
	return out
}

// NamedStop is how one extension's process ended.
type NamedStop struct {
	Name string
	Stop
}

// Stops says how each extension that has stopped ended, by name, in load
// order (once Close has returned, every one of them).
func (m *Manager) Stops() []NamedStop {
	var out []NamedStop
	for _, e := range m.list() {
		if st, ok := e.Stopped(); ok {
			out = append(out, NamedStop{Name: e.Name(), Stop: st})
		}
	}
	return out
}

func (m *Manager) report(err error) {
	m.opts.Logger.Error("extension failed", "error", err)
	if m.opts.Report != nil {
		m.opts.Report(err)
	}
}

// disable stops using e for the rest of the session: the error is shown
// once, the process killed.
func (m *Manager) disable(e *Ext, err error) {
	e.mu.Lock()
	if e.disabled != nil {
		e.mu.Unlock()
		return
	}
	e.disabled = err
	e.mu.Unlock()
	shown := err
	if e.Handles(protocol.EventToolCall) {
		// A safeguard: say what that blocks and what to do.
		shown = fmt.Errorf("%w; as it checks tool calls, panto runs none until it is back. %s", err, whatToDo(e.Name()))
	}
	m.report(fmt.Errorf("extension %s disabled for this session: %w", e.Name(), shown))
	go e.stop(false, 0) // it crashed, hung or lied: no Shutdown call
	// What it put in the prompt describes an extension that is gone (its
	// tools are no longer offered): panto takes its sections out.
	if derr := m.rec.DisposeSections(e.Name(), "extension "+e.Name()+" was disabled ("+err.Error()+")"); derr != nil {
		m.report(fmt.Errorf("extension %s: remove its sections: %w", e.Name(), derr))
	}
}

// callErr classifies a gRPC error of a call to an extension: a crash,
// hang or protocol failure disables the extension.
func callErr(err error, timeout bool) error {
	switch {
	case timeout || status.Code(err) == codes.DeadlineExceeded:
		return errors.New("it did not answer within the hook deadline")
	case status.Code(err) == codes.Unavailable:
		// The transport's words ("connection error: desc = ...") are for
		// the log, not the user.
		return errors.New("it crashed or exited")
	}
	return fmt.Errorf("bad reply: %w", err)
}

// errNotSent is wrapped by the error of a call panto could not send: the
// extension did nothing wrong and stays enabled.
var errNotSent = errors.New("panto could not send the call")

// checkSend returns an error wrapping errNotSent when req is too large to
// send (over protocol.MaxMessageSize), so it is never sent.
func checkSend(what string, req proto.Message) error {
	if n := proto.Size(req); n > protocol.MaxMessageSize {
		return fmt.Errorf("%w: %s is %d bytes, over the protocol's limit of %d", errNotSent, what, n, protocol.MaxMessageSize)
	}
	return nil
}

// sendSide reports whether err, from a call, is a failure on panto's side
// (the request could not be marshalled or was too large): not the
// extension's fault.
func sendSide(err error) bool {
	st := status.Convert(err)
	return st.Code() == codes.ResourceExhausted ||
		(st.Code() == codes.Internal && strings.HasPrefix(st.Message(), "grpc: error while marshaling"))
}

// fire delivers an event to every extension that handles it, in load
// order, each under the hook deadline. Edits returned in a response are
// recorded when it returns. Domain errors are shown; the extension stays.
func (m *Manager) fire(ctx context.Context, req *pb.EventRequest) {
	for _, e := range m.list() {
		if e.Disabled() != nil || !e.Handles(req.Event) {
			continue
		}
		m.ask(ctx, e, req)
	}
}

// ask delivers one event to one extension under the hook deadline and
// returns its response. The error says why there is no usable answer: the
// call failed (the extension is then disabled, unless the failure was on
// panto's side or panto is stopping), or it answered a domain error
// (shown). Edits in the response are recorded either way.
func (m *Manager) ask(ctx context.Context, e *Ext, req *pb.EventRequest) (*pb.EventResponse, error) {
	if err := checkSend("the "+req.Event+" event", req); err != nil {
		m.report(fmt.Errorf("extension %s: %w", e.Name(), err))
		return nil, err
	}
	hctx, cancel := m.hookContext(ctx, e)
	defer cancel()
	resp, err := e.conn.Extension.HandleEvent(hctx, req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("interrupted: %w", context.Cause(ctx))
		case sendSide(err):
			err = fmt.Errorf("%w: the %s event: %v", errNotSent, req.Event, status.Convert(err).Message())
			m.report(fmt.Errorf("extension %s: %w", e.Name(), err))
			return nil, err
		}
		if e.crashed(err, timedOut(hctx)) {
			// Its process died: restarted once (restart.go); the call
			// itself has no answer.
			m.opts.Logger.Debug("extension call failed", "extension", e.Name(), "event", req.Event, "error", err)
			m.lost(e)
			return nil, e.Disabled()
		}
		err = callErr(err, timedOut(hctx))
		m.disable(e, err)
		return nil, err
	}
	m.applyEdits(e, resp.GetEdits())
	if d := resp.GetError(); d != nil {
		err := fmt.Errorf("%s: %s", req.Event, d.GetMessage())
		m.report(fmt.Errorf("extension %s: %w", e.Name(), err))
		return resp, err
	}
	return resp, nil
}

func (m *Manager) applyEdits(e *Ext, edits []*pb.SystemEdit) {
	for _, ed := range edits {
		if k := ed.GetKey(); k != "" {
			if err := m.rec.SetSection(e.Name(), k, ed.GetText()); err != nil {
				m.report(fmt.Errorf("extension %s: record section %q: %w", e.Name(), k, err))
			}
			continue
		}
		mode := conversation.Mode(ed.GetMode())
		if mode != conversation.ModeAppend && mode != conversation.ModeReplace {
			m.report(fmt.Errorf("extension %s: edit with unknown mode %q ignored (want append or replace)", e.Name(), ed.GetMode()))
			continue
		}
		if err := m.rec.EditSystem(e.Name(), Edit{Mode: mode, Text: ed.GetText(), Bare: mode == conversation.ModeReplace && ed.GetBare()}); err != nil {
			m.report(fmt.Errorf("extension %s: record system edit: %w", e.Name(), err))
		}
	}
}

// Command is a slash command of an extension.
type Command struct {
	Extension   string
	Name        string
	Description string
	Usage       string
}

// Commands lists the enabled extensions' commands, in load order. The
// first extension to claim a name owns it.
func (m *Manager) Commands() []Command {
	var out []Command
	seen := map[string]bool{}
	for _, e := range m.list() {
		if e.Disabled() != nil {
			continue
		}
		for _, c := range e.info.GetCommands() {
			if seen[c.GetName()] {
				continue
			}
			seen[c.GetName()] = true
			out = append(out, Command{Extension: e.Name(), Name: c.GetName(), Description: c.GetDescription(), Usage: c.GetUsage()})
		}
	}
	return out
}

// ErrNoCommand is returned by RunCommand for a name no enabled extension
// registered.
var ErrNoCommand = errors.New("no such command")

// RunCommand runs /name args in the extension that owns name.
func (m *Manager) RunCommand(ctx context.Context, name, args string) (string, error) {
	for _, e := range m.list() {
		e = m.live(ctx, e) // one restarting is waited for
		if e.Disabled() != nil {
			continue
		}
		for _, c := range e.info.GetCommands() {
			if c.GetName() != name {
				continue
			}
			hctx, cancel := m.hookContext(ctx, e)
			defer cancel()
			resp, err := e.conn.Extension.RunCommand(hctx, &pb.CommandRequest{Name: name, Args: args})
			if err != nil && sendSide(err) {
				return "", fmt.Errorf("/%s: %w: %v", name, errNotSent, status.Convert(err).Message())
			}
			if err != nil && e.crashed(err, timedOut(hctx)) {
				m.opts.Logger.Debug("extension command failed", "extension", e.Name(), "command", name, "error", err)
				m.lost(e)
				if again := m.live(ctx, e); again != e && again.Disabled() == nil {
					// Whether it ran is not known: the user says whether
					// to run it again.
					return "", fmt.Errorf("/%s: extension %s stopped before it answered (%w) and was restarted; run /%s again if it did not take effect", name, e.Name(), e.Disabled(), name)
				}
				return "", fmt.Errorf("/%s: extension %s: %w", name, e.Name(), e.Disabled())
			}
			if err != nil {
				err = callErr(err, timedOut(hctx))
				m.disable(e, err)
				return "", fmt.Errorf("/%s: extension %s: %w", name, e.Name(), err)
			}
			m.applyEdits(e, resp.GetEdits())
			if resp.GetError() != nil {
				return resp.GetOutput(), fmt.Errorf("/%s: %s", name, resp.GetError().GetMessage())
			}
			return resp.GetOutput(), nil
		}
	}
	return "", fmt.Errorf("/%s: %w", name, ErrNoCommand)
}

// Change is one recorded change of the system prompt.
type Change struct {
	// By is who made it: an extension, or "panto".
	By   string
	Mode conversation.Mode
	// Key is set for a section (as recorded); Text empty then removes it.
	Key, Text, Source string
}

// SystemChanged queues a system_prompt_changed event for the extensions
// that watch it. It never blocks on an extension.
func (m *Manager) SystemChanged(ch Change) {
	if !m.changes.Push(&pb.SystemPromptChanged{Mode: string(ch.Mode), Text: ch.Text, By: ch.By, Key: ch.Key, Source: ch.Source}) {
		m.opts.Logger.Debug("system prompt changed after the extensions closed; not delivered", "by", ch.By)
	}
}

func (m *Manager) deliverChanges() {
	defer close(m.done)
	for {
		ch, ok := m.changes.Pop(context.Background(), nil)
		if !ok {
			return // closed, and every change delivered
		}
		m.fire(context.Background(), &pb.EventRequest{
			Event:   protocol.EventSystemPromptChanged,
			Payload: &pb.EventRequest_SystemPromptChanged{SystemPromptChanged: ch},
		})
	}
}

// Close delivers session_end, drains queued events, asks each extension to
// shut down and kills it, each step bounded (docs/extensions.md). The
// Manager must not be used afterwards.
func (m *Manager) Close(ctx context.Context) {
	m.endLife() // no restart from now on; one under way is cancelled
	m.settleAll()
	// session_end to every extension at once, so the whole takes at most
	// one hook deadline, however many there are. With ctx done (panto is
	// stopping on a signal) there is none.
	req := &pb.EventRequest{Event: protocol.EventSessionEnd, Payload: &pb.EventRequest_SessionEnd{SessionEnd: &pb.SessionEnd{}}}
	var ends sync.WaitGroup
	for _, e := range m.list() {
		if ctx.Err() == nil && e.Disabled() == nil && e.Handles(req.Event) {
			ends.Go(func() { m.ask(ctx, e, req) })
		}
	}
	ends.Wait()
	m.changes.Close()
	<-m.done // the changes queued before now are delivered
	var wg sync.WaitGroup
	for _, e := range m.list() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Shutdown unless it was disabled; one being stopped already
			// (disabled) is waited for.
			e.stop(e.Disabled() == nil, m.opts.HookTimeout)
		}()
	}
	wg.Wait()
}

// hostServer is the Host service one extension calls back.
type hostServer struct {
	pb.UnimplementedHostServer
	ext    *Ext
	rec    Recorder
	logger hclog.Logger
	report func(error)
	// ws is the front end's workspace; nil: none.
	ws Workspace
}

// errNotReady answers a Host call made before Init returned.
var errNotReady = &pb.Error{Message: "the host service answers once Init has returned"}

func (h *hostServer) edit(e Edit) (*pb.SystemEditResponse, error) {
	if !h.ext.ready.Load() {
		return &pb.SystemEditResponse{Error: errNotReady}, nil
	}
	if err := h.rec.EditSystem(h.ext.Name(), e); err != nil {
		h.report(fmt.Errorf("extension %s: system edit refused: %w", h.ext.Name(), err))
		return &pb.SystemEditResponse{Error: &pb.Error{Message: err.Error()}}, nil
	}
	return &pb.SystemEditResponse{}, nil
}

func (h *hostServer) AddSystemMessage(_ context.Context, req *pb.SystemEditRequest) (*pb.SystemEditResponse, error) {
	return h.edit(Edit{Mode: conversation.ModeAppend, Text: req.GetText()})
}

func (h *hostServer) ReplaceSystemMessage(_ context.Context, req *pb.SystemEditRequest) (*pb.SystemEditResponse, error) {
	return h.edit(Edit{Mode: conversation.ModeReplace, Text: req.GetText(), Bare: req.GetBare()})
}

func (h *hostServer) GetSystemPrompt(context.Context, *pb.GetSystemPromptRequest) (*pb.GetSystemPromptResponse, error) {
	resp := &pb.GetSystemPromptResponse{Blocks: conversation.Texts(h.rec.EffectiveSystem())}
	if h.ext.ready.Load() {
		for _, sec := range h.rec.Sections(h.ext.Name()) {
			resp.Sections = append(resp.Sections, &pb.Section{Key: sec.Key, Text: sec.Text, Source: sec.Source})
		}
	}
	return resp, nil
}

func (h *hostServer) section(key, text string) (*pb.SystemEditResponse, error) {
	if !h.ext.ready.Load() {
		return &pb.SystemEditResponse{Error: errNotReady}, nil
	}
	if err := h.rec.SetSection(h.ext.Name(), key, text); err != nil {
		h.report(fmt.Errorf("extension %s: section %q refused: %w", h.ext.Name(), key, err))
		return &pb.SystemEditResponse{Error: &pb.Error{Message: err.Error()}}, nil
	}
	return &pb.SystemEditResponse{}, nil
}

func (h *hostServer) SetSection(_ context.Context, req *pb.SetSectionRequest) (*pb.SystemEditResponse, error) {
	return h.section(req.GetKey(), req.GetText())
}

func (h *hostServer) RemoveSection(_ context.Context, req *pb.RemoveSectionRequest) (*pb.SystemEditResponse, error) {
	return h.section(req.GetKey(), "")
}

func (h *hostServer) GetMessages(context.Context, *pb.GetMessagesRequest) (*pb.GetMessagesResponse, error) {
	msgs := h.rec.Messages()
	var data []byte
	var err error
	if h.ext.ready.Load() && h.ext.desc.APIVersion < 2 {
		data, err = json.Marshal(v1Messages(msgs))
	} else {
		data, err = conversation.MarshalMessages(msgs)
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encode messages: %v", err)
	}
	return &pb.GetMessagesResponse{Messages: data}, nil
}

// v1Messages is msgs in the JSON an API v1 extension reads: a system
// message's blocks as {"type":"system","text":...,"mode":...}, as the
// Go SDK wrote them before messages had the session log's one shape.
func v1Messages(msgs []conversation.Message) any {
	type v1 struct {
		Role    conversation.Role    `json:"role"`
		Content []conversation.Block `json:"content"`
	}
	out := make([]v1, len(msgs))
	for i, m := range msgs {
		out[i] = v1{m.Role, m.Content}
	}
	return out
}

func (h *hostServer) AppendData(_ context.Context, req *pb.AppendDataRequest) (*pb.AppendDataResponse, error) {
	if !h.ext.ready.Load() {
		return &pb.AppendDataResponse{Error: errNotReady}, nil
	}
	if !json.Valid(req.GetData()) {
		return &pb.AppendDataResponse{Error: &pb.Error{Message: "data is not valid JSON"}}, nil
	}
	if err := h.rec.AppendData(h.ext.Name(), req.GetData()); err != nil {
		return &pb.AppendDataResponse{Error: &pb.Error{Message: err.Error()}}, nil
	}
	return &pb.AppendDataResponse{}, nil
}

func (h *hostServer) Log(_ context.Context, req *pb.LogRequest) (*pb.LogResponse, error) {
	l := h.logger.Named(h.ext.spec.Path)
	if h.ext.ready.Load() {
		l = h.logger.Named(h.ext.Name())
	}
	switch req.GetLevel() {
	case "trace":
		l.Trace(req.GetMessage())
	case "debug":
		l.Debug(req.GetMessage())
	case "warn":
		l.Warn(req.GetMessage())
	case "error":
		l.Error(req.GetMessage())
	default:
		l.Info(req.GetMessage())
	}
	return &pb.LogResponse{}, nil
}

// SessionStart is what session_start tells the extensions.
type SessionStart struct {
	SessionID string
	// SessionPath is the log; empty when nothing is recorded.
	SessionPath string
	// Resumed is set for an existing log; Reseeded when the configured
	// prompt had changed and was recorded again.
	Resumed, Reseeded bool
}

// SessionStart delivers session_start.
func (m *Manager) SessionStart(ctx context.Context, ev SessionStart) {
	m.extMu.Lock()
	m.started = &ev
	m.extMu.Unlock()
	m.fire(ctx, sessionStartReq(ev))
}

func sessionStartReq(ev SessionStart) *pb.EventRequest {
	return &pb.EventRequest{Event: protocol.EventSessionStart, Payload: &pb.EventRequest_SessionStart{SessionStart: &pb.SessionStart{
		SessionId: ev.SessionID, SessionPath: ev.SessionPath, Resumed: ev.Resumed, Reseeded: ev.Reseeded,
	}}}
}

// BeforeTurn delivers before_turn; edits made in it shape this turn.
func (m *Manager) BeforeTurn(ctx context.Context, userText string) {
	m.fire(ctx, &pb.EventRequest{Event: protocol.EventBeforeTurn, Payload: &pb.EventRequest_BeforeTurn{BeforeTurn: &pb.BeforeTurn{UserText: userText}}})
}

// TurnEnd delivers turn_end with the recorded reply.
func (m *Manager) TurnEnd(ctx context.Context, reply conversation.Message, stopReason string) {
	data, err := json.Marshal(reply)
	if err != nil {
		m.opts.Logger.Error("encode turn_end message", "error", err)
		return
	}
	m.fire(ctx, &pb.EventRequest{Event: protocol.EventTurnEnd, Payload: &pb.EventRequest_TurnEnd{TurnEnd: &pb.TurnEnd{AssistantMessage: data, StopReason: stopReason}}})
}

// errDisabledInConfig is why an extension named in disabled_extensions
// is disabled: the user's choice, not a failure.
var errDisabledInConfig = errors.New("disabled in config")

// Disable stops the named extensions (config disabled_extensions) before
// any event reaches them.
func (m *Manager) Disable(names []string) {
	for _, n := range names {
		m.required.drop(n) // the user's choice: not missing
		for _, e := range m.list() {
			if e.Name() == n {
				e.mu.Lock()
				e.disabled = errDisabledInConfig
				e.mu.Unlock()
				go e.stop(true, m.opts.HookTimeout) // healthy: ask it to shut down
			}
		}
	}
}
