package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/contextview"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// requestParts is what /context needs of a session beyond Session: the
// tools offered and the messages as the next request sends them
// (*host.Session has both; a session without them shows its messages
// and no tools).
type requestParts interface {
	Tools() []sessionlog.Tools
	RequestMessages() []conversation.Message
}

// lastUsage is the provider's count of the session's last request, as
// the Usage event brought it.
type lastUsage struct {
	sess Session
	u    contextview.Usage
}

// noteUsage keeps a request's usage for /context.
func (m *Model) noteUsage(ev host.Usage) {
	m.ctxUsage = &lastUsage{sess: m.sess, u: contextview.Usage{Provider: m.status.provider, Model: ev.Model,
		Counts: contextview.Counts{InputTokens: ev.InputTokens, OutputTokens: ev.OutputTokens,
			CacheReadTokens: ev.CacheReadTokens, CacheWriteTokens: ev.CacheWriteTokens, ReasoningTokens: ev.ReasoningTokens}}}
}

// contextBreakdown is where the tokens of the session's next request go:
// /context, as panto prompt --tokens shows it. The last request's count
// is the one this run saw last, else the one the log recorded.
func (m *Model) contextBreakdown() contextview.Breakdown {
	_, window := m.sess.ContextUsage()
	r := contextview.Request{System: m.sess.EffectiveSystem(), Window: window}
	if p, ok := m.sess.(requestParts); ok {
		r.Tools, r.Messages = p.Tools(), p.RequestMessages()
	} else {
		r.Messages = m.sess.Messages()
	}
	tree, err := m.sess.Tree()
	if err != nil {
		tree = nil // not recorded: the live count alone
	}
	switch {
	case m.ctxUsage != nil && m.ctxUsage.sess == m.sess:
		u := m.ctxUsage.u
		r.Last = &u
		if tree != nil {
			r.Sent, _ = contextview.SentOf(tree, contextview.LastReply(tree, ""))
		}
	case tree != nil && m.sess.Info().Path != "":
		if u, ok, err := contextview.LastUsage(m.sess.Info().Path, tree, ""); err == nil && ok {
			if u.Provider == "" {
				u.Provider = m.sess.Info().Provider
			}
			r.Last = &u
			r.Sent, _ = contextview.SentOf(tree, u.Reply)
		}
	}
	return contextview.Compute(r)
}

// newContextPage shows a breakdown on a page, the table fitted to the
// width and the notes under it wrapped.
func newContextPage(b contextview.Breakdown) *pager {
	hint := "~" + contextview.Num(b.Estimate) + " tokens estimated for the next request"
	if b.Scaled > 0 {
		hint = "≈ " + contextview.Num(b.Scaled) + " tokens next, by the last request's real count"
	}
	p := &pager{name: "/context", hint: hint}
	p.render = func(th *theme.Theme, width int) []string {
		var out strings.Builder
		contextview.WriteWidth(&out, b, width)
		var lines []string
		for i, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
			if i == 0 {
				l = th.Bold.Render(l)
			}
			lines = append(lines, strings.Split(ansi.Wrap(l, max(10, width), ""), "\n")...)
		}
		return lines
	}
	return p
}
