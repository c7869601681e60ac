package export

import (
	"fmt"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// turnUse is what one turn's requests used: from a user message to the
// next (on its section of the document), the replies that recorded their
// usage.
type turnUse struct {
	requests int
	sum      prices.Sum
}

// turnUses works out each exported turn's tokens and cost, keyed by the
// position of the turn's last message (not a system one) in its section,
// after which both formats show it; and the document's total. Each reply is priced as the
// model the last model_change before it on its path names.
func (p *plan) turnUses() {
	entries := p.log.Entries
	model := make([]sessionlog.ModelChange, len(entries))
	for i := range entries {
		if j := p.parent[i]; j >= 0 {
			model[i] = model[j]
		}
		if mc := entries[i].ModelChange; mc != nil {
			model[i] = *mc
		}
	}
	price := func(i int) (float64, bool) {
		u := entries[i].Usage
		return p.opt.Prices.Cost(model[i].Model, prices.OfUsage(model[i].Provider, *u))
	}
	p.total.CostKnown = true
	for _, b := range p.branches {
		var cur turnUse
		cur.sum.CostKnown = true
		last := -1
		flush := func() {
			if cur.requests > 0 && last >= 0 {
				if !cur.sum.CostKnown {
					cur.sum.CostUSD = 0
				}
				if p.turns == nil {
					p.turns = map[int]turnUse{}
				}
				p.turns[last] = cur
			}
			cur = turnUse{sum: prices.Sum{CostKnown: true}}
		}
		for _, i := range b.entries {
			e := &entries[i]
			if e.Message != nil && e.Message.Role == conversation.RoleUser {
				flush()
			}
			if e.Message == nil || e.Message.Role == conversation.RoleSystem {
				continue
			}
			last = i
			if e.Usage == nil {
				continue
			}
			c, ok := price(i)
			cur.requests++
			cur.sum.Usage.Add(*e.Usage)
			cur.sum.CostUSD += c
			cur.sum.CostKnown = cur.sum.CostKnown && ok
			p.used++
			p.total.Usage.Add(*e.Usage)
			p.total.CostUSD += c
			p.total.CostKnown = p.total.CostKnown && ok
		}
		flush()
	}
	if !p.total.CostKnown {
		p.total.CostUSD = 0
	}
}

// usageText says what s used and cost: "tokens 12400 in, 230 out, 9000
// cache read, 500 cache write · $0.0412"; the cost is left out when a
// model's price is not known.
func usageText(s prices.Sum) string {
	u := s.Usage
	var sb strings.Builder
	fmt.Fprintf(&sb, "tokens %d in, %d out", u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		fmt.Fprintf(&sb, ", %d cache read, %d cache write", u.CacheReadTokens, u.CacheWriteTokens)
	}
	if s.CostKnown {
		fmt.Fprintf(&sb, " · $%.4f", s.CostUSD)
	}
	return sb.String()
}

// text is the line after a turn: "turn · 2 requests · tokens 12400 in, …".
func (t turnUse) text() string {
	return "turn · " + plural(t.requests, "request", "requests") + " · " + usageText(t.sum)
}
