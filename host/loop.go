package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/permissions"
	"github.com/panto-dev/panto/host/provider"
	"github.com/panto-dev/panto/serializers"
)

// ErrMaxSteps is the TurnEnd error of a turn that stopped because it
// reached max_steps. The conversation is valid: every tool call of the last
// reply has an (error) result. Send another message to go on.
var ErrMaxSteps = errors.New("the turn reached max_steps")

// ErrTruncated is wrapped by a turn's error when the provider's stream
// ended before the reply did (serializers.ErrTruncated, named here so a
// front end need not import the wire formats): nothing of the half reply
// was recorded; the messages before it were.
var ErrTruncated = serializers.ErrTruncated

// ErrBusy is returned by Turn, MoveTo, Compact and SetModel while
// another of them runs: wait for its end (the TurnEnd event, or the call
// returning) and try again.
var ErrBusy = errors.New("a turn is already running")

// ErrNoTurn is Steer's error when no turn runs to take the message.
var ErrNoTurn = errors.New("no turn is running")

// Turn records text as the user's message (after the USER_PROMPT.md
// blocks, each marked added: conversation.Message.Typed gives text back)
// and runs the agent loop: send the conversation, record the
// reply, run its tool calls (several at once, results recorded in call
// order), and send again, until a reply calls no tool or max_steps is
// reached.
//
// Turn returns at once: nil when the turn started — its events, from
// TurnStart to TurnEnd, come on every subscription (Subscribe), TurnEnd
// last — or ErrBusy while another turn, move or compaction runs, or
// ErrClosed once Close has begun; then nothing started and no event
// comes. Cancel ctx to stop the turn; Close stops it too and waits for
// it.
//
// Nothing half-done is recorded: a failed or cancelled request records no
// reply, and every recorded tool call gets a result — calls cut short get
// an "interrupted" error result — so the log stays valid and resumable.
func (s *Session) Turn(ctx context.Context, text string) error {
	return s.TurnWith(ctx, TurnInput{Text: text})
}

// TurnInput is a turn's message as TurnWith takes it.
type TurnInput struct {
	// Text is what the user typed ("/review main.go"): the message's
	// last block, what the extensions' before_turn gets and what a jump
	// back hands back.
	Text string
	// Added are texts panto puts in the message for the user (a
	// template's expansion, a skill's SKILL.md), after the USER_PROMPT.md
	// blocks and before Text, each recorded as added from its Source.
	Added []PromptBlock
	// Model, when set, is the model of this turn's requests only (a
	// template's model); the session's model is unchanged.
	Model string
	// Attached are blocks the user attached to the message (the images
	// of @shot.png, a pasted path, the clipboard): they follow Text in
	// the message, as given.
	Attached []conversation.Block
}

// TurnWith is Turn with blocks panto adds to the message and, maybe, a
// model for this turn only.
func (s *Session) TurnWith(ctx context.Context, in TurnInput) error {
	leave, err := s.ops.enter()
	if err != nil {
		return err
	}
	if !s.turnMu.TryLock() {
		leave()
		return ErrBusy
	}
	s.busy.Store(true)
	s.steerMu.Lock()
	s.turning = true
	s.steerMu.Unlock()
	ctx, release := s.ops.cut(ctx)
	go func() {
		defer leave() // Close waits for this: after TurnEnd is emitted
		end := s.runTurn(ctx, in)
		release()
		s.steerMu.Lock()
		s.turning = false
		end.Unsent, s.steering = s.steering, nil
		s.steerMu.Unlock()
		if end.Err != nil && !errors.Is(end.Err, ErrMaxSteps) {
			s.emit(Error{Err: end.Err})
		}
		// Free the session before TurnEnd is seen: a reader who got it
		// may start the next turn, move or compaction at once.
		s.busy.Store(false)
		s.turnMu.Unlock()
		s.emit(end)
	}()
	return nil
}

// Steer gives the running turn a message: it is recorded, as the user's,
// once the tool calls running now have their results, and the model
// reads it in the turn's next request. A turn that ends without another
// request (its reply called no tool, or it was stopped) returns what it
// did not deliver in TurnEnd.Unsent, for the front end to send as the
// next turn or give back to the user. ErrNoTurn when no turn runs: send
// it with Turn.
func (s *Session) Steer(text string) error {
	s.steerMu.Lock()
	defer s.steerMu.Unlock()
	if !s.turning {
		return ErrNoTurn
	}
	s.steering = append(s.steering, text)
	return nil
}

