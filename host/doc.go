// Package host is the library that runs a panto session, for every front
// end: print mode, the line loop, --mode json and the full-screen UI are
// thin consumers of it, and an embedder (an editor's agent mode) is one
// more.
//
// # What an embedder sees
//
// Open starts a session from a Config in the documented order (the log,
// the extensions, the variables, the configured prompt seeded or
// reconciled, the sections of extensions not loaded removed, the model,
// the tool guidance, session_start). A *Session then offers:
//
//   - events: Subscribe;
//   - turns: Turn;
//   - what it is: Info, Messages, EffectiveSystem, ContextUsage,
//     MessageCount, Commands, ExtensionInfo, ExtensionStops;
//   - what it does between turns: RunCommand, Compact, SetModel (and
//     ForceModel; Models lists the names it takes);
//   - its tree: Tree, PromptAt, MoveTo, Label (and Fork, CheckMove and
//     PromptAt on a log that is not open);
//   - its end: Close.
//
// The model settings (Model), stop reasons (StopReason) and token counts
// (Usage) are host's own types: a front end never imports the wire
// formats (serializers), and host/provider says the limits a
// configuration is checked against. What the extensions call back
// (system edits, sections, questions, notices, their data) goes through
// an unexported adapter that only the extension host is given, so
// nothing outside this package can record a change in an extension's
// name.
//
// # Events
//
// Subscribe(ctx) is the one way to read a session's events — typed
// values such as TextDelta, ToolStart, SystemChanged, Question, Retry and
// TurnEnd, whose Kind names them in the JSON stream. Every subscription
// gets every event emitted while it lasts, in the order the session
// emitted it. The first subscription also gets those emitted since Open
// began — the start's SystemChanged, a repaired log's notice, an
// extension that did not start — ending with Opened; Info.Loaded says
// how many of the messages were there before the start recorded its own.
// So a front end subscribes right after Open and counts nothing.
//
// Turn returns at once: nil when the turn started, its events (TurnStart
// to TurnEnd) then coming on every subscription, TurnEnd last; or ErrBusy
// (another turn, move or compaction runs) or ErrClosed, when nothing
// started and no event comes. A front end reads one channel for
// everything, in or between turns.
//
// Each subscription has its own queue, so a slow or stopped reader never
// blocks the session or another reader: deltas that wait are merged into
// one (no text lost), a status segment replaces the one with its key that
// waits, an extension has at most 64 notices waiting (the others are
// counted, and a notice says how many), and when more than MaxPending
// other events wait the subscription ends with Overflow after what
// waited: subscribe again and read the state afresh. Cancelling the
// subscription's context ends it at once and frees its goroutine; else
// its channel closes after Close's last event. Nothing in this package
// prints: what a front end shows is what the events say.
//
// # Close
//
// Close is a state, as net/http's Server.Shutdown makes one: from its
// start every operation (Turn, MoveTo, Label, Compact, SetModel,
// ForceModel, RunCommand) fails with ErrClosed; the questions on the screen are
// withdrawn; a running turn, move or compaction is cancelled and waited
// for, so the turn records what an interrupt records (its user message,
// no half reply, an error result for each tool call cut short); then the
// extensions get session_end (what they record then is recorded) and are
// stopped, and the log is closed. From then on an extension's change
// fails with ErrClosed too: nothing is ever recorded in memory alone, and
// the log a closed session leaves is complete and resumable.
//
// # Locks
//
// The session owns the conversation and its log: every change is
// recorded (durable) before it is applied in memory, and changes are
// recorded in call order. Two locks make that so without a reader ever
// waiting on a disk: an append lock orders the changes and is held
// across a change's write and fsync; the session's lock guards the state
// in memory and is taken only briefly, to read it or to apply a change
// once written. Tree scans the log as far as its writer has acknowledged
// it, under no lock. (A move holds the append lock while it loads the new
// branch, so changes wait for it; readers do not.) An extension that
// records a change while the session is still opening waits until Open
// has set the session up, so its change follows the start's lifecycle
// entry and is rendered with every variable.
//
// The one rule that derives the system prompt is
// conversation.EffectiveSystem; this package adds reconciliation,
// sections owned by extensions (recorded again after an extension's
// replace unless it is bare: spec amendment 6), and compaction. The session depends on
// small interfaces for the model (Sender) and, unexported, for its
// extensions, so this package's tests drive sections, disposal,
// reconciliation, the open order, moves and Close with fakes.
//
// It builds on conversation, sessionlog, serializers, rules and its own
// sub-packages extension (the extension host) and provider (HTTP to the
// model providers); nothing below it imports it.
package host
