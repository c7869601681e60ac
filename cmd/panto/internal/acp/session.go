package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

// session is one ACP session: a session of the app layer, its events
// sent to the client as session/update notifications by one goroutine
// (pump), in the order the session emitted them.
type session struct {
	a    *agent
	id   string
	cwd  string
	app  *app.App
	sess app.Session

	// gate is handed the channel the pump waits on before it sends
	// anything (release): the session/new response goes first.
	gate chan (<-chan struct{})
	// stop ends the pump's wait at the gate; pumped is closed when the
	// pump has sent the session's last event.
	stop     chan struct{}
	pumped   chan struct{}
	stopOnce sync.Once

	// events is the session's subscription (the pump's, once it runs);
	// unsubscribe ends it. /reload puts another session in sess's place
	// (reload.go): sess, events and unsubscribe change under mu then, and
	// swap is closed once they have.
	events      <-chan host.Event
	unsubscribe context.CancelFunc
	swap        chan struct{}

	mu   sync.Mutex
	turn *turn
	// asked are the questions put to the client, by question id: their
	// requests are cancelled when the question is withdrawn.
	asked map[int64]context.CancelFunc
	// always are the confirms answered for the session ("allow always",
	// "reject always"), by what was asked.
	always map[string]bool
	// edits are the files of edit and write calls under way, as they
	// were before them, by call id: their diffs.
	edits map[string]before
	// titled says the client was given the session's title.
	titled bool
	// started are closed once a call's tool_call has gone out, by call
	// id (a terminal is shown with the call only after it); terminals are
	// the client's terminals a call ran in, released after its last
	// update.
	started   map[string]chan struct{}
	terminals map[string][]string
	// ws is the client's workspace the session's tools use; nil: none.
	ws *workspace
	// early are the notices of the session's start, for the client.
	early []string
	// cost is what the session's requests cost so far, when the model's
	// price is known.
	cost      float64
	costKnown bool

	closeOnce sync.Once
}

// turn is a prompt being answered.
type turn struct {
	cancel context.CancelCauseFunc
	end    chan host.TurnEnd
	// cancelled is set when a session/cancel came for the session;
	// superseded when another session/prompt did (it is refused, and
	// this turn goes on). Both are set as the message is read, before the
	// SDK cancels the prompt's context for it (peek).
	cancelled, superseded atomic.Bool
}

// The causes of a turn stopped by the client.
var (
	errCancelled        = errors.New("cancelled by the client (session/cancel)")
	errRequestCancelled = errors.New("the prompt request was cancelled ($/cancel_request), or the client left")
)

// running returns the turn under way, or nil.
func (s *session) running() *turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn
}

func newSession(a *agent) *session {
	return &session{
		a: a, gate: make(chan (<-chan struct{}), 1), stop: make(chan struct{}), pumped: make(chan struct{}),
		asked: map[int64]context.CancelFunc{}, always: map[string]bool{}, edits: map[string]before{},
		started: map[string]chan struct{}{}, terminals: map[string][]string{},
	}
}

// start opens the session the app readied and starts its pump, held at
// the gate until release.
func (s *session) start(ctx context.Context, ap *app.App) error {
	sess, _, err := ap.Open(ctx)
	if err != nil {
		return err
	}
	info := sess.Info()
	s.mu.Lock()
	s.sess = sess
	s.mu.Unlock()
	s.app, s.id, s.cwd = ap, info.ID, ap.Dirs().CWD
	s.titled = info.Resumed
	if s.ws != nil {
		s.ws.ready.Store(true)
	}
	sctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.events, s.unsubscribe = sess.Subscribe(sctx), cancel
	s.mu.Unlock()
	go s.pump()
	return nil
}

// release lets the pump send once ready is closed.
func (s *session) release(ready <-chan struct{}) { s.gate <- ready }

