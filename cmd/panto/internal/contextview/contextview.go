package contextview

import (
	"fmt"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/internal/tokens"
	"github.com/panto-dev/panto/sessionlog"
)

// Kind is what a part of a request is.
type Kind string

// The kinds of part.
const (
	// System is one block of the system prompt.
	System Kind = "system"
	// Tools is one extension's tool definitions (name, description,
	// input schema).
	Tools Kind = "tools"
	// Summary is a summary panto puts in the request: a compaction's,
	// or those of the branches left.
	Summary Kind = "summary"
	// Messages is the conversation's messages of one role.
	Messages Kind = "messages"
	// Since is what the conversation gained after the last request: its
	// reply and what came after it. Only with a last request.
	Since Kind = "since"
	// Framing is what the wire adds once to a request: the reply's
	// start, and with tools the preamble that presents them
	// (tokens.Wire.Overhead).
	Framing Kind = "framing"
)

// Request is what the next request is made of, and what the provider
// said of the last one.
type Request struct {
	// Provider is the provider the request goes to ("anthropic",
	// "openai", ...): its wire's framing is estimated (tokens.WireOf).
	// Empty: the last request's provider, if any.
	Provider string
	// System is the effective system prompt.
	System []conversation.SystemText
	// Tools are the tools offered, by extension.
	Tools []sessionlog.Tools
	// Messages are the request's messages (host.Session.RequestMessages):
	// system messages among them are left out (System has the prompt).
	Messages []conversation.Message
	// Window is the model's context window in tokens; 0 when not known.
	Window int
	// Last is the last request's usage as the provider reported it; nil
	// when none is recorded.
	Last *Usage
	// Sent is the last request as it was sent, when the log can rebuild
	// it (SentOf); nil: it is estimated as the parts of the next request
	// before the last reply (the system prompt and tools as now).
	Sent *Sent
}

// Sent is a request as it was sent: its messages (system ones among
// them) and the tools it offered.
type Sent struct {
	Messages []conversation.Message
	Tools    []sessionlog.ToolDef
}

// estimate is s's estimate on w, part by part as Compute counts them.
func (s Sent) estimate(w tokens.Wire) int {
	n := 0
	system := conversation.EffectiveSystem(s.Messages)
	for _, b := range system {
		n += w.System(b.Text)
	}
	for _, d := range s.Tools {
		n += tokens.Tool(d.Name, d.Description, d.Parameters)
	}
	n += w.Overhead(len(s.Tools) > 0)
	for _, m := range s.Messages {
		if m.Role != conversation.RoleSystem {
			n += tokens.Message(m)
		}
	}
	return n
}

// Usage is what a provider reported for one request.
type Usage struct {
	// Provider is the provider that answered (anthropic, openai, echo):
	// it says how its counts add up (RealInput).
	Provider string `json:"provider,omitempty"`
	// Model is the model that answered, when known.
	Model string `json:"model,omitempty"`
	// Reply is the id of the reply's entry in the log, when read from
	// it.
	Reply string `json:"reply,omitempty"`
	Counts
}

