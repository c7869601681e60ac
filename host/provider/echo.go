package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// echoProvider answers without a model or a network: its reply describes
// the request it was given — the effective system prompt, block by block,
// and the user's last message — so a demo or a test can see exactly what
// a real model would have been sent. The reply is deterministic.
type echoProvider struct{}

func (echoProvider) Name() string { return Echo }

func (echoProvider) Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error) {
	text := EchoReply(req.Messages)
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
		Message:       conversation.AssistantText(text),
		StopReason:    serializers.StopEndTurn,
		RawStopReason: "end_turn",
		Model:         "echo",
		Usage:         serializers.Usage{InputTokens: approxTokens(req.Messages), OutputTokens: len(text) / 4},
	}, nil
}

// EchoReply is the echo provider's reply to a conversation.
func EchoReply(msgs []conversation.Message) string {
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
		if r := []rune(first); len(r) > 72 {
			first = string(r[:69]) + "..."
		}
		fmt.Fprintf(&b, "  %d. %s\n", i+1, first)
	}
	return b.String()
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