// update sends one session/update of the session.
func (s *session) update(u acpsdk.SessionUpdate) {
	err := s.a.conn.SessionUpdate(context.Background(), acpsdk.SessionNotification{SessionId: acpsdk.SessionId(s.id), Update: u})
	if err != nil {
		s.app.Logger().Debug("acp: session/update not sent", "session", s.id, "error", err)
	}
}

// pump sends the session's events to the client until they end.
func (s *session) pump() {
	defer close(s.pumped)
	select {
	case ready := <-s.gate:
		select {
		case <-ready:
		case <-s.stop:
		}
	case <-s.stop:
	}
	s.offerCommands()
	s.tellEarly()
	s.mu.Lock()
	events := s.events
	s.mu.Unlock()
	for {
		ev, ok := <-events
		if !ok {
			if events = s.swapped(events); events == nil {
				return
			}
			s.offerCommands() // the session reloaded: its commands may differ
			continue
		}
		if o, isOverflow := ev.(host.Overflow); isOverflow {
			events = s.resubscribe(o)
			continue
		}
		s.show(ev)
	}
}

// current is the session in use.
func (s *session) current() app.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

// resubscribe reads the session afresh after its subscription fell
// behind (a client that stopped reading): it says so, and ends a turn
// whose end was among the events missed.
func (s *session) resubscribe(o host.Overflow) <-chan host.Event {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.unsubscribe()
	s.events, s.unsubscribe = s.current().Subscribe(ctx), cancel
	events := s.events
	s.mu.Unlock()
	s.tell(host.NoticeWarning, fmt.Sprintf("the client fell behind the session by %d events: what came after them until now was not sent (the session log has it all)", o.Pending), "")
	if !s.current().Busy() {
		s.ended(host.TurnEnd{})
	}
	return events
}

// show sends one event.
func (s *session) show(ev host.Event) {
	switch ev := ev.(type) {
	case host.TurnStart:
		s.titleOnce(ev.Text)
	case host.TextDelta:
		s.update(acpsdk.UpdateAgentMessageText(ev.Text))
	case host.ThinkingDelta:
		s.update(acpsdk.UpdateAgentThoughtText(ev.Text))
	case host.Reply:
		if !ev.Streamed {
			s.replyText(ev)
		}
	case host.ToolStart:
		s.toolStart(ev)
	case host.ToolEnd:
		s.toolEnd(ev)
	case host.Usage:
		s.usage(ev)
	case host.ModelChanged:
		s.update(acpsdk.SessionUpdate{ConfigOptionUpdate: &acpsdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions()}})
	case host.Notice:
		s.tell(ev.Level, ev.Text, ev.By)
	case host.Retry:
		s.tell(host.NoticeInfo, fmt.Sprintf("retrying the request (%d of %d) in %s: %s", ev.Attempt, ev.Max, ev.Wait.Round(1e8), ev.Reason), "")
	case host.CompactionStart:
		s.tell(host.NoticeInfo, "compacting the conversation (older messages are summarised; the prompt stays)", "")
	case host.CompactionDone:
		if ev.Err != nil {
			s.tell(host.NoticeWarning, "compaction failed: "+ev.Err.Error(), "")
		}
	case host.Status:
		s.app.Logger().Debug("acp: extension status", "extension", ev.By, "key", ev.Key, "text", ev.Text)
	case host.Question:
		s.ask(ev)
	case host.QuestionClosed:
		s.withdraw(ev.ID)
	case host.Error:
		s.app.Logger().Warn("acp: turn failed", "session", s.id, "error", ev.Err)
	case host.TurnEnd:
		s.ended(ev)
	}
}

// replyText sends a reply that did not stream.
func (s *session) replyText(r host.Reply) {
	var text, thinking strings.Builder
	for _, b := range r.Message.Content {
		switch b.Type {
		case conversation.TypeText:
			text.WriteString(b.Text)
		case conversation.TypeThinking:
			thinking.WriteString(b.Thinking)
		}
	}
	if thinking.Len() > 0 {
		s.update(acpsdk.UpdateAgentThoughtText(thinking.String()))
	}
	if text.Len() > 0 {
		s.update(acpsdk.UpdateAgentMessageText(text.String()))
	}
}

