package extension

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/imagefit"
	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/serializers"
)

// owner returns the extension that owns the tool name: the first enabled
// one in load order that offers it, as Tools offers it. When every
// extension offering it is disabled, it returns the first of them, so the
// caller can say why the tool is unavailable.
func (m *Manager) owner(name string) (*Ext, *pb.Tool) {
	var (
		off     *Ext
		offTool *pb.Tool
	)
	for _, e := range m.list() {
		for _, t := range e.tools() {
			if t.GetName() != name {
				continue
			}
			if e.Disabled() == nil {
				return e, t
			}
			if off == nil {
				off, offTool = e, t
			}
		}
	}
	return off, offTool
}

// Tools returns the tools of the enabled extensions, in load order; when
// two offer the same name the first keeps it, and the clash is reported,
// once.
func (m *Manager) Tools() []serializers.Tool {
	var out []serializers.Tool
	owners := map[string]*Ext{}
	for _, e := range m.list() {
		if e.Disabled() != nil {
			continue
		}
		for _, t := range e.tools() {
			if first := owners[t.GetName()]; first != nil {
				m.reportClash(t.GetName(), first, e)
				continue
			}
			owners[t.GetName()] = e
			out = append(out, serializers.Tool{Name: t.GetName(), Description: t.GetDescription(), Parameters: t.GetParameters()})
		}
	}
	return out
}

// reportClash reports, once per tool and extension, that second's tool
// name is hidden by first's.
func (m *Manager) reportClash(name string, first, second *Ext) {
	key := name + "\x00" + second.Name()
	m.clashMu.Lock()
	if m.clashes == nil {
		m.clashes = map[string]bool{}
	}
	shown := m.clashes[key]
	m.clashes[key] = true
	m.clashMu.Unlock()
	if !shown {
		m.report(fmt.Errorf("extension %s: tool %q is also offered by extension %s, loaded first, which owns it; %s's is used only if %s is disabled",
			second.Name(), name, first.Name(), second.Name(), first.Name()))
	}
}

// NarrowTools delivers before_request; each extension may only shrink the
// offer. Narrowing is a safeguard, so it fails closed: when an extension
// that narrows the tools cannot be asked (disabled after a failure, or
// failing now), no tool is offered on this request.
func (m *Manager) NarrowTools(ctx context.Context, step int, names []string) []string {
	keep := append([]string(nil), names...)
	for _, e := range m.list() {
		if !e.Handles(protocol.EventBeforeRequest) || configDisabled(e) {
			continue
		}
		e = m.live(ctx, e) // one restarting is waited for
		if err := e.Disabled(); err != nil {
			return nil
		}
		resp, err := m.ask(ctx, e, &pb.EventRequest{Event: protocol.EventBeforeRequest,
			Payload: &pb.EventRequest_BeforeRequest{BeforeRequest: &pb.BeforeRequest{Tools: keep, Step: uint32(step)}}})
		if err != nil {
			return nil
		}
		if !resp.GetNarrow() {
			continue
		}
		allowed := map[string]bool{}
		for _, n := range resp.GetTools() {
			allowed[n] = true
		}
		kept := keep[:0]
		for _, n := range keep {
			if allowed[n] {
				kept = append(kept, n)
			}
		}
		keep = kept
	}
	return keep
}

// configDisabled reports whether e was disabled by the user's config
// (disabled_extensions), which is not a failure: it watches nothing.
func configDisabled(e *Ext) bool {
	err := e.Disabled()
	return errors.Is(err, errDisabledInConfig) || errors.Is(err, errDisabledByUser)
}

// checkCall asks e, a tool_call watcher, about the call.
func (m *Manager) checkCall(ctx context.Context, e *Ext, call *pb.ToolCall) (*pb.EventResponse, error) {
	end := e.checking.begin(call.GetId())
	defer end()
	return m.ask(ctx, e, &pb.EventRequest{Event: protocol.EventToolCall, Payload: &pb.EventRequest_ToolCall{ToolCall: call}})
}

// stoppedWatcher is the result of a call blocked because the tool_call
// watcher name is stopped for the session (why): what is blocked and
// what the user can do, in plain words.
func stoppedWatcher(name string, why error) string {
	return fmt.Sprintf("blocked: the %s extension checks tool calls and is stopped for this session (%v), "+
		"so panto runs no tool call: it does not run a call it cannot check. %s", name, why, userCan(name))
}

