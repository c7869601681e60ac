// Package lineloop holds the parts of panto's line loop (the interactive
// session without the full-screen UI) that need no session: its input,
// read ahead with the time each line was typed, so that type-ahead can be
// told from an answer and discarded; and how it shows an extension's
// question — the whole subject escaped, the highlighted parts marked, the
// choice line last — and reads the answer from a line. The loop itself,
// which runs turns and commands, is in package main (chat.go,
// linequestion.go); nothing here writes to a terminal.
package lineloop
