package host

import (
	"encoding/json"
	"time"

	"github.com/panto-dev/panto/conversation"
)

// Event is one thing that happened in a session, for a front end to show.
// The concrete types are below; a front end switches on them and ignores
// those it does not know. Every event comes on every subscription
// (Session.Subscribe), in the order the session emitted it: a turn's from
// TurnStart to TurnEnd, and between turns an extension editing the prompt
// from the background, a notice, a move.
type Event interface {
	// Kind names the event in the JSON stream (panto --mode json).
	Kind() string
}

// TurnStart begins a turn: the user's message is recorded.
type TurnStart struct {
	// Text is what the user sent.
	Text string
}

// TextDelta is a piece of the reply's text, as it streams.
type TextDelta struct{ Text string }

// ThinkingDelta is a piece of the model's visible reasoning.
type ThinkingDelta struct{ Text string }

// Reply is one complete reply of the model, recorded. A turn that runs
// tools has one per request. A front end that showed no TextDelta for it
// (the provider did not stream) shows its text now.
type Reply struct {
	Message    conversation.Message
	StopReason StopReason
	// Streamed is set when its text came as TextDelta events.
	Streamed bool
}

// ToolStart is a tool call about to run. The calls of one reply start in
// the order the model made them, even though they run at once.
type ToolStart struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// ToolProgress is output of a running tool call, as its tool sends it
// (a command's lines, say), between the call's ToolStart and its ToolEnd
// — at most one every 100 ms per call, the output gathered in between.
// The model does not read it (the call's result, in ToolEnd, replaces
// it) unless the user interrupts the call and its tool gives no answer:
// the output so far is then its result.
type ToolProgress struct {
	ID, Name string
	// Text is the output since the call's previous ToolProgress: all of
	// it, or of a flood its last 16 KiB.
	Text string
	// Tail is the end of the output so far, its last 10 lines (of at
	// most 4 KiB): what a view of the running call shows.
	Tail string
	// Elapsed is how long the call has run.
	Elapsed time.Duration
}

// ToolEnd is a finished tool call, in the order they finish.
type ToolEnd struct {
	ID, Name string
	Input    json.RawMessage
	// Result is the whole result the model reads; Excerpt its first line,
	// cut for display, and Lines how many lines it has.
	Result  string
	Excerpt string
	Lines   int
	IsError bool
	// Duration is how long the call took.
	Duration time.Duration
}

// SystemChanged is a change of the system prompt, recorded.
type SystemChanged struct {
	// By is who changed it: an extension's name, or "panto" (the
	// configured prompt, a re-seed, a removal on an extension's behalf).
	By   string
	Mode conversation.Mode
	Key  string
	// Text is the block's text; empty with a key removes that section.
	Text string
	// Source says where the text came from, for people.
	Source string
}

// SystemRefused is a system edit panto refused: its {{variables}} did
// not render (an unknown name). Nothing was recorded.
type SystemRefused struct {
	By   string
	Mode conversation.Mode
	Key  string
	// Text is the edit's text as the extension gave it.
	Text string
	Err  error
}

// CompactionStart is the start of a compaction.
type CompactionStart struct {
	// Auto is set when the context crossed the threshold (else /compact).
	Auto bool
	// Tokens is the estimated size of the next request before it.
	Tokens int
}

// CompactionDone is the end of a compaction; Err is set when it failed
// (nothing was changed then).
type CompactionDone struct {
	// Tokens is the estimated size of the next request after it.
	Tokens int
	Err    error
}

// Retry is a model request about to be retried.
type Retry struct {
	// Attempt counts retries from 1, of Max.
	Attempt, Max int
	// Wait is how long panto waits first.
	Wait time.Duration
	// Reason is what failed.
	Reason string
}

// Usage is what one model request cost, as the provider reported it
// (0 for what it did not say).
type Usage struct {
	// Model is the model that answered, as the provider names it.
	Model string
	// InputTokens and OutputTokens count the request and the reply;
	// CacheReadTokens and CacheWriteTokens the part of the input read
	// from or written to the provider's prompt cache; ReasoningTokens
	// the reply's reasoning, where the provider counts it apart.
	InputTokens, OutputTokens         int
	CacheReadTokens, CacheWriteTokens int
	ReasoningTokens                   int
	// CostUSD is what the request cost, in dollars, when CostKnown: when
	// Config.Cost knew the model's price.
	CostUSD   float64
	CostKnown bool
}

// CostFunc returns what a request of provider's model that used u's
// tokens cost, in dollars, and false when the model's price is not
// known.
type CostFunc func(provider, model string, u Usage) (usd float64, ok bool)

// StopReason says why the model stopped, in panto's words (each provider's
// own are mapped onto these).
type StopReason string

// The stop reasons.
const (
	StopEndTurn      StopReason = "end_turn"      // the reply is complete
	StopToolUse      StopReason = "tool_use"      // the reply calls tools
	StopMaxTokens    StopReason = "max_tokens"    // cut at the token limit (Model.MaxTokens)
	StopSequence     StopReason = "stop_sequence" // a stop sequence matched
	StopRefusal      StopReason = "refusal"       // refused or filtered
	StopPauseTurn    StopReason = "pause_turn"    // a long turn paused; send a message to go on
	StopContextLimit StopReason = "context_limit" // the context window is full
	StopOther        StopReason = "other"         // anything else
)

// Notice is something a front end should show that is not part of the
// conversation: an extension that failed, a log that was repaired, or an
// extension's Notify (By names it; empty for panto's own).
type Notice struct {
	Level NoticeLevel
	Text  string
	By    string
}

// NoticeLevel says how serious a notice is.
type NoticeLevel string

// The notice levels.
const (
	NoticeInfo    NoticeLevel = "info"
	NoticeWarning NoticeLevel = "warning"
	NoticeError   NoticeLevel = "error"
)

// Error is a failure of a turn (it then ends) or of a compaction. The
// turn's TurnEnd carries it too.
type Error struct{ Err error }

// TurnEnd is a turn's last event. Err is why it stopped early, or nil
// (ErrClosed among its causes when Close cut it short); Reply is the last
// reply (empty when none was recorded).
type TurnEnd struct {
	Reply      conversation.Message
	StopReason StopReason
	Err        error
	// Unsent are the messages given to Steer that the turn ended
	// before delivering, in the order given.
	Unsent []string
}

// Steered is a message given to Steer, recorded as the user's after the
// turn's tool results: the next request carries it.
type Steered struct {
	Text string
}

// The event names of the JSON stream.
func (TurnStart) Kind() string       { return "turn_start" }
func (Steered) Kind() string         { return "steered" }
func (TextDelta) Kind() string       { return "text_delta" }
func (ThinkingDelta) Kind() string   { return "thinking_delta" }
func (Reply) Kind() string           { return "reply" }
func (ToolStart) Kind() string       { return "tool_start" }
func (ToolProgress) Kind() string    { return "tool_progress" }
func (ToolEnd) Kind() string         { return "tool_end" }
func (SystemChanged) Kind() string   { return "system_changed" }
func (SystemRefused) Kind() string   { return "system_refused" }
func (CompactionStart) Kind() string { return "compaction_start" }
func (CompactionDone) Kind() string  { return "compaction_done" }
func (Retry) Kind() string           { return "retry" }
func (Usage) Kind() string           { return "usage" }
func (Notice) Kind() string          { return "notice" }
func (Error) Kind() string           { return "error" }
func (Question) Kind() string        { return "question" }
func (QuestionClosed) Kind() string  { return "question_closed" }
func (Status) Kind() string          { return "status" }
func (TurnEnd) Kind() string         { return "turn_end" }
