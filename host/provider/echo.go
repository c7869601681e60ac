package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// echoProvider answers without a model or a network: its reply describes
// the request it was given — the effective system prompt, block by block,
// and the user's last message — so a demo or a test can see exactly what
// a real model would have been sent. The reply is deterministic.
//
// It can also drive the tool loop, so an extension's tools can be run
// through the real host with no model: each line of the user's message of
// the form
//
//	tool:NAME {"json": "input"}
//
// becomes a call of tool NAME (when the request offers any tools), and the
// reply to the results describes them and ends the turn.
type echoProvider struct{}

func (echoProvider) Name() string { return Echo }

func (echoProvider) Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error) {
	msg, stop := echoMessage(req.Messages, len(req.Tools) > 0)
	text := msg.Text()
	if req.Stream && fn != nil {
		// Stream it a line at a time, as a real provider would in pieces.
		for _, line := range strings.SplitAfter(text, "\n") {
			if err := ctx.Err(); err != nil {
				return serializers.Reply{}, fmt.Errorf("echo: request cancelled: %w", err)
			}
			if line != "" {
				fn(serializers.Delta{Kind: serializers.DeltaText, Text: line})
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return serializers.Reply{}, fmt.Errorf("echo: request cancelled: %w", err)
	}
	return serializers.Reply{
		Message:       msg,
		StopReason:    stop,
		RawStopReason: string(stop),
		Model:         "echo",
		Usage:         serializers.Usage{InputTokens: approxTokens(req.Messages), OutputTokens: len(text) / 4},
	}, nil
}

// echoMessage is the echo provider's reply to a conversation and its stop
// reason. With tools offered, a user message's tool:NAME lines become tool
// calls, and a tool message gets a description of its results.
func echoMessage(msgs []conversation.Message, tools bool) (conversation.Message, serializers.StopReason) {
	if n := len(msgs); tools && n > 0 {
		switch last := msgs[n-1]; last.Role {
		case conversation.RoleUser:
			if calls, text := echoCalls(last); len(calls) > 0 {
				return conversation.Message{Role: conversation.RoleAssistant,
					Content: append([]conversation.Block{conversation.Text(text)}, calls...)}, serializers.StopToolUse
			}
		case conversation.RoleTool:
			return conversation.AssistantText(echoResults(msgs, last)), serializers.StopEndTurn
		}
	}
	return conversation.AssistantText(echoReply(msgs)), serializers.StopEndTurn
}

// echoCalls turns the tool:NAME lines of a user message into tool-use
// blocks (ids echo_1, echo_2, ...) and says what it calls. A line whose
// input is not a JSON object is called with that text as {"input": ...},
// so the tool's own validation answers.
func echoCalls(m conversation.Message) ([]conversation.Block, string) {
	var calls []conversation.Block
	var names []string
	for _, line := range strings.Split(m.Text(), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "tool:")
		if !ok {
			continue
		}
		name, input, _ := strings.Cut(rest, " ")
		if name == "" {
			continue
		}
		raw := json.RawMessage(strings.TrimSpace(input))
		if len(raw) == 0 {
			raw = json.RawMessage("{}")
		} else if !conversation.OpensObject(raw) || !json.Valid(raw) {
			raw, _ = json.Marshal(map[string]string{"input": string(raw)})
		}
		calls = append(calls, conversation.ToolUse(fmt.Sprintf("echo_%d", len(calls)+1), name, raw))
		names = append(names, name)
	}
	return calls, fmt.Sprintf("echo: calling %s\n", strings.Join(names, ", "))
}

// echoResults describes each result of a tool message: the tool, whether
// it failed, and its first line.
func echoResults(msgs []conversation.Message, results conversation.Message) string {
	names := map[string]string{}
	for _, m := range msgs {
		for _, u := range m.ToolUses() {
			names[u.ID] = u.Name
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "echo: %d tool result(s)\n", len(results.Content))
	for _, r := range results.Content {
		status := "ok"
		if r.IsError {
			status = "error"
		}
		text := strings.TrimRight(r.ResultText(), "\n")
		lines := 0
		if text != "" {
			lines = strings.Count(text, "\n") + 1
		}
		first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
		fmt.Fprintf(&b, "  %s (%s, %d line(s)): %s\n", names[r.ToolUseID], status, lines, clip(first))
	}
	return b.String()
}

// echoReply is the echo provider's description of a conversation.
func echoReply(msgs []conversation.Message) string {
	var b strings.Builder
	sys := conversation.EffectiveSystem(msgs)
	last := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == conversation.RoleUser {
			last = msgs[i].Text()
			break
		}
	}
	fmt.Fprintf(&b, "echo: you said %q\n", last)
	fmt.Fprintf(&b, "system prompt: %d block(s)\n", len(sys))
	for i, s := range sys {
		first, _, _ := strings.Cut(strings.TrimSpace(s.Text), "\n")
		fmt.Fprintf(&b, "  %d. %s\n", i+1, clip(first))
	}
	return b.String()
}

// clip shortens a line for display to 72 runes.
func clip(s string) string {
	if r := []rune(s); len(r) > 72 {
		return string(r[:69]) + "..."
	}
	return s
}

func approxTokens(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		for _, c := range m.Content {
			n += len(c.Text) + len(c.Thinking) + len(c.Input)
			for _, r := range c.Content {
				n += len(r.Text)
			}
		}
	}
	return n / 4
}