// TakeSteered returns the messages given to Steer and not delivered yet,
// and keeps them from the turn (the user takes them back to edit).
func (s *Session) TakeSteered() []string {
	s.steerMu.Lock()
	defer s.steerMu.Unlock()
	out := s.steering
	s.steering = nil
	return out
}

// deliverSteered records the messages steered into the turn since the
// last request, one user message each, and says so (Steered).
func (s *Session) deliverSteered() error {
	for _, text := range s.TakeSteered() {
		if err := s.record(Panto, conversation.UserText(text)); err != nil {
			return fmt.Errorf("record a steering message: %w", err)
		}
		s.emit(Steered{Text: text})
	}
	return nil
}

// runTurn is the turn; it returns its TurnEnd.
func (s *Session) runTurn(ctx context.Context, in TurnInput) TurnEnd {
	text := in.Text
	// The turn boundary: the tools the extensions gave since the last
	// turn are offered, and recorded, from here on.
	if err := s.applyToolChanges(); err != nil {
		return TurnEnd{Err: fmt.Errorf("record the new tools: %w", err)}
	}
	user := conversation.Message{Role: conversation.RoleUser}
	for _, up := range s.userPrompt {
		user.Content = append(user.Content, conversation.AddedText(up.Text, up.Source))
	}
	for _, a := range in.Added {
		user.Content = append(user.Content, conversation.AddedText(a.Text, a.Source))
	}
	user.Content = append(user.Content, conversation.Text(text))
	user.Content = append(user.Content, in.Attached...)
	if err := s.record(Panto, user); err != nil {
		return TurnEnd{Err: err}
	}
	s.emit(TurnStart{Text: text})
	if s.hooks != nil {
		// What the user typed, without the USER_PROMPT.md blocks.
		s.hooks.BeforeTurn(ctx, text)
	}
	ctx = provider.WithRetryHook(ctx, func(r provider.RetryInfo) {
		s.emit(Retry{Attempt: r.Attempt, Max: r.Max, Wait: r.Wait, Reason: r.Reason})
	})
	req := s.settings().request(s.id)
	if in.Model != "" {
		req.Model = in.Model
	}
	for step := 1; ; step++ {
		if s.needsCompaction() {
			if err := s.compact(ctx, true); err != nil && !errors.Is(err, ErrNothingToCompact) {
				return TurnEnd{Err: err}
			}
		}
		req.Tools = s.offer(ctx, step)
		req.Messages = s.requestMessages()
		if err := s.noteRequest(req); err != nil {
			return TurnEnd{Err: err}
		}
		streamed := false
		reply, err := s.prov.Send(ctx, req, func(d serializers.Delta) {
			switch {
			case d.Kind == serializers.DeltaText && d.Text != "":
				streamed = true
				s.emit(TextDelta{Text: d.Text})
			case d.Kind == serializers.DeltaThinking && d.Text != "":
				s.emit(ThinkingDelta{Text: d.Text})
			}
		})
		if err != nil {
			return TurnEnd{Err: turnErr(ctx, err)}
		}
		used := s.usage(reply)
		s.emit(used)
		if len(reply.Message.Content) == 0 {
			// An empty reply (a refusal, a max_tokens cut before any
			// text) is still the model's turn; record it as an empty
			// text so the conversation keeps its shape.
			reply.Message = conversation.AssistantText("")
		}
		if err := s.recordReply(reply.Message, used); err != nil {
			return TurnEnd{Err: fmt.Errorf("record reply: %w", err)}
		}
		stop := StopReason(reply.StopReason)
		s.emit(Reply{Message: reply.Message, StopReason: stop, Streamed: streamed})
		end := TurnEnd{Reply: reply.Message, StopReason: stop}
		uses := reply.Message.ToolUses()
		if len(uses) == 0 {
			if s.hooks != nil {
				s.hooks.TurnEnd(ctx, reply.Message, string(reply.StopReason))
			}
			return end
		}
		if s.maxSteps > 0 && step >= s.maxSteps {
			why := fmt.Sprintf("not run: the turn reached max_steps (%d); the user can send a message to go on", s.maxSteps)
			if err := s.record(Panto, conversation.Message{Role: conversation.RoleTool, Content: notRun(uses, why)}); err != nil {
				return TurnEnd{Reply: reply.Message, Err: fmt.Errorf("record tool results: %w", err)}
			}
			if s.hooks != nil {
				s.hooks.TurnEnd(ctx, reply.Message, string(reply.StopReason))
			}
			end.Err = fmt.Errorf("%w (%d requests)", ErrMaxSteps, step)
			return end
		}
		var results []conversation.Block
		if ctx.Err() != nil {
			results = notRun(uses, "not run: interrupted by the user")
		} else {
			results = s.runTools(ctx, uses)
		}
		if err := s.record(Panto, conversation.Message{Role: conversation.RoleTool, Content: results}); err != nil {
			return TurnEnd{Reply: reply.Message, Err: fmt.Errorf("record tool results: %w", err)}
		}
		if ctx.Err() != nil {
			return TurnEnd{Reply: reply.Message, Err: fmt.Errorf("turn stopped after its tool calls: %w", context.Cause(ctx))}
		}
		if err := s.deliverSteered(); err != nil {
			return TurnEnd{Reply: reply.Message, Err: err}
		}
	}
}