// Counts are a request's token counts as the provider reported them, in
// the JSON the log records them in (the usage object of a reply's
// entry). 0 is what the provider did not say.
type Counts struct {
	InputTokens      int `json:"input_tokens,omitempty"`
	OutputTokens     int `json:"output_tokens,omitempty"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// RealInput is the request's whole input as the provider counted it. On
// Anthropic's wire input_tokens leaves out what was read from or
// written to the prompt cache, so the three add up; on OpenAI's
// prompt_tokens (our input_tokens) already holds the cached part.
func (u Usage) RealInput() int {
	if u.Provider == "openai" {
		return u.InputTokens
	}
	return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// Part is one part of the request.
type Part struct {
	Kind Kind `json:"kind"`
	// Name says which: "block 2", the extension of a tool set, the role
	// of messages ("user", "assistant", "tool"), "compaction" or
	// "branch" for a summary.
	Name string `json:"name"`
	// Source is where a block came from; Key is a section's key.
	Source string `json:"source,omitempty"`
	Key    string `json:"key,omitempty"`
	// Count is how many tools or messages the part holds.
	Count int `json:"count,omitempty"`
	// Estimate is the part's tokens, estimated.
	Estimate int `json:"estimate"`
	// Guidance, for a tool set, is the estimate of the extension's tool
	// guidance, a block of the system prompt (counted there, not here).
	Guidance int `json:"guidance,omitempty"`
	// Share is the part's share of the provider's real count of the last
	// request (Breakdown.Last), in proportion to the estimates; for Since,
	// the estimate scaled as the last request's estimates were. Nil when
	// no real count is known.
	Share *int `json:"share,omitempty"`
}

// Breakdown is where the tokens of the next request go.
type Breakdown struct {
	Parts []Part `json:"parts"`
	// Estimate is the next request's estimate: the sum of Parts'.
	Estimate int `json:"estimate"`
	// Last is the last request, when a real count is recorded.
	Last *LastRequest `json:"last_request,omitempty"`
	// Scaled is the next request scaled to the real count: the last
	// request's real count and the share of what came since (0 without
	// one).
	Scaled int `json:"scaled,omitempty"`
	// Window is the model's context window (0: not known); Left what is
	// left of it after the next request (Scaled, else Estimate).
	Window int  `json:"window,omitempty"`
	Left   *int `json:"left,omitempty"`
}

// LastRequest is the last request: what the provider counted and what
// was estimated for it.
type LastRequest struct {
	Usage
	// Real is its whole input as the provider counted it (RealInput).
	Real int `json:"real"`
	// Estimate is the estimate of that request: the parts but Since (the
	// system prompt and tools as they are now). 0 when the request
	// cannot be told apart (no reply of it is among the messages: a
	// compaction summarised it).
	Estimate int `json:"estimate,omitempty"`
	// Rebuilt says Estimate is of the request as it was sent, rebuilt
	// from the log (Request.Sent), not of the parts as they are now.
	Rebuilt bool `json:"rebuilt,omitempty"`
}

// roles orders the message parts; their names are the roles.
var roles = []conversation.Role{conversation.RoleUser, conversation.RoleAssistant, conversation.RoleTool}

// Compute breaks r down.
func Compute(r Request) Breakdown {
	var b Breakdown
	provider := r.Provider
	if provider == "" && r.Last != nil {
		provider = r.Last.Provider
	}
	wire := tokens.WireOf(provider)
	tools := false
	for i, s := range r.System {
		b.Parts = append(b.Parts, Part{Kind: System, Name: fmt.Sprintf("block %d", i+1), Source: s.Source, Key: s.Key,
			Estimate: wire.System(s.Text)})
	}
	for _, set := range r.Tools {
		if len(set.Tools) == 0 {
			continue
		}
		p := Part{Kind: Tools, Name: set.Extension, Count: len(set.Tools)}
		for _, d := range set.Tools {
			p.Estimate += tokens.Tool(d.Name, d.Description, d.Parameters)
			tools = true
		}
		for _, s := range r.System {
			if s.Key == set.Extension+":"+extension.GuidanceKey {
				p.Guidance = tokens.Block(conversation.Text(s.Text))
			}
		}
		b.Parts = append(b.Parts, p)
	}

	if n := wire.Overhead(tools); n > 0 {
		b.Parts = append(b.Parts, Part{Kind: Framing, Name: "framing", Estimate: n})
	}

	var msgs []conversation.Message
	for _, m := range r.Messages {
		if m.Role != conversation.RoleSystem {
			msgs = append(msgs, m)
		}
	}
	// With a last request, its reply and what followed it are the part
	// the next request adds.
	cut := len(msgs)
	if r.Last != nil {
		cut = -1
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == conversation.RoleAssistant {
				cut = i
				break
			}
		}
	}
	summaries := map[host.SummaryKind]*Part{}
	byRole := map[conversation.Role]*Part{}
	for _, m := range msgs[:max(cut, 0)] {
		if k := host.Summary(m); k != host.NoSummary {
			if summaries[k] == nil {
				summaries[k] = &Part{Kind: Summary, Name: string(k)}
			}
			summaries[k].Count++
			summaries[k].Estimate += tokens.Message(m)
			continue
		}
		if byRole[m.Role] == nil {
			byRole[m.Role] = &Part{Kind: Messages, Name: string(m.Role)}
		}
		byRole[m.Role].Count++
		byRole[m.Role].Estimate += tokens.Message(m)
	}
	if cut < 0 {
		// No reply of the last request is left to tell it apart: every
		// message by its role.
		for _, m := range msgs {
			if byRole[m.Role] == nil {
				byRole[m.Role] = &Part{Kind: Messages, Name: string(m.Role)}
			}
			byRole[m.Role].Count++
			byRole[m.Role].Estimate += tokens.Message(m)
		}
	}
	for _, k := range []host.SummaryKind{host.CompactionSummary, host.BranchSummary} {
		if p := summaries[k]; p != nil {
			b.Parts = append(b.Parts, *p)
		}
	}
	for _, role := range roles {
		if p := byRole[role]; p != nil {
			b.Parts = append(b.Parts, *p)
		}
	}
	since := -1
	if cut >= 0 && cut < len(msgs) {
		p := Part{Kind: Since, Name: "since the last request", Count: len(msgs) - cut, Estimate: tokens.Messages(msgs[cut:])}
		since = len(b.Parts)
		b.Parts = append(b.Parts, p)
	}
	for _, p := range b.Parts {
		b.Estimate += p.Estimate
	}

	if r.Last != nil {
		b.Last = &LastRequest{Usage: *r.Last, Real: r.Last.RealInput()}
		if cut >= 0 && b.Last.Real > 0 {
			ests := make([]int, 0, len(b.Parts))
			for i, p := range b.Parts {
				if i != since {
					ests = append(ests, p.Estimate)
					b.Last.Estimate += p.Estimate
				}
			}
			if r.Sent != nil {
				if n := r.Sent.estimate(wire); n > 0 {
					b.Last.Estimate, b.Last.Rebuilt = n, true
				}
			}
			if shares := tokens.Scale(ests, b.Last.Real); shares != nil {
				j := 0
				for i := range b.Parts {
					if i == since {
						continue
					}
					b.Parts[i].Share = &shares[j]
					j++
				}
				b.Scaled = b.Last.Real
				if since >= 0 {
					s := int((int64(b.Parts[since].Estimate)*int64(b.Last.Real) + int64(b.Last.Estimate)/2) / int64(b.Last.Estimate))
					b.Parts[since].Share = &s
					b.Scaled += s
				}
			}
		}
	}
	if r.Window > 0 {
		b.Window = r.Window
		used := b.Estimate
		if b.Scaled > 0 {
			used = b.Scaled
		}
		left := r.Window - used
		b.Left = &left
	}
	return b
}

// sum adds up the parts of a kind: their estimates, and their shares
// (ok false when a part has none).
func (b Breakdown) sum(k Kind) (est, share, n int, ok bool) {
	ok = true
	for _, p := range b.Parts {
		if p.Kind != k {
			continue
		}
		n++
		est += p.Estimate
		if p.Share == nil {
			ok = false
		} else {
			share += *p.Share
		}
	}
	return est, share, n, ok && n > 0
}

// roleName is how the breakdown names the messages of a role.
func roleName(p Part) string {
	switch {
	case p.Kind == Summary && p.Name == string(host.CompactionSummary):
		return "compaction summary"
	case p.Kind == Summary:
		return "branch summaries"
	case p.Name == string(conversation.RoleUser):
		return "user messages"
	case p.Name == string(conversation.RoleAssistant):
		return "assistant replies"
	case p.Name == string(conversation.RoleTool):
		return "tool results"
	}
	return strings.TrimSpace(p.Name)
}