// userCan says, to the model, what the user can do about the stopped
// extension name.
func userCan(name string) string {
	return fmt.Sprintf("The user can type /extensions to see the extensions, /reload to start them again, or /extensions disable %s to go on without it for this session.", name)
}

// MaxResultBytes is the longest tool result panto keeps: a longer one is
// cut to its first MaxResultBytes (on a character boundary) with a note,
// before the model, the log or any tool_result watcher sees it.
const MaxResultBytes = 1 << 20

// capResult cuts text to MaxResultBytes; truncated reports whether it did.
func capResult(text string) (out string, truncated bool) {
	if len(text) <= MaxResultBytes {
		return text, false
	}
	cut := MaxResultBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n[panto cut this result at 1 MiB: the tool returned %d bytes]", len(text)), true
}

// RunTool runs one call: tool_call watchers may block it, the owner runs
// it under the tool deadline, tool_result watchers may amend the result.
// Every failure is an is_error result.
//
// Watchers are safeguards, so they fail closed: when a tool_call watcher
// cannot be asked (it was disabled after a failure, or it crashes, times
// out or answers an error now) the call is blocked, and when a
// tool_result watcher cannot be asked the result is withheld. An
// extension disabled in the config watches nothing.
func (m *Manager) RunTool(ctx context.Context, call conversation.Block) conversation.Block {
	return m.RunToolIn(ctx, call, nil).Result
}

// Sandbox is the OS boundary one tool call's processes and writes keep
// to, as the host resolved it for the call (sdk.Sandbox on the
// extension's side; docs/permissions.md). A nil *Sandbox is off.
type Sandbox struct {
	// Mode is "read-only" or "workspace-write".
	Mode string
	// Network allows sockets other than unix ones.
	Network bool
	// WritableRoots are absolute, cleaned paths written in
	// workspace-write mode; TmpDir is written in every mode.
	WritableRoots []string
	TmpDir        string
	// Required: a call that cannot be sandboxed must not run.
	Required bool
	// UnixSockets are socket paths a process may connect to with the
	// network off.
	UnixSockets []string
}

// ToolRun is how a call ended: its result, and what the sandbox refused
// that it needed, in words ("" when nothing), for the host to offer a
// run with more room.
type ToolRun struct {
	Result         conversation.Block
	SandboxBlocked string
}

// RunToolIn is RunTool for a call that runs inside sb (nil: no sandbox);
// an extension of API v4 or older is sent no sandbox and cannot say it
// blocked anything.
func (m *Manager) RunToolIn(ctx context.Context, call conversation.Block, sb *Sandbox) ToolRun {
	var blocked string
	res := m.runTool(ctx, call, sb, &blocked)
	return ToolRun{Result: res, SandboxBlocked: blocked}
}

