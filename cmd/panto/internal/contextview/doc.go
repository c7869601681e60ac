// Package contextview says where the tokens of a request go: each block
// of the system prompt with its source and section key, each
// extension's tools (their schemas; their guidance is a block of the
// prompt), the conversation by role with the compaction summary apart,
// and what is left of the model's context window. Every part is an
// estimate (internal/tokens); when the provider reported the real input
// count of the last request, each part also gets its share of it.
//
// It is the one computation behind panto prompt --tokens and the full
// screen's /context. It reads a session's state and the log; it records
// nothing, and it does not draw a screen (Write gives lines of text).
package contextview
