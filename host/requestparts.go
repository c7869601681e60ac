package host

import (
	"strings"

	"github.com/panto-dev/panto/conversation"
)

// RequestMessages returns the conversation as the next request sends it:
// after a compaction, the system messages before its cut, its summary (a
// user message), then the messages from the cut on; a branch summary
// where it was recorded. The system messages are among them, as in the
// conversation: the wire takes their effective prompt (EffectiveSystem)
// and puts it first. For the token breakdown (panto prompt --tokens,
// /context); Summary tells the summaries apart.
func (s *Session) RequestMessages() []conversation.Message { return s.requestMessages() }

// SummaryKind is what a summary panto put into the request stands for.
type SummaryKind string

// The summaries of RequestMessages.
const (
	// NoSummary is a message of the conversation.
	NoSummary SummaryKind = ""
	// CompactionSummary stands for the messages a compaction summarised.
	CompactionSummary SummaryKind = "compaction"
	// BranchSummary stands for a branch the user left (/tree).
	BranchSummary SummaryKind = "branch"
)

// Summary says whether m, one of RequestMessages, is a summary panto
// put there, and of what.
func Summary(m conversation.Message) SummaryKind {
	if m.Role != conversation.RoleUser || len(m.Content) != 1 {
		return NoSummary
	}
	switch t := m.Content[0].Text; {
	case strings.HasPrefix(t, summaryPrefix):
		return CompactionSummary
	case strings.HasPrefix(t, branchSummaryPrefix):
		return BranchSummary
	}
	return NoSummary
}
