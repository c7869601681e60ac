// Package host is the library that runs a panto session, for every front
// end: print mode, the line loop, --mode json and the full-screen UI are
// thin consumers of it.
//
// Open starts a session from a Config in the documented order (the log,
// the extensions, the variables, the configured prompt seeded or
// reconciled, the sections of extensions not loaded removed, the model,
// the tool guidance, session_start). Session.Turn runs one turn of the
// agent loop and returns its events — typed values such as TextDelta,
// ToolStart, SystemChanged, Retry and TurnEnd — on a channel; the events
// between turns come on Session.Events. Close ends the session. Nothing in
// this package prints: what a front end shows is what the events say.
//
// The session owns the conversation and its log: every change is
// recorded (durable) before it is applied in memory, under one lock. The
// one rule that derives the system prompt is conversation.EffectiveSystem;
// this package adds reconciliation, sections owned by extensions, and
// compaction.
//
// It builds on conversation, sessionlog, serializers, rules and its own
// sub-packages extension (the extension host) and provider (HTTP to the
// model providers); nothing below it imports it.
package host
