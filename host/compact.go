package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// Compaction configures when and how older messages are summarised.
type Compaction struct {
	// Model summarises; empty means the turn's model.
	Model string
	// Window is the model's context window in tokens; 0 turns automatic
	// compaction off (/compact still works).
	Window int
	// Threshold is the share of Window at which a request triggers
	// compaction first (0.8: at 80%).
	Threshold float64
	// KeepTokens is roughly how much of the recent conversation stays
	// verbatim.
	KeepTokens int
}

// ErrNothingToCompact is returned by Compact when the conversation is too
// short to summarise anything.
var ErrNothingToCompact = errors.New("nothing to compact: the conversation is shorter than what is kept")

// summaryPrefix starts the user message that stands for the summarised
// messages in requests.
const summaryPrefix = "[Summary of the earlier conversation, written when it was compacted]\n\n"

// compactionPrompt is the system prompt of the summarising request.
const compactionPrompt = `You summarise a conversation between a user and a coding agent so the agent can continue the work without the full transcript.
Keep: the user's goals and constraints, decisions made and why, files and commands involved, the current state of the work, open questions and next steps.
Drop: pleasantries, superseded attempts, full file contents and long tool output. Write plain prose and short lists; no preamble.`

// requestMessages is the conversation as requests send it: when compacted,
// the system messages before the cut (never summarised away, so the
// effective system prompt is unchanged), the summary, then every message
// from the cut on. The caller holds s.mu.
func (s *Session) requestMessagesLocked() []conversation.Message {
	return requestMessagesOf(s.conv.Messages, s.notes, s.summary, s.keptFrom)
}

// requestMessagesOf is the conversation msgs as requests send it, with
// the branch summaries notes and the compaction summary that stands for
// msgs[:keptFrom] ("" for none).
func requestMessagesOf(msgs []conversation.Message, notes []branchNote, summary string, keptFrom int) []conversation.Message {
	from := 0
	out := make([]conversation.Message, 0, len(msgs)-keptFrom+len(notes)+8)
	if summary != "" {
		for _, m := range msgs[:keptFrom] {
			if m.Role == conversation.RoleSystem {
				out = append(out, m)
			}
		}
		out = append(out, conversation.UserText(summaryPrefix+summary))
		from = keptFrom
	}
	// A branch summary stands where it was recorded, as a user message;
	// one before the compaction's cut went with the messages it followed.
	for len(notes) > 0 && notes[0].at < from {
		notes = notes[1:]
	}
	for i := from; i < len(msgs); i++ {
		for len(notes) > 0 && notes[0].at == i {
			out = append(out, conversation.UserText(branchSummaryPrefix+notes[0].text))
			notes = notes[1:]
		}
		out = append(out, msgs[i])
	}
	for _, n := range notes {
		out = append(out, conversation.UserText(branchSummaryPrefix+n.text))
	}
	return out
}

// requestMessages returns the conversation as the next request sends it.
func (s *Session) requestMessages() []conversation.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requestMessagesLocked()
}

// approxTokens estimates tokens at four bytes each.
func approxTokens(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Thinking) + len(b.Input) + 16
			for _, c := range b.Content {
				n += len(c.Text)
			}
		}
	}
	return n / 4
}

// needsCompaction reports whether the next request would cross the
// threshold.
func (s *Session) needsCompaction() bool {
	c := s.compaction
	if c.Window <= 0 || c.Threshold <= 0 {
		return false
	}
	return float64(approxTokens(s.requestMessages())) >= c.Threshold*float64(c.Window)
}

// cutLocked picks where the kept messages start: the start of a user turn
// (a user message, so no tool call is split from its result) such that
// about KeepTokens of the conversation stay verbatim, after the previous
// cut. -1 when there is nothing before it worth summarising.
func (s *Session) cutLocked() int {
	msgs := s.conv.Messages
	keep := max(s.compaction.KeepTokens, 1)
	tokens := 0
	cut := len(msgs)
	for i := len(msgs) - 1; i > s.keptFrom; i-- {
		tokens += approxTokens(msgs[i : i+1])
		if msgs[i].Role == conversation.RoleUser {
			cut = i
			if tokens >= keep {
				break
			}
		}
	}
	// Something other than system messages must be summarised.
	for _, m := range msgs[s.keptFrom:min(cut, len(msgs))] {
		if m.Role != conversation.RoleSystem {
			return cut
		}
	}
	return -1
}

