// Package lineloop is panto's line-oriented front ends, beside the
// full-screen UI (package tui): print mode (-p, or a prompt piped on
// stdin: one turn or one slash command, shown as text, or with
// --mode json as one JSON object per event, json.go), and the
// interactive line loop (--plain, or when stdout is not a terminal).
// Both are thin clients of the app layer: package main loads and
// prepares an app.App, and Print or Run opens its session (app.Open),
// reads its one subscription, and turns lines into turns and commands
// (app.ParseCommand); /resume and /fork go through app.Sessions,
// app.Fork and app.Switch, /tree ID through app.Jump, like every front
// end.
//
// The parts that need no session are here too: the loop's input, read
// ahead with the time each line was typed so that type-ahead can be told
// from an answer and discarded (input.go); how an extension's question
// is shown — the whole subject escaped, the highlighted parts marked,
// the choice line last — and answered from a line (question.go, asked
// during a turn by ask.go); the yes-or-no question before an
// interactive session (confirm.go).
//
// What does not belong here: choosing or opening a session (package
// app), flags (package main), and the full-screen UI.
package lineloop
