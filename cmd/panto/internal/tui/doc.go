// Package tui is panto's full-screen terminal UI, on Charm's bubbletea v2:
// an editor, the transcript, a status line, the command palette and the
// dialogs extensions open. It is one more consumer of the host's events:
// it renders them and turns keys into calls on a Session, and it never
// runs the session's work itself (host does). It is a thin client of the
// app layer like every front end: the session, the other sessions and a
// fork come through one small interface, App (session.go; *app.App is
// one, the tests fake it), and the rules shared with the line loop are
// app's (app.ParseCommand, app.Jump, app.Switch).
//
// One root model (Model) owns small imperative components: the editor
// (editor.go), the transcript (package transcript), the status line
// (status.go), the completion popup (complete.go), the overlays — an
// extension's question (question.go), the model picker, the prompt
// viewer (overlay.go).
// Host events come in as messages read by commands from the session's
// channels (events.go); Update never blocks and never does I/O: files,
// git and the session's slower calls run in commands.
//
// The session tree (tree.go) and other sessions (sessions.go): /tree is
// a page of the tree's rows with the prompt as of the row under the
// cursor beside it; /resume a picker of this directory's sessions. A
// jump is the host's MoveTo, whose Moved event redraws the transcript
// from the new path; a fork or a resume closes the session and opens
// the other log through Options.App (app.Switch).
//
// Outside text — the model's, a tool's, a file's, a log's, an
// extension's — never reaches the terminal raw: it goes through termtext
// where it enters the UI (an event, a question, a picker's row, a
// transcript item's text, a prompt block), and every piece of the frame
// passes safeFrame (frame.go), which lets only the UI's own SGR styling
// through. What is handed back (a file name completed, a message put
// back in the editor) stays as it was. The terminal is read through
// pasteGuard (paste.go): a paste's text never ends the paste. A question
// takes keys only once it has been on screen (question.go).
//
// Adding a view: a view is an overlay — page() true takes the whole
// screen, false a box in its middle — that gets the keys while it is up
// (Model.ov). picker.Model is a list filtered as you type with a preview
// pane beside it (Preview); a preview of a conversation is a
// transcript.List of historyItems, whose View gives its last lines. What
// a view reads from the log it reads in a command; what it shows of it
// it shows through termtext (a picker's rows are, a preview's lines are
// the view's to make safe).
//
// What does not belong here: the line-mode loop and print mode (package
// lineloop), choosing or opening a session (package app), and anything
// that decides what the session does.
package tui
