// Package promptlog is the history of a session's system prompt: each
// recorded change on a path of the session tree with what it did to the
// prompt — lines added and removed, and, for a session whose requests go
// to Anthropic, an estimate of the cached tokens it made the next request
// pay for again — and the diff of the prompt between two points. panto
// prompt log and panto prompt diff print it; the export and the /tree
// navigator's prompt pane show the same counts and diffs.
//
// The prompt is compared as the model reads it: Render, the blocks'
// texts joined as the Anthropic request joins them. What does not belong
// here: reading the log (the caller hands in decoded entries) and drawing
// (each front end draws the diff its own way).
package promptlog

import (
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/provider"
	"github.com/panto-dev/panto/internal/linediff"
	"github.com/panto-dev/panto/internal/tokens"
	"github.com/panto-dev/panto/sessionlog"
)

// Context is the lines of unchanged text a prompt diff shows around each
// change.
const Context = 3

// Anthropic is the provider name whose prompt cache the estimate models.
const Anthropic = "anthropic"

// Render is the system prompt as one text, as the Anthropic request
// sends it (provider.SystemText), with a final newline, so that it
// diffs as lines.
func Render(blocks []conversation.SystemText) string {
	if s := provider.SystemText(blocks); s != "" {
		return s + "\n"
	}
	return ""
}

// Diff is the line diff of two prompts, rendered (Render), with Context
// lines around each change. Equal prompts have none.
func Diff(before, after []conversation.SystemText) []linediff.Hunk {
	return linediff.Diff(Render(before), Render(after), Context)
}

// Counts returns the lines hunks add and remove.
func Counts(hunks []linediff.Hunk) (added, removed int) {
	for _, h := range hunks {
		o, n := 0, 0
		for _, l := range h.Lines {
			switch l.Kind {
			case linediff.Delete:
				o++
			case linediff.Insert:
				n++
			}
		}
		added, removed = added+n, removed+o
	}
	return added, removed
}

// Apply returns the prompt after the system message m, given the prompt
// before it: conversation.EffectiveSystem of the prompt's blocks, each as
// the append that rebuilds it, followed by m — the same result as
// EffectiveSystem of every message up to m, in time linear in the prompt.
// (Index of the blocks it returns is not meaningful.)
func Apply(before []conversation.SystemText, m conversation.Message) []conversation.SystemText {
	msgs := make([]conversation.Message, 0, len(before)+1)
	for _, b := range before {
		msgs = append(msgs, conversation.Message{Role: conversation.RoleSystem, Content: []conversation.Block{{
			Type: conversation.TypeSystem, Text: b.Text, Mode: conversation.ModeAppend, Key: b.Key, Source: b.Source,
		}}})
	}
	return conversation.EffectiveSystem(append(msgs, m))
}

// Change is one recorded change of the system prompt: a system message
// entry, and what it did to the prompt as of its parent.
type Change struct {
	// Entry is the system message's entry id; Parent its parent's.
	Entry  string
	Parent string
	Time   time.Time
	// Message is the entry's message number on its path (from 1), as
	// panto prompt --at N counts.
	Message int
	// Source is who wrote the text (the first block's source; "" in a log
	// from before sources); Who the name describe gives it.
	Source string
	Who    string
	// Mode and Key are the first block's mode and section key; Blocks
	// how many blocks the message holds (panto writes one).
	Mode   conversation.Mode
	Key    string
	Blocks int
	// Removal is set for a keyed block with an empty text: it removes
	// its section.
	Removal bool
	// What says in words what the change did (describe.Message).
	What string
	// Added and Removed are the lines of the rendered prompt the change
	// added and removed.
	Added, Removed int
	// Before and After are the prompt as of the parent and as of the
	// entry.
	Before, After []conversation.SystemText
	// Provider is the provider the session's requests went to at the
	// change: the latest model_change before it on the path (the first
	// one after it, for the changes a session records before its first).
	Provider string
	// Invalidated estimates the tokens of the Anthropic prompt cache the
	// change invalidated. The cache holds what the last request before
	// it sent: its tools, its system prompt and its messages; a change
	// of the rendered prompt invalidates all of it
	// (host.CachedPrefix.Invalidated says why). Changes between two
	// requests share what the next one misses: the first counts it, the
	// others 0. 0 too before the first request (nothing was cached), and
	// a compaction after the last request leaves its messages out (it
	// had invalidated them already).
	// Meaningful only when Cached.
	Invalidated int
	// Cached is set when Provider is Anthropic: Invalidated is an
	// estimate of a cache that provider keeps.
	Cached bool
}

