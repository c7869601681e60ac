// Package acp is panto as an Agent Client Protocol agent (panto acp):
// an editor, or a headless client such as acpx, drives panto sessions
// over newline-delimited JSON-RPC on stdio, protocol version 1.
//
// It is one more thin front end on the app layer: each session the
// client opens (session/new, session/load) is an app.App loaded for the
// client's cwd, readied and opened as every front end opens one, and
// its events become session/update notifications. What is particular to
// ACP lives here: the mapping of tool calls to the client's kinds, titles,
// locations and diffs; the replay of a session's active branch on load;
// an extension's confirm as the client's permission request; the ordering
// the protocol asks for (no update of a session before its session/new
// response, every update of a turn before its session/prompt response).
//
// The connection itself (framing, request ids, $/cancel_request) is
// github.com/coder/acp-go-sdk's.
package acp