// titleOnce gives a new session its title, from the first message.
func (s *session) titleOnce(text string) {
	s.mu.Lock()
	done := s.titled
	s.titled = true
	s.mu.Unlock()
	if done {
		return
	}
	if t := title(text); t != "" {
		s.update(acpsdk.SessionUpdate{SessionInfoUpdate: &acpsdk.SessionSessionInfoUpdate{Title: &t}})
	}
}

// toolStart sends a tool call about to run: its tool_call, then that it
// runs.
func (s *session) toolStart(ev host.ToolStart) {
	v := describe(ev.Name, ev.Input, s.cwd)
	if v.file != "" {
		text, exists, ok := snapshot(v.file)
		s.mu.Lock()
		s.edits[ev.ID] = before{path: v.file, text: text, exists: exists, ok: ok}
		s.mu.Unlock()
	}
	id := acpsdk.ToolCallId(ev.ID)
	s.update(acpsdk.StartToolCall(id, v.title,
		acpsdk.WithStartKind(v.kind), acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending),
		acpsdk.WithStartLocations(v.locations), acpsdk.WithStartRawInput(v.raw)))
	s.update(acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress)))
	close(s.callStarted(ev.ID))
}

// callStarted is closed once the call's tool_call has gone out.
func (s *session) callStarted(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.started[id]
	if !ok {
		ch = make(chan struct{})
		s.started[id] = ch
	}
	return ch
}

// terminalOf records that call runs in the client's terminal tid.
func (s *session) terminalOf(call, tid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.terminals[call] = append(s.terminals[call], tid)
}

// releaseTerminal releases a terminal of the client's.
func (s *session) releaseTerminal(tid string) {
	_, err := s.a.conn.ReleaseTerminal(context.Background(), acpsdk.ReleaseTerminalRequest{SessionId: acpsdk.SessionId(s.id), TerminalId: tid})
	if err != nil {
		s.app.Logger().Debug("acp: terminal not released", "terminal", tid, "error", err)
	}
}

// toolEnd sends a call's end: completed or failed, with its result and,
// for an edit or write that ran, its diff.
func (s *session) toolEnd(ev host.ToolEnd) {
	s.mu.Lock()
	b, isEdit := s.edits[ev.ID]
	delete(s.edits, ev.ID)
	terms := s.terminals[ev.ID]
	delete(s.terminals, ev.ID)
	delete(s.started, ev.ID)
	s.mu.Unlock()
	status := acpsdk.ToolCallStatusCompleted
	if ev.IsError {
		status = acpsdk.ToolCallStatusFailed
	}
	var content []acpsdk.ToolCallContent
	for _, tid := range terms {
		content = append(content, acpsdk.ToolTerminalRef(tid))
	}
	// Written through the client: the diff of what the call read and
	// wrote there, exact; else the file before and after the call.
	var through []acpsdk.ToolCallContent
	if s.ws != nil && s.ws.files {
		through = s.ws.diffs(ev.ID, func(path string) (string, bool) {
			return b.text, isEdit && b.ok && b.exists && b.path == path
		})
	}
	switch {
	case ev.IsError:
	case len(through) > 0:
		content = append(content, through...)
	case isEdit:
		content = append(content, b.diff(ev.Result)...)
	}
	content = append(content, resultContent(ev.Result)...)
	opts := []acpsdk.ToolCallUpdateOpt{acpsdk.WithUpdateStatus(status), acpsdk.WithUpdateRawOutput(map[string]any{"result": ev.Result, "is_error": ev.IsError})}
	if content != nil {
		opts = append(opts, acpsdk.WithUpdateContent(content))
	}
	s.update(acpsdk.UpdateToolCall(acpsdk.ToolCallId(ev.ID), opts...))
	// The terminals go once the last update that shows them has.
	for _, tid := range terms {
		go s.releaseTerminal(tid)
	}
}