// CompactResult says what a compaction changed.
type CompactResult struct {
	// MessagesBefore and MessagesAfter count the messages the next
	// request sends, before and after.
	MessagesBefore, MessagesAfter int
}

// Compact summarises the older messages now (/compact), between turns:
// it records a compaction entry, and the next requests send the summary in
// place of those messages. The messages stay in the log, and the effective
// system prompt is unchanged. Its CompactionStart and CompactionDone
// events come on the subscriptions. It fails with ErrBusy while a turn
// runs, ErrClosed once Close has begun (Close cancels one that runs).
func (s *Session) Compact(ctx context.Context) (CompactResult, error) {
	ctx, done, err := s.exclusive(ctx)
	if err != nil {
		return CompactResult{}, err
	}
	defer done()
	before := len(s.requestMessages())
	if err := s.compact(ctx, false); err != nil {
		return CompactResult{}, err
	}
	return CompactResult{MessagesBefore: before, MessagesAfter: len(s.requestMessages())}, nil
}

// compact summarises the messages before the cut with the session's
// provider and records a compaction entry; auto says the threshold was
// crossed (else the user asked). The summarising request uses the
// compaction model, when set, and no tools.
func (s *Session) compact(ctx context.Context, auto bool) error {
	s.mu.Lock()
	cut := s.cutLocked()
	if cut < 0 || cut >= len(s.conv.Messages) {
		s.mu.Unlock()
		return ErrNothingToCompact
	}
	before := approxTokens(s.requestMessagesLocked())
	previous, pieces := s.summary, transcriptPieces(s.conv.Messages[s.keptFrom:cut])
	s.mu.Unlock()

	s.emit(CompactionStart{Auto: auto, Tokens: before})
	err := s.summarise(ctx, cut, before, previous, pieces)
	done := CompactionDone{Err: err}
	if err == nil {
		done.Tokens = approxTokens(s.requestMessages())
	}
	s.emit(done)
	return err
}

func (s *Session) summarise(ctx context.Context, cut, before int, previous string, pieces []string) error {
	// A summary is asked once, of a transcript no later request
	// shares: a cache mark would only pay the write premium.
	req := s.settings().request("")
	if s.compaction.Model != "" {
		req.Model = s.compaction.Model
	}
	req.Tools, req.ToolChoice, req.ThinkingBudget, req.Cache = nil, serializers.ToolChoice{}, 0, serializers.Cache{}
	summary, err := s.summariseInPieces(ctx, req, compactionAsk, previous, pieces)
	switch {
	case errors.Is(err, errEmptySummary):
		return errors.New("compact: the model returned an empty summary; nothing was changed")
	case err != nil:
		return fmt.Errorf("compact: summarise: %w", err)
	}

	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	first := ""
	if cut < len(s.msgIDs) {
		first = s.msgIDs[cut]
	}
	s.mu.Unlock()
	apply := func() { s.summary, s.keptFrom = summary, cut }
	if s.w == nil {
		if s.shut {
			return fmt.Errorf("compact: %w", ErrClosed)
		}
		s.mu.Lock()
		apply()
		s.mu.Unlock()
		return nil
	}
	if first == "" {
		return errors.New("compact: the first kept message has no log entry")
	}
	if err := s.writeLocked([]sessionlog.Entry{sessionlog.CompactionEntry(summary, first, before)}, apply); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}

// transcriptPieces renders messages as plain text for the summariser, a
// piece per block worth summarising. Long tool output is cut.
func transcriptPieces(msgs []conversation.Message) []string {
	var out []string
	clip := func(s string, n int) string {
		if len(s) > n {
			return s[:n] + " [...]"
		}
		return s
	}
	for _, m := range msgs {
		for _, blk := range m.Content {
			switch blk.Type {
			case conversation.TypeText:
				if blk.Text != "" {
					out = append(out, fmt.Sprintf("%s: %s\n\n", roleName(m.Role), clip(blk.Text, 4000)))
				}
			case conversation.TypeToolUse:
				out = append(out, fmt.Sprintf("Assistant called %s with %s\n\n", blk.Name, clip(string(blk.Input), 1000)))
			case conversation.TypeToolResult:
				out = append(out, fmt.Sprintf("Result of that call: %s\n\n", clip(blk.ResultText(), 1500)))
			}
		}
	}
	return out
}

