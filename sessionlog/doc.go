// Package sessionlog reads and writes panto's session log: an append-only
// JSONL file that is the source of truth of a session. Everything the
// conversation was — every message, every change of the system prompt (as
// system messages with an append or replace mode, a section's key and who
// wrote it), the model, extension state — is a line in it, and nothing is
// ever rewritten, so the prompt as of any earlier point can be rebuilt
// exactly. A message is written in its one JSON shape, conversation's.
//
// The file's first line is a Header; every later line is an Entry with an
// id and its parent's id, so the entries form a tree. The current leaf is
// the last entry of the file, and the conversation is the messages on the
// chain from the root to that leaf (Log.Messages). Moving in the tree,
// labelling entries and summarising a branch left are entries too
// (MoveEntry, LabelEntry, BranchSummaryEntry). The format, with examples,
// is in docs/session-format.md.
//
// Read and Decode parse a whole log without changing it (a reader may run
// while a writer appends). For a large log, Scan reads only its shape (a
// Tree: ids, parents, types, labels, where each line is), Load what
// resuming needs (Loaded: the system messages, the state entries and the
// messages from the latest compaction on), and Summarize a session list's
// row, which CachedSummary keeps in a derived "<log>.summary" sidecar (with
// an excerpt of the first message, never all of it). A Writer, from
// Create, Open or OpenLoaded, is the one writer of a session: it holds an
// exclusive lock on a sidecar "<log>.lock" file for its lifetime, appends
// entries with one write and one fsync per call, and repairs a last line
// torn by a crash when it opens the file. WriteNew creates a complete log
// in one step (a fork): through a temporary file that is linked into
// place only when whole (package atomicfile), so a kill never leaves part
// of one. HeaderOnly and LooksLikeLog tell, without blocking on a FIFO, a
// log with nothing to continue and a file that must not be overwritten.
//
// What does not belong here: the derivation of the effective system prompt
// (conversation.EffectiveSystem is the one implementation; the rebuilt
// messages are handed to it), resume reconciliation and seeding (the host),
// where session files live and how they are named (the CLI), and any
// provider's wire format.
package sessionlog