// usage sends the context's size and, when the model's price is known,
// what the session cost so far.
func (s *session) usage(u host.Usage) {
	s.mu.Lock()
	if u.CostKnown {
		s.costKnown = true
		s.cost += u.CostUSD
	}
	cost, costKnown := s.cost, s.costKnown
	s.mu.Unlock()
	used, size := s.current().ContextUsage()
	up := &acpsdk.SessionUsageUpdate{Used: used, Size: size}
	if costKnown {
		up.Cost = &acpsdk.Cost{Amount: cost, Currency: "USD"}
	}
	s.update(acpsdk.SessionUpdate{UsageUpdate: up})
}

// tell shows the user a notice: as a notice update when the client
// shows them, and in panto's log and on stderr always.
func (s *session) tell(level host.NoticeLevel, text, by string) {
	who := "panto"
	if by != "" {
		who = by
	}
	if s.app != nil {
		s.app.Logger().Info("acp: notice", "session", s.id, "by", who, "level", string(level), "text", text)
	}
	if by == "" {
		fmt.Fprintf(s.a.o.Stderr, "panto: %s\n", text)
	} else {
		fmt.Fprintf(s.a.o.Stderr, "panto: %s: %s\n", by, text)
	}
	s.tellClient(level, text, by)
}

// tellClient sends a notice to a client that shows them.
func (s *session) tellClient(level host.NoticeLevel, text, by string) {
	if !s.a.notices.Load() {
		return
	}
	severity := "info"
	switch level {
	case host.NoticeWarning:
		severity = "warning"
	case host.NoticeError:
		severity = "error"
	}
	titleText, desc, _ := strings.Cut(text, "\n")
	if by != "" {
		titleText = by + ": " + titleText
	}
	n := map[string]any{"sessionUpdate": "notice", "severity": severity, "title": cut(titleText, 200)}
	if strings.TrimSpace(desc) != "" || len([]rune(titleText)) > 200 {
		n["description"] = text
	}
	if err := s.a.wire.notify(acpsdk.ClientMethodSessionUpdate, map[string]any{"sessionId": s.id, "update": n}); err != nil && s.app != nil {
		s.app.Logger().Debug("acp: notice not sent", "error", err)
	}
}

// notice is the app layer's Env.Notify: what the session's start tells
// (a project's settings ignored until trusted, an extension skipped). It
// goes to stderr at once, and to the client once the session's
// session/new response has gone out (the pump sends them first).
func (s *session) notice(n string) {
	fmt.Fprintf(s.a.o.Stderr, "panto: %s\n", n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.early) < maxEarly {
		s.early = append(s.early, n)
	}
}

// maxEarly bounds the start's notices kept for the client.
const maxEarly = 32

// tellEarly sends the client the start's notices.
func (s *session) tellEarly() {
	s.mu.Lock()
	early := s.early
	s.early = nil
	s.mu.Unlock()
	for _, n := range early {
		level := host.NoticeInfo
		if strings.HasPrefix(n, "warning: ") {
			level, n = host.NoticeWarning, strings.TrimPrefix(n, "warning: ")
		}
		s.tellClient(level, n, "")
	}
}