// summaryPrefix and branchSummaryPrefix start the user messages a
// request sends for a compaction's summary and a branch summary (as the
// host writes them); only their length matters here.
const (
	summaryPrefix       = "[Summary of the earlier conversation, written when it was compacted]\n\n"
	branchSummaryPrefix = "[The user went back to an earlier point of this conversation and continues from here. A summary of the branch they left, so you know what was tried there:]\n\n"
)

// counted is a message of the request and its estimated tokens.
type counted struct {
	id string
	n  int
}

// Path returns the changes of the system prompt on a path of the tree:
// entries are the path's entries from the root, decoded, in order (what
// Tree.Entries of Tree.Chain gives). The messages' tokens are estimated
// with package tokens, the request's messages as the host builds them (a
// compaction's summary and the messages it kept; a branch summary where
// it stands). A message entry left undecoded (Message nil) counts as a
// message with no tokens: a caller that needs no estimate (no request
// went to Anthropic) decodes only the system messages and the entries of
// other types.
func Path(entries []sessionlog.Entry) []Change {
	var out []Change
	var prompt []conversation.SystemText
	var req []counted
	provider, messages := "", 0
	// What the cache holds: the prompt and the messages' tokens of the
	// last request (sent, for each reply); msgsValid while the prompt is
	// still as it sent it, and no compaction came after.
	var cached host.CachedPrefix
	valid := false
	tools := 0 // the tools the last request_settings recorded
	for i := range entries {
		e := &entries[i]
		switch {
		case e.Type == sessionlog.TypeModelChange && e.ModelChange != nil:
			provider = e.ModelChange.Provider
		case e.Type == sessionlog.TypeRequestSettings && e.RequestSettings != nil:
			tools = 0
			for _, t := range e.RequestSettings.Tools {
				tools += tokens.Tool(t.Name, t.Description, t.Parameters)
			}
		case e.Type == sessionlog.TypeCompaction && e.Compaction != nil:
			kept := req // one that names no message of the path keeps all
			for k, c := range req {
				if c.id != "" && c.id == e.Compaction.FirstKeptID {
					kept = req[k:]
					break
				}
			}
			req = append([]counted{{"", tokens.Message(conversation.UserText(summaryPrefix + e.Compaction.Summary))}}, kept...)
			cached.Messages = 0 // the next request's messages start another way
		case e.Type == sessionlog.TypeBranchSummary && e.BranchSummary != nil:
			req = append(req, counted{"", tokens.Message(conversation.UserText(branchSummaryPrefix + e.BranchSummary.Summary))})
		case e.Type == sessionlog.TypeMessage && e.Message == nil:
			messages++ // left undecoded: counted, no tokens (see Path)
		case e.Type == sessionlog.TypeMessage:
			messages++
			m := e.Message
			if m.Role != conversation.RoleSystem {
				if m.Role == conversation.RoleAssistant {
					// A reply: the request before it was sent, and cached.
					cached, valid = host.CachedPrefix{Tools: tools, System: tokens.Text(Render(prompt))}, true
					for _, r := range req {
						cached.Messages += r.n
					}
				}
				req = append(req, counted{e.ID, tokens.Message(*m)})
				continue
			}
			after := Apply(prompt, *m)
			c := Change{Entry: e.ID, Parent: e.ParentID, Time: e.Time, Message: messages,
				What: describe.Message(*m), Before: prompt, After: after, Provider: provider}
			for _, b := range m.Content {
				if b.Type != conversation.TypeSystem {
					continue
				}
				if c.Blocks == 0 {
					d := describe.FromBlock(b)
					c.Source, c.Who, c.Mode, c.Key = b.Source, d.Who(), b.Mode, b.Key
					c.Removal = b.Key != "" && b.Text == ""
				}
				c.Blocks++
			}
			if c.Mode == "" {
				c.Mode = conversation.ModeAppend
			}
			c.Added, c.Removed = Counts(Diff(prompt, after))
			if valid && Render(after) != Render(prompt) {
				c.Invalidated, valid = cached.Invalidated(), false
			}
			out = append(out, c)
			prompt = after
		}
	}
	// The changes recorded before the first model_change (a session's
	// seed) were sent to that first provider.
	first := provider
	for i := range entries {
		if e := &entries[i]; e.Type == sessionlog.TypeModelChange && e.ModelChange != nil {
			first = e.ModelChange.Provider
			break
		}
	}
	for i := range out {
		if out[i].Provider == "" {
			out[i].Provider = first
		}
		out[i].Cached = out[i].Provider == Anthropic
		if !out[i].Cached {
			out[i].Invalidated = 0
		}
	}
	return out
}