// summaryRequest is the summarising request of one piece of the
// transcript, after the summary of what came before it.
func summaryRequest(req serializers.Request, ask summaryAsk, previous, transcript string) serializers.Request {
	var b strings.Builder
	if previous != "" {
		b.WriteString("Summary of what came before:\n" + previous + "\n\n")
	}
	b.WriteString(transcript)
	req.Messages = []conversation.Message{
		conversation.SystemMessage(ask.system, conversation.ModeAppend),
		conversation.UserText(ask.lead + b.String()),
	}
	return req
}

// summaryAsk is what a summarising request asks: its system prompt, and
// the words before the transcript.
type summaryAsk struct{ system, lead string }

var (
	compactionAsk    = summaryAsk{compactionPrompt, "Summarise this conversation:\n\n"}
	branchSummaryAsk = summaryAsk{branchSummaryPrompt, "Summarise this branch:\n\n"}
)

// errEmptySummary is a summarising request's empty reply.
var errEmptySummary = errors.New("the model returned an empty summary")

// summaryReserve is what a summarising request leaves of the window for
// the reply when the model settings set no MaxTokens.
const summaryReserve = 4096

// summariseInPieces asks for the summary of previous (the last
// compaction's summary, or "") and pieces, in as many requests as it
// takes for each to fit the context window: each request holds the
// summary so far and as much of the rest as fits, and its reply is the
// summary the next one starts from. The last reply is the summary. A
// window of 0 (not known) sends it all in one request.
func (s *Session) summariseInPieces(ctx context.Context, req serializers.Request, ask summaryAsk, previous string, pieces []string) (string, error) {
	limit := 0 // bytes of previous summary and transcript a request may hold
	if w := s.compaction.Window; w > 0 {
		// The reply's room: max_tokens, at most a quarter of the window
		// (a summary needs no more; the request's max_tokens is cut to
		// it, so input and reply fit the window together).
		reserve := min(summaryReserve, w/4)
		if req.MaxTokens > 0 {
			reserve = min(req.MaxTokens, w/4)
			req.MaxTokens = reserve
		}
		overhead := approxTokens(summaryRequest(req, ask, "", "").Messages)
		// The estimate is of four bytes a token; code and other languages
		// take more tokens a byte: a quarter of the room is kept for that.
		limit = (w - reserve - overhead) * 4 * 3 / 4
		if limit < 256 {
			return "", fmt.Errorf("a context window of %d tokens leaves no room for a summarising request", w)
		}
	}
	summary := previous
	rest := pieces
	for first := true; first || len(rest) > 0; first = false {
		var chunk strings.Builder
		if limit > 0 {
			if len(summary) > limit/2 {
				// A summary this long would leave no room to go on with:
				// its start is kept.
				summary = summary[:limit/2] + " [...]"
			}
			room := limit - len(summary)
			for len(rest) > 0 {
				p := rest[0]
				if chunk.Len()+len(p) > room {
					if chunk.Len() > 0 {
						break
					}
					// One piece longer than a request holds: it goes in
					// parts.
					cutAt := room
					for cutAt > 0 && !utf8.RuneStart(p[cutAt]) {
						cutAt--
					}
					chunk.WriteString(p[:cutAt])
					rest[0] = p[cutAt:]
					break
				}
				chunk.WriteString(p)
				rest = rest[1:]
			}
		} else {
			for _, p := range rest {
				chunk.WriteString(p)
			}
			rest = nil
		}
		reply, err := s.prov.Send(ctx, summaryRequest(req, ask, summary, chunk.String()), nil)
		if err != nil {
			return "", err
		}
		summary = strings.TrimSpace(reply.Message.Text())
		if summary == "" {
			return "", errEmptySummary
		}
	}
	return summary, nil
}

func roleName(r conversation.Role) string {
	switch r {
	case conversation.RoleAssistant:
		return "Assistant"
	case conversation.RoleSystem:
		return "System"
	}
	return "User"
}

// ContextUsage says how full the context is: the next request's
// estimated size in tokens, and the model's window (0 when not known).
// The estimate is the one automatic compaction uses (about 4 bytes a
// token); a provider's Usage event gives the exact count after a request.
func (s *Session) ContextUsage() (tokens, window int) {
	return approxTokens(s.requestMessages()), s.compaction.Window
}
