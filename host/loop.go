package host

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// ToolRunner offers tools to the model and runs their calls; the extension
// manager fits.
type ToolRunner interface {
	// Tools are the tools to offer, in order.
	Tools() []serializers.Tool
	// NarrowTools lets extensions shrink the offer of one request (step
	// counts the requests of the turn from 1); it returns the names kept.
	NarrowTools(ctx context.Context, step int, names []string) []string
	// RunTool runs one call and always returns its tool-result block: a
	// failure of any kind (unknown tool, bad input, a crashed or timed-out
	// owner, a blocked call, cancellation) is an is_error result the model
	// can read.
	RunTool(ctx context.Context, call conversation.Block) conversation.Block
}

// SetTools installs the tool runner; nil means no tools are offered.
func (s *Session) SetTools(r ToolRunner) { s.tools = r }

// SetMaxSteps bounds the model requests of one turn; 0 means no bound.
func (s *Session) SetMaxSteps(n int) { s.maxSteps = n }

// ToolObserver is told of each tool call as it starts and ends, for
// display. It may be called from several goroutines at once.
type ToolObserver interface {
	ToolStarted(call conversation.Block)
	ToolDone(call, result conversation.Block)
}

// SetToolObserver installs o; nil removes it.
func (s *Session) SetToolObserver(o ToolObserver) { s.observer = o }

// ErrMaxSteps is returned (wrapped, with the reply) when a turn stopped
// because it reached max_steps. The conversation is valid: every tool call
// of the last reply has an (error) result. Send another message to go on.
var ErrMaxSteps = errors.New("the turn reached max_steps")

// runTools runs the tool calls of one reply, several at once, and returns
// their results in call order.
func (s *Session) runTools(ctx context.Context, uses []conversation.Block) []conversation.Block {
	results := make([]conversation.Block, len(uses))
	var wg sync.WaitGroup
	for i, use := range uses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.observer != nil {
				s.observer.ToolStarted(use)
			}
			var res conversation.Block
			if s.tools == nil {
				res = conversation.ToolResult(use.ID, fmt.Sprintf("unknown tool %q: no tools are available", use.Name), true)
			} else {
				res = s.tools.RunTool(ctx, use)
			}
			res.ToolUseID = use.ID // whatever the runner did, the result answers this call
			if s.observer != nil {
				s.observer.ToolDone(use, res)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	return results
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
	out := tools[:0:0]
	for _, t := range tools {
		if keep[t.Name] {
			out = append(out, t)
		}
	}
	return out
}
