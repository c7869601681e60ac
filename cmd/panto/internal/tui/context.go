package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/contextview"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/host"
)

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
	var live *contextview.Usage
	if m.ctxUsage != nil && m.ctxUsage.sess == m.sess {
		live = &m.ctxUsage.u
	}
	b, _ := contextview.Of(m.sess, m.sess.Info().Path, live) // a log it cannot read: the estimates alone
	return b
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