func (m *Manager) runTool(ctx context.Context, call conversation.Block, sb *Sandbox, blocked *string) conversation.Block {
	fail := func(format string, args ...any) conversation.Block {
		return conversation.ToolResult(call.ID, fmt.Sprintf(format, args...), true)
	}
	if why := m.blockMissing(); why != "" {
		return fail("%s", why)
	}
	pcall := &pb.ToolCall{Id: call.ID, Name: call.Name, Input: call.Input}
	for _, e := range m.list() {
		if !e.Handles(protocol.EventToolCall) || configDisabled(e) {
			continue
		}
		e = m.live(ctx, e) // one restarting is waited for
		var resp *pb.EventResponse
		err := e.Disabled()
		disabled := err != nil
		if err == nil {
			resp, err = m.checkCall(ctx, e, pcall)
			if errors.Is(err, errDied) {
				// It died during the check: the one restarted in its
				// place checks the call.
				if again := m.live(ctx, e); again != e && again.Disabled() == nil {
					e = again
					resp, err = m.checkCall(ctx, e, pcall)
				}
			}
		}
		if ctx.Err() != nil {
			return fail("not run: interrupted by the user")
		}
		if err != nil && (disabled || errors.Is(err, errDied)) {
			return fail("%s", stoppedWatcher(e.Name(), err))
		}
		if err != nil {
			return fail("blocked: the %s extension checks tool calls and could not check this one (%v); panto does not run a call it cannot check. %s",
				e.Name(), err, userCan(e.Name()))
		}
		if resp.GetBlock() {
			reason := resp.GetBlockReason()
			if reason == "" {
				reason = "no reason given"
			}
			return fail("blocked by the %s extension: %s", e.Name(), reason)
		}
	}
	e, tool := m.owner(call.Name)
	if e == nil {
		return fail("unknown tool %q; the tools available are: %s", call.Name, strings.Join(m.toolNames(), ", "))
	}
	e = m.live(ctx, e) // one restarting is waited for
	if err := e.Disabled(); err != nil {
		return fail("tool %q is unavailable: its extension %s is stopped for this session (%v)", call.Name, e.Name(), err)
	}
	if err := checkInput(call.Input); err != nil {
		return fail("invalid arguments for %s: %v", tool.GetName(), err)
	}
	if ctx.Err() != nil {
		return fail("not run: interrupted by the user")
	}
	req := &pb.ToolCallRequest{Call: pcall}
	if sb != nil {
		req.Sandbox = &pb.Sandbox{Mode: sb.Mode, Network: sb.Network, WritableRoots: sb.WritableRoots, Tmpdir: sb.TmpDir,
			Required: sb.Required, UnixSockets: sb.UnixSockets}
	}
	if err := checkSend("the call's input", req); err != nil {
		return fail("%s not run: %v", call.Name, err)
	}
	end := e.checking.begin(call.ID)
	out, ended := e.outputs.begin(call.ID)
	resp, c, err := m.callTool(ctx, e, req)
	ended()
	end()
	var result conversation.Block
	truncated, size := false, 0
	switch {
	case err == nil:
		size = len(resp.GetContent())
		var text string
		text, truncated = capResult(resp.GetContent())
		result = conversation.ToolResult(call.ID, text, resp.GetIsError())
		result = withImages(result, resp.GetImages())
		*blocked = resp.GetSandboxBlocked()
	case c.unknown != "":
		// The output it sent until then is what is known of it.
		return fail("%s", interrupted(out, c.after, c.unknown))
	case c.timedOut || status.Code(err) == codes.DeadlineExceeded:
		return fail("%s did not finish within %s", call.Name, m.opts.ToolTimeout)
	case status.Code(err) == codes.ResourceExhausted:
		// The input was checked above: what did not fit is the answer.
		return fail("%s ran, but its result is too large to carry: %s, over the %d MiB an extension's answer may be; "+
			"the result was withheld, so ask for less output (a narrower range, a filter, or the output redirected to a file)",
			call.Name, resultSize(status.Convert(err).Message()), protocol.MaxMessageSize>>20)
	case sendSide(err):
		return fail("%s not run: %v: %v", call.Name, errNotSent, status.Convert(err).Message())
	case e.crashed(err, false):
		m.opts.Logger.Debug("tool call failed", "extension", e.Name(), "tool", call.Name, "error", err)
		m.lost(e)
		if c.cancelled && out.text() != "" {
			// It died as the user interrupted the call: what it had sent
			// is what is known of it.
			return fail("%s", interrupted(out, c.after, fmt.Sprintf("its extension %s stopped working (%v) before it answered, so whether %s had any effect is not known",
				e.Name(), e.Disabled(), call.Name)))
		}
		return fail("%s failed: its extension %s stopped working (%v) before it answered, so whether the call had any effect is not known",
			call.Name, e.Name(), e.Disabled())
	default:
		err = callErr(err, false)
		m.disable(e, err)
		if c.cancelled && out.text() != "" {
			return fail("%s", interrupted(out, c.after, fmt.Sprintf("its extension %s stopped working (%v) before it answered, so whether %s had any effect is not known",
				e.Name(), err, call.Name)))
		}
		return fail("%s failed: its extension %s stopped working (%v) before it answered, so whether the call had any effect is not known",
			call.Name, e.Name(), err)
	}
	// The call has answered: what it says is what it did, and its
	// watchers check it even when the user interrupted the call while it
	// ran (each under its hook deadline), so that what the model is told
	// is neither hidden nor unchecked.
	wctx := ctx
	if c.cancelled {
		wctx = context.WithoutCancel(ctx)
	}
	for _, w := range m.list() {
		if !w.Handles(protocol.EventToolResult) || configDisabled(w) {
			continue
		}
		w = m.live(wctx, w)
		var resp *pb.EventResponse
		err := w.Disabled()
		if err == nil {
			resp, err = m.ask(wctx, w, &pb.EventRequest{Event: protocol.EventToolResult, Payload: &pb.EventRequest_ToolResult{ToolResult: &pb.ToolResult{
				Call: pcall, Content: result.ResultText(), IsError: result.IsError, Truncated: truncated, Size: uint64(size),
			}}})
		}
		if wctx.Err() != nil {
			return fail("%s ran, but its result is withheld: the user interrupted panto before the %s extension, which checks tool results, had checked it", call.Name, w.Name())
		}
		if err != nil {
			return fail("%s ran, but its result is withheld: the %s extension checks tool results and could not check this one (%v)", call.Name, w.Name(), err)
		}
		if resp.GetAmend() {
			text, _ := capResult(resp.GetContent())
			result = conversation.ToolResult(call.ID, text, resp.GetIsError())
		}
	}
	return result
}

