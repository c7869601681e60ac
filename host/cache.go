package host

import (
	"fmt"
	"strings"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/tokens"
)

// A provider's prompt cache holds the prefix of a recent request (tools,
// system prompt, conversation) for a few minutes. A change of the system
// prompt changes that prefix from the system prompt on: the next request
// sends the system prompt and the whole conversation uncached, and the
// provider writes them to its cache again. The session estimates what a
// change would cost (CacheRisk) and warns when one costs more than
// Config.CacheWarnTokens.

// CacheTTL is how long a provider keeps a prefix cached after it was
// last used: Anthropic's default, and about what OpenAI keeps one
// through a quiet spell.
const CacheTTL = 5 * time.Minute

// DefaultCacheWarnTokens is the cached tokens a change of the system
// prompt must invalidate for the session to warn, when
// Config.CacheWarnTokens is 0.
const DefaultCacheWarnTokens = 10000

// CachedPrefix is what a provider's prompt cache holds of the last
// request, in estimated tokens (internal/tokens): its tools, its system
// prompt and its messages.
type CachedPrefix struct {
	Tools, System, Messages int
}

// Invalidated is what a change of the system prompt invalidates of p:
// all of it. The tools come first in the request and the system prompt
// after them, sent on Anthropic's wire as one block under one cache
// mark (serializers/anthropic): a change anywhere in it leaves no
// shorter prefix cached to read from, so the next request sends the
// tools, the system prompt and the conversation uncached, and the
// provider writes them to its cache again. (OpenAI's automatic cache
// keeps what comes before the change; this is the bound both share.)
// The session's warning (CacheRisk) and panto prompt log both count it
// so.
func (p CachedPrefix) Invalidated() int { return p.Tools + p.System + p.Messages }

// CacheRisk is what a change of the system prompt made now would cost
// the provider's prompt cache.
type CacheRisk struct {
	// Tokens estimates the cached tokens the change would invalidate:
	// the tools, the system prompt and the conversation as the next
	// request sends them (internal/tokens); 0 when nothing is likely cached (no reply
	// on this branch within CacheTTL, or a provider with no cache).
	Tokens int
	// LastReply is when the branch's last reply came; zero when none.
	LastReply time.Time
}

// CacheRisk estimates what a change of the system prompt made now would
// invalidate of the provider's prompt cache.
func (s *Session) CacheRisk() CacheRisk {
	if p, ok := s.prov.(interface{ Name() string }); !ok || p.Name() == "echo" {
		return CacheRisk{}
	}
	s.mu.Lock()
	var last time.Time
	found := false
	for i := len(s.entries) - 1; i >= 0; i-- {
		if m := s.entries[i].Message; m != nil && m.Role == conversation.RoleAssistant {
			last, found = s.entries[i].Time, true
			break
		}
	}
	msgs := s.requestMessagesLocked()
	s.mu.Unlock()
	if !found {
		return CacheRisk{}
	}
	r := CacheRisk{LastReply: last}
	// An entry kept in memory only (no log) has no time: it is this
	// run's, so recent.
	if last.IsZero() || time.Since(last) < CacheTTL {
		var p CachedPrefix
		for _, m := range msgs {
			if m.Role == conversation.RoleSystem {
				p.System += tokens.Message(m)
			} else {
				p.Messages += tokens.Message(m)
			}
		}
		if s.tools != nil {
			for _, t := range s.tools.Tools() {
				p.Tools += tokens.Tool(t.Name, t.Description, t.Parameters)
			}
		}
		r.Tokens = p.Invalidated()
	}
	return r
}

// warnCacheLocked warns, once between two requests, when the system
// blocks of msgs that by just recorded invalidate more cached tokens
// than the threshold. The caller holds s.wmu.
func (s *Session) warnCacheLocked(by string, msgs []conversation.Message) {
	if s.cacheWarn < 0 || s.cacheWarned.Load() {
		return
	}
	var what string
	for _, m := range msgs {
		if m.Role == conversation.RoleSystem && len(m.Content) > 0 {
			what = changeWords(by, m.Content[0])
			break
		}
	}
	if what == "" {
		return
	}
	limit := s.cacheWarn
	if limit == 0 {
		limit = DefaultCacheWarnTokens
	}
	r := s.CacheRisk()
	if r.Tokens < limit {
		return
	}
	s.cacheWarned.Store(true)
	s.notice(NoticeWarning, fmt.Sprintf("%s: that invalidates about %s cached tokens (the tools, the system prompt and the conversation), which the next request sends uncached and the provider caches again",
		what, kTokens(r.Tokens)))
}

// changeWords says what a recorded system block did, and who did it.
func changeWords(by string, b conversation.Block) string {
	who := "panto"
	if by != Panto && by != "" {
		who = "the " + by + " extension"
	}
	switch {
	case by == Panto && b.Mode.Normalize() == conversation.ModeReplace && strings.HasPrefix(b.Source, ReseedSource):
		return "the prompt files changed, so panto re-seeded the system prompt"
	case b.Key != "":
		return fmt.Sprintf("%s updated the section %s of the system prompt", who, b.Key)
	case b.Mode.Normalize() == conversation.ModeReplace:
		return who + " replaced the system prompt"
	default:
		return who + " added to the system prompt"
	}
}

// kTokens writes n tokens as people read them: 950, 23k, 1.2M.
func kTokens(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
	return fmt.Sprint(n)
}