// prompt runs one turn: the client's message, streamed as updates, all
// sent before the answer.
func (s *session) prompt(ctx context.Context, text string, images []conversation.Block) (acpsdk.PromptResponse, error) {
	if cmd, ok := app.ParseCommand(text); ok {
		if handled, resp, err := s.command(ctx, cmd); handled {
			return resp, err
		}
	}
	// The turn's context is its own: the SDK cancels the prompt's for a
	// session/cancel, for another prompt of the session and for a
	// $/cancel_request alike, and each is answered differently (watch).
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	t := &turn{cancel: cancel, end: make(chan host.TurnEnd, 1)}
	s.mu.Lock()
	if s.turn != nil {
		s.mu.Unlock()
		return acpsdk.PromptResponse{}, &acpsdk.RequestError{Code: -32600, Message: "a prompt is already running in this session: wait for its response, or send session/cancel"}
	}
	s.turn = t
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.turn == t {
			s.turn = nil
		}
		s.mu.Unlock()
	}()
	stopWatch := context.AfterFunc(ctx, func() {
		switch {
		case t.cancelled.Load():
			cancel(errCancelled)
		case t.superseded.Load():
			// Another prompt came: it is refused, this one goes on.
		default:
			cancel(errRequestCancelled)
		}
	})
	defer stopWatch()
	start := func() error { return s.current().Turn(tctx, text) }
	if len(images) > 0 {
		start = func() error {
			tw, ok := s.current().(app.TurnWith)
			if !ok {
				return errors.New("this session takes no images")
			}
			return tw.TurnWith(tctx, host.TurnInput{Text: text, Attached: images})
		}
	}
	if err := start(); err != nil {
		if errors.Is(err, host.ErrBusy) {
			return acpsdk.PromptResponse{}, &acpsdk.RequestError{Code: -32600, Message: "the session is busy (a compaction or a model change runs): send the prompt again once it is done"}
		}
		return acpsdk.PromptResponse{}, &acpsdk.RequestError{Code: -32603, Message: err.Error()}
	}
	end := <-t.end
	switch cause := context.Cause(tctx); {
	case t.cancelled.Load():
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	case errors.Is(cause, errRequestCancelled):
		// $/cancel_request of the prompt itself, or the client left.
		return acpsdk.PromptResponse{}, acpsdk.NewRequestCancelled(map[string]any{"error": "the prompt request was cancelled; the turn stopped (what it recorded stays in the session)"})
	case errors.Is(end.Err, host.ErrMaxSteps):
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonMaxTurnRequests}, nil
	case end.Err != nil:
		return acpsdk.PromptResponse{}, &acpsdk.RequestError{Code: -32603, Message: end.Err.Error()}
	}
	return acpsdk.PromptResponse{StopReason: stopReason(end.StopReason)}, nil
}

// stopReason is ACP's word for why the model stopped.
func stopReason(r host.StopReason) acpsdk.StopReason {
	switch r {
	case host.StopMaxTokens:
		return acpsdk.StopReasonMaxTokens
	case host.StopRefusal:
		return acpsdk.StopReasonRefusal
	}
	return acpsdk.StopReasonEndTurn
}

// ended hands the turn its end, once its updates have all been sent.
func (s *session) ended(end host.TurnEnd) {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t == nil {
		return
	}
	select {
	case t.end <- end:
	default:
	}
}

// cancel stops the turn under way, as Ctrl-C does, and the questions it
// asked the client.
func (s *session) cancel() {
	s.mu.Lock()
	t := s.turn
	asked := make([]context.CancelFunc, 0, len(s.asked))
	for _, c := range s.asked {
		asked = append(asked, c)
	}
	s.mu.Unlock()
	for _, c := range asked {
		c()
	}
	if t != nil {
		t.cancelled.Store(true)
		t.cancel(errCancelled)
	}
}

// close closes the session, its log complete, once its events are all
// sent.
func (s *session) close(ctx context.Context) {
	s.closeOnce.Do(func() {
		s.cancel()
		if err := s.current().Close(ctx); err != nil {
			fmt.Fprintf(s.a.o.Stderr, "panto: close session %s: %v\n", s.id, err)
		}
		s.stopOnce.Do(func() { close(s.stop) })
		<-s.pumped
		s.mu.Lock()
		s.unsubscribe()
		s.mu.Unlock()
		s.mu.Lock()
		left := s.terminals
		s.terminals = map[string][]string{}
		s.mu.Unlock()
		for _, terms := range left {
			for _, tid := range terms {
				s.releaseTerminal(tid)
			}
		}
		s.app.Close()
	})
}