// imageTypes are the media types a tool result's image may have: those
// both providers' image blocks take.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// withImages adds a result's images after its text; one of another type,
// or empty, is a line of text saying so instead.
func withImages(result conversation.Block, images []*pb.Image) conversation.Block {
	for _, img := range images {
		if !slices.Contains(imageTypes, img.GetMediaType()) || len(img.GetData()) == 0 {
			result.Content = append(result.Content, conversation.Text(fmt.Sprintf("[an image of type %q (%d bytes) was left out: panto takes %s]",
				img.GetMediaType(), len(img.GetData()), strings.Join(imageTypes, ", "))))
			continue
		}
		// An extension's image is fitted to the providers' limits as the
		// read tool's is: one a provider refuses would fail every later
		// request of the session.
		fitted, err := imagefit.Fit(img.GetData(), imagefit.Default)
		if err != nil {
			result.Content = append(result.Content, conversation.Text(fmt.Sprintf("[an image of type %q (%d bytes) was left out: %v]",
				img.GetMediaType(), len(img.GetData()), err)))
			continue
		}
		result.Content = append(result.Content, conversation.Image(fitted.MediaType, base64.StdEncoding.EncodeToString(fitted.Data)))
	}
	return result
}

// resultSize is the size a gRPC "message larger than max (N vs. M)"
// error gives, as "N bytes", or "of unknown size".
func resultSize(msg string) string {
	_, rest, ok := strings.Cut(msg, "larger than max (")
	n, _, _ := strings.Cut(rest, " vs.")
	if _, err := strconv.ParseUint(n, 10, 64); !ok || err != nil {
		return "of unknown size"
	}
	return n + " bytes"
}

// toolCancelGrace bounds the wait for a call's own answer once the user
// has interrupted it and panto has sent tool_cancel.
const toolCancelGrace = 3 * time.Second

// callEnd says how a CallTool ended, beyond its answer.
type callEnd struct {
	// cancelled: the user interrupted the call while it ran.
	cancelled bool
	// unknown, when set, is why the call has no answer of its own after
	// the user's interrupt: what it did is not known.
	unknown string
	// timedOut: it ran past the tool deadline.
	timedOut bool
	// after is how long the call had run when the user interrupted it.
	after time.Duration
}