// usage is the Usage event of reply: its tokens and, when the price of
// the model that answered (or else of the one the session asked) is
// known, its cost.
func (s *Session) usage(reply serializers.Reply) Usage {
	u := reply.Usage
	ev := Usage{Model: reply.Model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens}
	if s.cost != nil {
		ev.CostUSD, ev.CostKnown = s.cost(s.providerName, reply.Model, ev)
		if m := s.modelName(); !ev.CostKnown && m != reply.Model {
			ev.CostUSD, ev.CostKnown = s.cost(s.providerName, m, ev)
		}
	}
	return ev
}

// turnErr is err, or when ctx was cancelled, why it was.
func turnErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", context.Cause(ctx), err)
	}
	return err
}

// runTools runs the tool calls of one reply, several at once, and returns
// their results in call order. Their ToolStart events come in call order
// first; then the ToolProgress events of those that send progress, and
// their ToolEnd events as they finish.
func (s *Session) runTools(ctx context.Context, uses []conversation.Block) []conversation.Block {
	results := make([]conversation.Block, len(uses))
	for _, use := range uses {
		s.emit(ToolStart{ID: use.ID, Name: use.Name, Input: use.Input})
	}
	var wg sync.WaitGroup
	for i, use := range uses {
		wg.Go(func() {
			start := time.Now()
			finish := s.beginLive(use.ID, use.Name, start)
			var res conversation.Block
			if s.tools == nil {
				res = conversation.ToolResult(use.ID, fmt.Sprintf("unknown tool %q: no tools are available", use.Name), true)
			} else {
				res = s.runCall(ctx, use)
			}
			finish()               // no ToolProgress of it after its ToolEnd
			res.ToolUseID = use.ID // whatever the runner did, the result answers this call
			results[i] = res
			text := res.ResultText()
			s.emit(ToolEnd{ID: use.ID, Name: use.Name, Input: use.Input, Result: text, Excerpt: excerpt(text, 200),
				Lines: lineCount(text), IsError: res.IsError, Duration: time.Since(start)})
		})
	}
	wg.Wait()
	return results
}

// excerpt is the first non-blank line of text, cut to n runes.
func excerpt(text string, n int) string {
	line := strings.TrimSpace(text)
	line, _, _ = strings.Cut(line, "\n")
	if r := []rune(line); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return line
}

// lineCount counts the lines of text, a final newline not starting one.
func lineCount(text string) int {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return 0
	}
	return strings.Count(text, "\n") + 1
}

// notRun answers every call with an error result saying why it did not
// run, so no tool call is left without a result in the log.
func notRun(uses []conversation.Block, why string) []conversation.Block {
	out := make([]conversation.Block, len(uses))
	for i, u := range uses {
		out[i] = conversation.ToolResult(u.ID, why, true)
	}
	return out
}

// offer returns the tools of one request, narrowed by the extensions.
func (s *Session) offer(ctx context.Context, step int) []serializers.Tool {
	if s.tools == nil {
		return nil
	}
	tools := s.tools.Tools()
	if len(tools) == 0 {
		return nil
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	keep := map[string]bool{}
	for _, n := range s.tools.NarrowTools(ctx, step, names) {
		keep[n] = true
	}
	plan := false
	if st, _, ok := s.PermissionState(); ok {
		plan = st.Mode == string(permissions.ModePlan)
	}
	out := tools[:0:0]
	for _, t := range tools {
		// Plan mode offers no tool that changes files.
		if keep[t.Name] && !(plan && permissions.Edits(t.Name)) {
			out = append(out, t)
		}
	}
	return out
}
