// Package export writes a panto session log as a document for people: one
// self-contained HTML file to read in a browser (HTML), or Markdown to
// paste into an issue (Markdown).
//
// What both show that a transcript alone would not is the system prompt
// as conversation state: every system entry appears where it was recorded,
// as an event line that says who wrote it (the block's source) and what it
// did ("extension tools set section tools:guidance", "panto re-seed: …
// replaced the system prompt", "… removed section env:environment"), with
// its text, and the lines of the prompt it added and removed ("+1 −1
// lines", of the prompt as the model reads it: promptlog.Render). One that
// changed text that was there — removed lines, or a section updated in
// place — also has "what changed in the prompt": the diff of the prompt
// before and after it, folded in HTML (promptlog.Diff, as panto prompt
// diff shows it).
//
// # HTML
//
// One file, no network: an inline <style>, no script, no external
// stylesheet, font or image (a PNG, JPEG, GIF or WebP image is a data: URL
// of its own bytes; any other is a placeholder). Everything that folds is
// a <details> element, so the page reads the same with JavaScript off, and
// prints. Every text from the log is escaped, as element text or a
// double-quoted attribute value; the only URLs are fragments of the page's
// own ids (see markup for why the page is written by hand). Light or dark
// follows the reader's system (prefers-color-scheme).
//
// A reply's text is rendered from its Markdown (mdhtml, from the parse the
// UI's renderer walks: headings, emphasis, code, lists, quotes, tables),
// with the text as written folded after it. Raw HTML in it shows as text,
// and a link as its text with its target beside it, as words: the page
// links nowhere outside itself, so a javascript: target is harmless. A
// user's text is shown as typed.
//
// A sidebar (beside the page on a wide screen, above it on a narrow one,
// not printed) maps the page: the session tree — each exported branch,
// nested under the branch it forks from, with its user messages and its
// labelled entries — and the prompt states, each linking to its section.
//
// Each message is an <article> with its role, time, label and a link
// "prompt vN" to the system prompt in effect for it. The distinct prompt
// states are rendered once each, at the end of the page, as sections with
// the ids prompt-1, prompt-2, …, each listing its blocks with their source
// and key: the full prompt as of any message is one click away, and a
// session of many messages does not repeat it. A state is the prompt as of
// an entry, conversation.EffectiveSystem of the messages up to it; it
// changes only at system entries, and two entries whose prompts hold the
// same blocks (text, key and source) share one state. A system entry's
// event line links to the state it produced ("→ prompt v3"). Every entry
// has the id e-N, N its position in the log (1 for the first entry, which
// is the file's line 2).
//
// Thinking, tool calls (name and input) and tool results (marked when
// is_error; the whole text one click away, and an edit's or a write's
// result as its diff: numbered lines, - and +, the changed words
// marked) are collapsed; so are system texts, compaction summaries,
// extension data and entries of types this panto does not know (shown by
// type, with their raw line). Lifecycle and model changes, an extension's
// tool set (tools) and the session's name (session_info) are one-line
// events.
//
// The session tree's own entries (docs/session-format.md, "The tree"):
//
//   - The labels in effect, those of the log's label entries with the
//     latest of each target winning (sessionlog.Tree.Labels), are shown
//     next to their entries. Each label entry is an event line, "label
//     “…” on entry N" or "removed the label of entry N", that links to
//     its target and says when a later label entry replaced it.
//   - A move is a one-line event, "moved back to entry N" (or "moved to"
//     when its target is not on the branch it left), linking to its
//     target and to the entry it left; that entry, when exported, says
//     "left by the move at entry M".
//   - A branch summary is a folded block, "summary of the branch left at
//     entry N", where it stands: on the path taken instead, where the
//     model gets it as a user message.
//   - A forked session's header says which session and which entry of its
//     log it was forked from, and links to that entry, which a fork keeps
//     (id and all).
//
// A reference to an entry that is not exported (on a branch left out, or
// not in the log at all) says so instead of linking.
//
// By default the export holds the active branch: the chain from the root
// to the current leaf, the last entry of the log. With Options.All it holds
// the whole tree, one section per branch (per entry no other follows): the
// active branch first and whole, then each other branch in the file order
// of its end, starting after the entry it forks from, with a link to that
// entry (which in turn links to every branch that forks after it). A move's
// parent is its target, so the tree forks there: the branch the move left
// is a section that forks after the target. Every entry is rendered once; a
// branch reads as its fork point's branch up to the fork, then its own
// section. A section with no message of its own (a move the user left
// again before anything was said) is headed "(no messages)".
//
// # Markdown
//
// A heading per message ("### user · 10:02"), the message text as written
// (it is Markdown already), tool calls and results, thinking and system
// texts in fenced code blocks whose fence is longer than any run of
// backticks in them, system-prompt changes and other events as blockquote
// lines, and the system prompt at the end of the branch (of each branch,
// with All) at the bottom. Extension data is left out (its count is in the
// header), and so is the text of the system prompt's tool guidance, the
// NAME:guidance sections extensions record for their tools (the header
// says so; each such section is a line that says what was left out, and
// "what changed in the prompt" is the diff of the prompt without it),
// unless Options.Prompt keeps it. A message's text cannot break the document: a fence it leaves
// open is closed after it, a line that would open an HTML block is
// escaped, and a text whose fences Markdown could nest in lists or quotes
// is shown fenced instead.
//
// What the model requests used, where the replies recorded it (their
// entries' usage): after each turn's last message (a turn runs from a
// user message to the next) one line, "turn · 3 requests · tokens 12 in,
// 525 out, 9100 cache read, 5420 cache write · $0.0310", and the sum of
// what is exported in the header. Each reply is priced as the model the
// last model_change on its path names (Options.Prices: the built-in
// table under config's); the cost is left out when a price is not known.
//
// Times are shown in UTC, as the log records them.
//
// HTML and Markdown never change the log.
//
// What does not belong here: reading the log (sessionlog), the prompt
// derivation (conversation.EffectiveSystem is the one implementation),
// where the files go and the command line (cmd/panto).
package export