// callTool runs the call in e under the tool deadline. When ctx ends
// while it runs (the user interrupts), an extension that takes
// tool_cancel is asked to stop the call and its own answer is awaited,
// at most toolCancelGrace — a write that had already made its change
// says so, one stopped before it says nothing was done — so that panto
// records what the call did, not a guess. One that does not take it has
// its call cancelled at once.
func (m *Manager) callTool(ctx context.Context, e *Ext, req *pb.ToolCallRequest) (*pb.ToolCallResponse, callEnd, error) {
	soft := e.Handles(protocol.EventToolCancel)
	base := ctx
	if soft {
		base = context.WithoutCancel(ctx) // the cancel is sent, not done to the call
	}
	tctx, cancel := context.WithTimeout(base, m.opts.ToolTimeout)
	defer cancel()
	start := time.Now()
	type answer struct {
		resp *pb.ToolCallResponse
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := e.conn.Extension.CallTool(tctx, req)
		answered <- answer{resp, err}
	}()
	hard := func(a answer) (*pb.ToolCallResponse, callEnd, error) {
		end := callEnd{cancelled: true, after: time.Since(start)}
		if a.err != nil {
			end.unknown = fmt.Sprintf("the %s extension cannot say what a call did once it is interrupted (it does not take tool_cancel), so whether %s had any effect is not known",
				e.Name(), req.GetCall().GetName())
		}
		return a.resp, end, a.err
	}
	var a answer
	select {
	case a = <-answered:
		if a.err != nil && !soft && ctx.Err() != nil {
			return hard(a) // the interrupt ended it
		}
		return a.resp, callEnd{timedOut: errors.Is(tctx.Err(), context.DeadlineExceeded)}, a.err
	case <-ctx.Done():
	}
	if !soft {
		return hard(<-answered) // tctx is done too: at once
	}
	end := callEnd{cancelled: true, after: time.Since(start)}
	grace, stop := context.WithTimeout(context.Background(), toolCancelGrace)
	defer stop()
	id := &pb.ToolCall{Id: req.GetCall().GetId(), Name: req.GetCall().GetName()}
	go func() {
		_, err := e.conn.Extension.HandleEvent(grace, &pb.EventRequest{Event: protocol.EventToolCancel, Payload: &pb.EventRequest_ToolCall{ToolCall: id}})
		if err != nil && grace.Err() == nil {
			m.opts.Logger.Debug("tool_cancel not delivered", "extension", e.Name(), "call", id.GetId(), "error", err)
		}
	}()
	select {
	case a = <-answered:
		return a.resp, end, a.err
	case <-grace.Done():
	}
	cancel()
	a = <-answered
	if a.err == nil {
		return a.resp, end, nil // it answered as it was cancelled
	}
	end.unknown = fmt.Sprintf("the %s extension did not answer within %s of the interrupt, so whether %s had any effect is not known",
		e.Name(), toolCancelGrace, req.GetCall().GetName())
	return a.resp, end, a.err
}

func (m *Manager) toolNames() []string {
	var out []string
	for _, t := range m.Tools() {
		out = append(out, t.Name)
	}
	if len(out) == 0 {
		return []string{"(none)"}
	}
	return out
}

// checkInput accepts a JSON object (or nothing, meaning {}).
func checkInput(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || !conversation.OpensObject(raw) { // null decodes into a map
		return errors.New("the input is not a JSON object")
	}
	return nil
}

// checkTools checks the tools an extension declared in Init (see
// rules.CheckTool), each name unique, so that one a provider would refuse
// fails that extension's start instead of every request of the session.
func checkTools(tools []*pb.Tool) error {
	seen := map[string]bool{}
	for _, t := range tools {
		if err := rules.CheckTool(t.GetName(), t.GetParameters()); err != nil {
			return fmt.Errorf("tool %q: %w", t.GetName(), err)
		}
		if seen[t.GetName()] {
			return fmt.Errorf("tool %q is declared twice", t.GetName())
		}
		seen[t.GetName()] = true
	}
	return nil
}

// GuidanceKey is the section key of an extension's tool guidance.
const GuidanceKey = "guidance"

// RecordGuidance sets, for each extension whose tools carry guidance, its
// section GuidanceKey listing it by tool name; nothing is recorded when
// the prompt holds exactly that already. The section goes with the
// extension: when it is not loaded, panto removes it.
func (m *Manager) RecordGuidance(rec Recorder) {
	for _, e := range m.list() {
		if e.Disabled() != nil {
			continue
		}
		tools := append([]*pb.Tool(nil), e.tools()...)
		sort.Slice(tools, func(i, j int) bool { return tools[i].GetName() < tools[j].GetName() })
		var b strings.Builder
		for _, t := range tools {
			if owner, _ := m.owner(t.GetName()); owner != e {
				continue // the model is offered another extension's tool of that name
			}
			if g := strings.TrimSpace(t.GetGuidance()); g != "" {
				fmt.Fprintf(&b, "\n\n## %s\n\n%s", t.GetName(), g)
			}
		}
		text := ""
		if b.Len() > 0 {
			text = "# Tools from the " + e.Name() + " extension" + b.String()
		}
		if err := rec.SetSection(e.Name(), GuidanceKey, text); err != nil {
			m.report(fmt.Errorf("extension %s: record tool guidance: %w", e.Name(), err))
		}
	}
}

// Variables returns the variables the extensions define, in load order;
// the first definition of a name wins.
func (m *Manager) Variables() map[string]string {
	out := map[string]string{}
	for _, e := range m.list() {
		if e.Disabled() != nil {
			continue
		}
		for k, v := range e.info.GetVariables() {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out
}
